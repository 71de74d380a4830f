//===- GraphCanonicalize.cpp - folders and canonicalization patterns ------===//

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace modelc::graph;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [index, p] : llvm::enumerate(getPerm()))
    if (p != static_cast<int64_t>(index))
      return {};
  return getInput();
}

/// Nothing dropped: the input itself. (A dropout in eval mode, without a
/// step, stays: modelc-training-mode may give it one; until then it is a
/// view of its input, graph::getViewOffset.)
OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getRatio().isZero())
    return getInput();
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // (Cut to a dimension's size, graph.dims: whole only at the max.)
  if (getInput().getType() == getType() && !(*this)->hasAttr(kDimsAttrName))
    return getInput();
  return {};
}

namespace {
/// neg(neg(x)) ==> x
struct FoldDoubleNegation : OpRewritePattern<NegOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NegOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<NegOp>();
    if (!inner)
      return failure();
    rewriter.replaceOp(op, inner.getInput());
    return success();
  }
};

/// reshape(reshape(x)) ==> reshape(x): only the final shape matters.
struct MergeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(inner.getInput()); });
    return success();
  }
};

/// reshape(x) with a -1 entry ==> the same reshape with the entry resolved,
/// so that equal reshapes print and compare equal.
struct ResolveReshapeShape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> resolved = op.getType().getShape();
    if (op.getShape() == resolved)
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.setShape(resolved); });
    return success();
  }
};

/// Replaces `op` by a reshape of `input` to `op`'s result type, keeping its
/// device pin and other discardable attributes (read before `op` is erased).
static void replaceWithReshape(Operation *op, Value input,
                               PatternRewriter &rewriter) {
  DictionaryAttr attributes = op->getDiscardableAttrDictionary();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto reshape =
      ReshapeOp::create(rewriter, op->getLoc(), input, type.getShape());
  reshape->setDiscardableAttrs(attributes);
  rewriter.replaceOp(op, reshape);
}

/// flatten(x) ==> reshape(x): one op for later passes to handle.
struct FlattenToReshape : OpRewritePattern<FlattenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlattenOp op,
                                PatternRewriter &rewriter) const override {
    replaceWithReshape(op, op.getInput(), rewriter);
    return success();
  }
};

/// transpose(transpose(x, p), q) ==> transpose(x, p∘q).
struct MergeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(inner.getInput());
      op.setPerm(perm);
    });
    return success();
  }
};

/// transpose(x, p) that keeps the order of x's dimensions of size > 1 ==>
/// reshape(x): the elements stay where they are, and a reshape is a view.
struct TransposeOfUnitDimsToReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> input = op.getInput().getType().getShape();
    int64_t last = -1;
    for (int64_t p : op.getPerm()) {
      if (input[p] == 1)
        continue;
      if (p < last)
        return failure();
      last = p;
    }
    replaceWithReshape(op, op.getInput(), rewriter);
    return success();
  }
};
} // namespace

void NegOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<FoldDoubleNegation>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<MergeReshapes, ResolveReshapeShape>(context);
}

void FlattenOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<FlattenToReshape>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<MergeTransposes, TransposeOfUnitDimsToReshape>(context);
}
