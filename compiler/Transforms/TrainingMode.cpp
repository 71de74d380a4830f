//===- TrainingMode.cpp - the training form of a loss entry's ops ---------===//
//
// A BatchNorm exported in training mode (graph.batch_norm with a momentum)
// normalises, in the loss entry point, with the batch's statistics and
// updates its running statistics, as torch.nn.BatchNorm2d in train():
// reductions and elementwise ops, whose gradient rules make its backward.
// A dropout drops there (its step count, `rng_step`, and a site of its own).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Assign.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GradientBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace modelc {
#define GEN_PASS_DEF_TRAININGMODEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct TrainingModePass : modelc::impl::TrainingModePassBase<TrainingModePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto function = module.lookupSymbol<func::FuncOp>(entry);
    if (!function || function.isExternal()) {
      emitError(module.getLoc()) << "modelc-training-mode: no entry point '"
                                 << entry << "' to take the loss from";
      return signalPassFailure();
    }
    SmallVector<BatchNormOp> norms;
    function.walk([&](BatchNormOp op) {
      if (op.getMomentum())
        norms.push_back(op);
    });
    for (BatchNormOp op : norms)
      if (failed(rewrite(module, function, op)))
        return signalPassFailure();
    if (failed(dropoutInTraining(module, function)))
      return signalPassFailure();
  }

  /// Each graph.dropout of the entry without a step (eval mode) gets the
  /// step count `rng_step` and its own site: it drops in training.
  LogicalResult dropoutInTraining(ModuleOp module, func::FuncOp function) {
    SmallVector<DropoutOp> dropouts;
    function.walk([&](DropoutOp op) {
      if (!op.getStep())
        dropouts.push_back(op);
    });
    if (dropouts.empty())
      return success();
    OpBuilder builder(module.getContext());
    auto type = RankedTensorType::get({}, builder.getI64Type());
    FailureOr<WeightOp> weight = declareTrainingState(
        module, kRngStepWeight, type,
        "the step count modelc declares for dropout in training");
    if (failed(weight))
      return failure();
    builder.setInsertionPointToStart(&function.getBody().front());
    Value step =
        WeightRefOp::create(builder, function.getLoc(), type,
                            FlatSymbolRefAttr::get(weight->getSymNameAttr()));
    for (auto [site, op] : llvm::enumerate(dropouts)) {
      op.getStepMutable().assign(step);
      op.setSite(static_cast<int64_t>(site));
      if (dropoutSeed >= 0)
        op.setSeed(dropoutSeed);
    }
    return success();
  }

  /// The weight `v` reads, directly.
  WeightOp weightOf(ModuleOp module, Value v) {
    auto ref = v.getDefiningOp<WeightRefOp>();
    return ref ? module.lookupSymbol<WeightOp>(ref.getNameAttr()) : WeightOp();
  }

  LogicalResult rewrite(ModuleOp module, func::FuncOp function,
                        BatchNormOp op) {
    WeightOp runningMean = weightOf(module, op.getMean());
    WeightOp runningVar = weightOf(module, op.getVariance());
    if (!runningMean || !runningVar)
      return op.emitError("a batch_norm in training mode needs its running "
                          "mean and variance as weights (they are updated "
                          "each step)");
    OpBuilder builder(op);
    GradientBuilder b(builder, op.getLoc());
    Value x = op.getInput();
    RankedTensorType type = op.getInput().getType();
    int64_t channels = type.getDimSize(1);
    SmallVector<int64_t> axes{0}, perChannel(type.getRank(), 1);
    perChannel[1] = channels;
    int64_t count = type.getDimSize(0);
    for (int64_t d = 2; d < type.getRank(); ++d) {
      axes.push_back(d);
      count *= type.getDimSize(d);
    }
    // --sync-batchnorm: the statistics of the whole batch, over the ranks
    // of a distributed run (sums and counts all-reduced, as
    // torch.nn.SyncBatchNorm); the backward all-reduces through them.
    Value total =
        syncBatchnorm
            ? b.op<AllReduceOp>({b.scalar(x, static_cast<double>(count))})
            : Value();
    auto mean = [&](Value v) -> Value {
      if (!syncBatchnorm)
        return b.op<ReduceMeanOp>(
            {v}, {b.named("axes", builder.getDenseI64ArrayAttr(axes)),
                  b.named("keepdims", builder.getBoolAttr(true))});
      return b.div(b.op<AllReduceOp>({b.reduceSum(v, axes, true)}), total);
    };
    // Batch statistics: mean and biased variance (normalisation), as
    // PyTorch; the running variance takes the unbiased one.
    Value mu = mean(x);
    Value centered = b.sub(x, mu);
    Value var = mean(b.mul(centered, centered));
    Value rstd = b.op<RsqrtOp>(
        {b.add(var, b.scalar(var, op.getEpsilon().convertToDouble()))});
    Value y = b.add(
        b.mul(b.mul(centered, rstd), b.reshape(op.getScale(), perChannel)),
        b.reshape(op.getBias(), perChannel));
    if (!y)
      return failure();

    double m = op.getMomentum()->convertToDouble();
    Value newMean = b.add(b.scale(op.getMean(), 1.0 - m),
                          b.scale(b.reshape(mu, {channels}), m));
    if (count < 2)
      return op.emitError("a batch_norm in training mode needs more than one "
                          "value per channel (the input is ")
             << type << "), as PyTorch";
    double unbiased =
        static_cast<double>(count) / static_cast<double>(count - 1);
    Value newVar =
        syncBatchnorm
            ? b.add(b.scale(op.getVariance(), 1.0 - m),
                    b.scale(
                        b.mul(b.reshape(var, {channels}),
                              b.div(total, b.sub(total, b.scalar(total, 1.0)))),
                        m))
            : b.add(b.scale(op.getVariance(), 1.0 - m),
                    b.scale(b.reshape(var, {channels}), m * unbiased));
    if (!newMean || !newVar)
      return failure();
    op.getResult().replaceAllUsesWith(y);
    op.erase();
    runningMean.setFrozen(true);
    runningVar.setFrozen(true);
    // The update is written at the end: nothing in the step reads the
    // running statistics after this rewrite.
    builder.setInsertionPoint(function.getBody().front().getTerminator());
    buildAssign(builder, function, runningMean, newMean);
    buildAssign(builder, function, runningVar, newVar);
    return success();
  }
};

} // namespace
