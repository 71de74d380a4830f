//===- AllReduceGradients.cpp - gradients summed over the ranks -----------===//
//
// Data-parallel training across processes: each rank runs the step on its
// part of the batch, and the gradients are summed over the ranks
// (graph.all_reduce) in buckets, each issued where its last gradient is
// computed, so that every rank takes the same optimizer step. A loss whose
// means are global (modelc-attach-loss in distributed mode marks it
// graph.loss_share) is already each rank's share: its gradients are
// summed; any other loss is a rank's own mean, and its gradients are
// averaged (as DistributedDataParallel does).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GradientBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace modelc {
#define GEN_PASS_DEF_ALLREDUCEGRADIENTSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct AllReduceGradientsPass
    : modelc::impl::AllReduceGradientsPassBase<AllReduceGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto loss = module.lookupSymbol<func::FuncOp>(entry);
    auto gradients = module.lookupSymbol<func::FuncOp>("gradients");
    if (!loss || loss.isExternal() || !gradients ||
        !gradients->hasAttr("graph.parameters")) {
      emitError(module.getLoc())
          << "modelc-all-reduce-gradients: needs the loss entry point '"
          << entry << "' and 'gradients' (run modelc-differentiate first)";
      return signalPassFailure();
    }
    if (!(bucketMb > 0.0) || !(firstBucketMb > 0.0)) {
      emitError(module.getLoc())
          << "modelc-all-reduce-gradients: bucket sizes must be positive";
      return signalPassFailure();
    }
    // A dropout's mask is a function of its element index: a dropout of
    // this rank's rows draws them as the rows' place in the whole batch
    // would (its element count per rank, times the run's rank), so that
    // the ranks draw the masks of one process on the whole batch. (In-
    // process replicas get their offsets from modelc-replicate, which
    // scales this stride with --distributed.)
    if (!replicated)
      for (auto function : module.getOps<func::FuncOp>()) {
        if (function.isExternal())
          continue;
        llvm::DenseSet<Value> batch = valuesOfTheBatch(function);
        function.walk([&](DropoutOp op) {
          if (op.getStep() && batch.contains(op.getInput()))
            op.setRankStride(cast<RankedTensorType>(op.getInput().getType())
                                 .getNumElements());
        });
      }
    bool share = loss->hasAttr("graph.loss_share");
    globalLoss(loss, share);
    if (failed(sumGradients(gradients, share)))
      return signalPassFailure();
  }

  /// 1 / the number of ranks (a scalar of `like`'s element type).
  static Value inverseRanks(GradientBuilder &b, Value like) {
    Value ranks = b.op<AllReduceOp>({b.scalar(like, 1.0)});
    return b.div(b.scalar(like, 1.0), ranks);
  }

  /// The whole batch's loss from each rank's: the sum of the shares, or
  /// (with `scale`, 1 / ranks) the mean of the ranks' own means.
  static Value globalValue(GradientBuilder &b, Value local, Value scale) {
    Value sum = b.op<AllReduceOp>({local});
    return scale ? b.mul(sum, scale) : sum;
  }

  /// The loss entry point returns the whole batch's loss.
  void globalLoss(func::FuncOp loss, bool share) {
    auto ret = cast<func::ReturnOp>(loss.getBody().front().getTerminator());
    OpBuilder builder(ret);
    GradientBuilder b(builder, ret.getLoc());
    Value local = ret.getOperand(0);
    ret->setOperand(
        0, globalValue(b, local, share ? Value() : inverseRanks(b, local)));
  }

  /// In `gradients`: the loss as above; the gradients in buckets of about
  /// bucketMb (the first firstBucketMb) in the order the backward computes
  /// them, each bucket flattened into one vector, summed over the ranks
  /// right after its last gradient, and split back.
  LogicalResult sumGradients(func::FuncOp function, bool share) {
    Block &body = function.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    llvm::DenseMap<Operation *, unsigned> position;
    for (Operation &op : body)
      position[&op] = position.size();
    auto readyAt = [&](Value v) -> unsigned {
      Operation *def = v.getDefiningOp();
      return def ? position.lookup(def) : 0;
    };

    // The loss, summed once the forward is done.
    Value scale;
    {
      Value local = ret.getOperand(0);
      OpBuilder builder(function.getContext());
      if (Operation *def = local.getDefiningOp())
        builder.setInsertionPointAfter(def);
      else
        builder.setInsertionPointToStart(&body);
      GradientBuilder b(builder, local.getLoc());
      // A rank's own mean: 1 / ranks, for the loss and every gradient.
      if (!share)
        scale = inverseRanks(b, local);
      ret->setOperand(0, globalValue(b, local, scale));
    }

    // The gradients by the time the backward computes them.
    SmallVector<unsigned> order;
    for (unsigned i = 1; i < ret.getNumOperands(); ++i) {
      auto type = dyn_cast<RankedTensorType>(ret.getOperand(i).getType());
      if (!type || !type.getElementType().isF32())
        return function.emitError("modelc-all-reduce-gradients: gradient #")
               << i << " is " << ret.getOperand(i).getType()
               << "; distributed training sums f32 gradients only";
      order.push_back(i);
    }
    llvm::stable_sort(order, [&](unsigned a, unsigned c) {
      return readyAt(ret.getOperand(a)) < readyAt(ret.getOperand(c));
    });
    SmallVector<SmallVector<unsigned>> buckets;
    double bytes = 0, limit = firstBucketMb * 1e6;
    for (unsigned i : order) {
      double size = static_cast<double>(valueBytes(ret.getOperand(i)));
      if (buckets.empty() || (bytes > 0 && bytes + size > limit)) {
        if (!buckets.empty())
          limit = bucketMb * 1e6;
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(i);
      bytes += size;
    }

    // A rank's own mean: each gradient is scaled by 1 / ranks first.
    // The last op of the bucket before (first: the scale, which every
    // bucket reads).
    Operation *previous = scale ? scale.getDefiningOp() : nullptr;
    for (auto [index, bucketIndices] : llvm::enumerate(buckets)) {
      ArrayRef<unsigned> bucket = bucketIndices;
      Value last = ret.getOperand(bucket.back());
      OpBuilder builder(function.getContext());
      // After the bucket's last gradient, and after the bucket before
      // (two buckets may end at one op: a value returned twice).
      Operation *after = last.getDefiningOp();
      if (previous && (!after || after->isBeforeInBlock(previous)))
        after = previous;
      if (after)
        builder.setInsertionPointAfter(after);
      else
        builder.setInsertionPointToStart(&body);
      // Named after the bucket in traces, profiles and errors:
      // "graph.all_reduce (gradient bucket '1')".
      GradientBuilder b(
          builder,
          NameLoc::get(builder.getStringAttr("modelc:gradient bucket '" +
                                             std::to_string(index + 1) + "'"),
                       last.getLoc()));
      SmallVector<Value> flat;
      for (unsigned i : bucket) {
        Value g = ret.getOperand(i);
        if (scale)
          g = b.mul(g, scale);
        int64_t n = cast<RankedTensorType>(g.getType()).getNumElements();
        flat.push_back(b.reshape(g, {n}));
      }
      Value vector =
          flat.size() == 1
              ? flat.front()
              : b.op<ConcatOp>(flat,
                               {b.named("axis", builder.getI64IntegerAttr(0))});
      Value summed = b.op<AllReduceOp>({vector});
      int64_t offset = 0;
      for (unsigned i : bucket) {
        auto type = cast<RankedTensorType>(ret.getOperand(i).getType());
        int64_t n = type.getNumElements();
        Value piece =
            flat.size() == 1
                ? summed
                : b.op<SliceOp>(
                      {summed},
                      {b.named("starts", builder.getDenseI64ArrayAttr(offset)),
                       b.named("ends",
                               builder.getDenseI64ArrayAttr(offset + n))});
        Value back = b.reshape(piece, type.getShape());
        ret->setOperand(i, back);
        offset += n;
        if (Operation *def = back.getDefiningOp())
          previous = def;
      }
      if (!summed)
        return failure();
    }
    OpBuilder builder(function.getContext());
    function->setAttr("graph.gradient_buckets",
                      builder.getI64IntegerAttr(buckets.size()));
    return success();
  }
};

} // namespace
