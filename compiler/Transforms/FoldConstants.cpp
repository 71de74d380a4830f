//===- FoldConstants.cpp - computations on constants done at compile time -===//
//
// An op whose operands are all constants computes the same value on every
// run: this pass evaluates it once, with the reference interpreter (the
// one definition of every op's semantics), and replaces it with a
// graph.constant. The ONNX importer does the same for each node as it
// converts it (OnnxImport.cpp), so that ops taking a shape see a constant.
//
//===----------------------------------------------------------------------===//

#include "compiler/Reference/Interpreter.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

namespace modelc {
#define GEN_PASS_DEF_FOLDCONSTANTSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct FoldConstantsPass
    : public modelc::impl::FoldConstantsPassBase<FoldConstantsPass> {
  using FoldConstantsPassBase::FoldConstantsPassBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      SmallVector<Operation *> ops;
      for (Operation &op : function.getBody().front())
        ops.push_back(&op);
      // In block order: a folded result is a constant for the ops after it.
      for (Operation *op : ops) {
        if (!isFoldableOnConstants(op, maxElements) ||
            !llvm::all_of(op->getOperands(), [](Value v) {
              return v.getDefiningOp<ConstantOp>() != nullptr;
            }))
          continue;
        FailureOr<SmallVector<DenseElementsAttr>> folded =
            foldOnConstants({op}, op->getResults());
        if (failed(folded))
          continue;
        OpBuilder builder(op);
        Value constant =
            ConstantOp::create(builder, op->getLoc(), folded->front());
        op->getResult(0).replaceAllUsesWith(constant);
        llvm::SetVector<Operation *> operands;
        for (Value v : op->getOperands())
          operands.insert(v.getDefiningOp());
        op->erase();
        for (Operation *def : operands)
          if (def->use_empty())
            def->erase();
      }
    }
  }
};

} // namespace
