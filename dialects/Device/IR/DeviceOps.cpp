//===- DeviceOps.cpp - device dialect operations ----------------*- C++ -*-===//

#include "dialects/Device/IR/DeviceOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace modelc::device;

#define GET_OP_CLASSES
#include "dialects/Device/IR/DeviceOps.cpp.inc"

LogicalResult TransferOp::verify() {
  if (getSource() == getTarget())
    return emitOpError("transfers a value from device '")
           << getSource().str() << "' to itself";
  return success();
}

namespace {
/// transfer(transfer(x, a -> b), b -> c) ==> transfer(x, a -> c), or x when
/// c == a: the intermediate copy on b carries nothing the result needs.
struct FoldTransferOfTransfer : OpRewritePattern<TransferOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransferOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<TransferOp>();
    if (!producer)
      return failure();
    if (producer.getSource() == op.getTarget()) {
      rewriter.replaceOp(op, producer.getInput());
      return success();
    }
    rewriter.replaceOpWithNewOp<TransferOp>(
        op, producer.getInput(), producer.getSource(), op.getTarget());
    return success();
  }
};
} // namespace

void TransferOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                             MLIRContext *context) {
  patterns.add<FoldTransferOfTransfer>(context);
}
