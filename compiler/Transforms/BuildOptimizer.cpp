//===- BuildOptimizer.cpp - the training step as graph ops ----------------===//
//
// Adds `train_step`: the `gradients` entry's ops, then torch.optim's update
// of each parameter spelled with elementwise graph ops (which
// modelc-fuse-elementwise makes one loop per parameter), its state as
// `zeros` weights, and graph.assign to write parameters and state back.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Assign.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GradientBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace modelc {
#define GEN_PASS_DEF_BUILDOPTIMIZERPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct BuildOptimizerPass
    : modelc::impl::BuildOptimizerPassBase<BuildOptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw") {
      emitError(module.getLoc()) << "unknown optimizer '" << optimizer
                                 << "' (expected sgd, adam or adamw)";
      return signalPassFailure();
    }
    auto gradients = module.lookupSymbol<func::FuncOp>("gradients");
    auto parameters =
        gradients ? gradients->getAttrOfType<ArrayAttr>("graph.parameters")
                  : ArrayAttr();
    if (!parameters) {
      emitError(module.getLoc())
          << "modelc-build-optimizer: no entry point 'gradients' with "
             "graph.parameters (run modelc-differentiate first)";
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      emitError(module.getLoc())
          << "modelc-build-optimizer: the module already has a symbol "
             "'train_step', the entry point this pass adds";
      return signalPassFailure();
    }
    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(gradients);
    step = cast<func::FuncOp>(builder.clone(*gradients));
    step.setSymName("train_step");
    step->removeAttr("graph.parameters");
    if (failed(buildStep(module, parameters)))
      return signalPassFailure();
  }

  /// Declares the optimizer state `name` (zeros at the start).
  FailureOr<WeightOp> declareState(ModuleOp module, StringRef name,
                                   RankedTensorType type) {
    return declareTrainingState(module, name, type,
                                "the optimizer state modelc declares");
  }

  /// The value of weight `weight` in the step (a new weight_ref at the top).
  Value read(OpBuilder &builder, WeightOp weight) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&step.getBody().front());
    return WeightRefOp::create(builder, step.getLoc(), weight.getTensorType(),
                               FlatSymbolRefAttr::get(weight.getSymNameAttr()))
        .getResult();
  }

  void assign(OpBuilder &builder, WeightOp weight, Value value) {
    buildAssign(builder, step, weight, value);
  }

  /// An update of the optimizer: with --accumulate, it takes effect only on
  /// the step that completes the micro-batches (the weight keeps its value
  /// on the others).
  void commit(OpBuilder &builder, GradientBuilder &b, WeightOp weight,
              Value value) {
    if (applyNow)
      value = b.select(applyNow, value, read(builder, weight));
    assign(builder, weight, value);
  }

  LogicalResult buildStep(ModuleOp module, ArrayAttr parameters) {
    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder builder(ret);
    GradientBuilder b(builder, step.getLoc());
    auto scalarType = RankedTensorType::get({}, builder.getF32Type());

    // The learning rate: a last input `lr` whose default is --lr, so that a
    // schedule stays in the user's loop (train_step(..., lr=...)).
    unsigned lrIndex = step.getNumArguments();
    for (unsigned i = 0; i < lrIndex; ++i)
      if (auto name = step.getArgAttrOfType<StringAttr>(i, "graph.name");
          name && name.getValue() == "lr")
        return step.emitError("input #")
               << i << " is named 'lr', the name of train_step's learning "
               << "rate input; rename it";
    NamedAttribute lrAttrs[] = {
        builder.getNamedAttr("graph.name", builder.getStringAttr("lr")),
        builder.getNamedAttr(
            GraphDialect::kDefaultAttrName,
            DenseElementsAttr::get(scalarType, static_cast<float>(lr)))};
    if (failed(step.insertArgument(lrIndex, scalarType,
                                   builder.getDictionaryAttr(lrAttrs),
                                   step.getLoc())))
      return failure();
    learningRate = step.getArgument(lrIndex);

    // The step count (torch.optim's `step`), counted before any update.
    FailureOr<WeightOp> stepWeight = declareState(module, "step", scalarType);
    if (failed(stepWeight))
      return failure();
    StepScalars scalars;
    scalars.count = read(builder, *stepWeight);
    Value newCount = b.add(scalars.count, b.splat(scalarType, 1.0));
    if (optimizer != "sgd") {
      // 1 - beta^t, t = newCount, as torch computes them (in double there;
      // f32 here: within the tolerance the tests ask of f32 training).
      auto power = [&](double beta) {
        return b.op<PowOp>({b.splat(scalarType, beta), newCount});
      };
      scalars.bias1 = b.sub(b.splat(scalarType, 1.0), power(beta1));
      scalars.bias2Sqrt =
          b.op<SqrtOp>({b.sub(b.splat(scalarType, 1.0), power(beta2))});
    }

    SmallVector<WeightOp> weights;
    SmallVector<Value> grads;
    for (auto [index, attr] : llvm::enumerate(parameters)) {
      weights.push_back(
          module.lookupSymbol<WeightOp>(cast<FlatSymbolRefAttr>(attr)));
      grads.push_back(ret.getOperand(index + 1));
    }
    if (accumulate > 1 &&
        failed(accumulateGradients(module, builder, b, weights, grads)))
      return failure();
    if (clipGradNorm > 0.0) {
      Value clip = clipCoefficient(b, grads);
      if (!clip)
        return failure();
      for (Value &g : grads)
        g = b.mul(g, b.cast(clip, tensorTypeOf(g).getElementType()));
    }
    for (auto [weight, g] : llvm::zip(weights, grads))
      if (failed(updateParameter(module, builder, b, weight, g, scalars)))
        return failure();
    commit(builder, b, *stepWeight, newCount);
    // Dropout's step count: every call, micro-steps of --accumulate too
    // (each micro-batch draws its own masks).
    if (auto rng = module.lookupSymbol<WeightOp>(kRngStepWeight)) {
      Value count = read(builder, rng);
      assign(builder, rng, b.add(count, b.scalar(count, 1.0)));
    }

    Value loss = ret.getOperand(0);
    func::ReturnOp::create(builder, ret.getLoc(), ValueRange{loss});
    ret.erase();
    step.setFunctionType(builder.getFunctionType(
        step.getFunctionType().getInputs(), {loss.getType()}));
    step.removeResAttrsAttr();
    step.setResultAttr(0, "graph.name", builder.getStringAttr("loss"));
    return success();
  }

  /// --accumulate K: each gradient becomes its sum over the last calls
  /// (NAME.grad, as PyTorch's .grad accumulates over backward calls); the
  /// K-th call (`applyNow`, counted by micro_step) applies and clears them.
  LogicalResult accumulateGradients(ModuleOp module, OpBuilder &builder,
                                    GradientBuilder &b,
                                    ArrayRef<WeightOp> weights,
                                    SmallVectorImpl<Value> &grads) {
    auto scalarType = RankedTensorType::get({}, builder.getF32Type());
    FailureOr<WeightOp> micro = declareState(module, "micro_step", scalarType);
    if (failed(micro))
      return failure();
    Value calls = b.add(read(builder, *micro), b.splat(scalarType, 1.0));
    applyNow = b.compare(ComparePredicate::eq, calls,
                         b.splat(scalarType, static_cast<double>(accumulate)));
    assign(builder, *micro,
           b.select(applyNow, b.splat(scalarType, 0.0), calls));
    for (auto [index, g] : llvm::enumerate(grads)) {
      WeightOp weight = weights[index];
      FailureOr<WeightOp> sum =
          declareState(module, (weight.getSymName() + ".grad").str(),
                       weight.getTensorType());
      if (failed(sum))
        return failure();
      g = b.add(read(builder, *sum), g);
      assign(builder, *sum, b.select(applyNow, b.scalar(g, 0.0), g));
    }
    return success(static_cast<bool>(applyNow));
  }

  /// torch.nn.utils.clip_grad_norm_'s factor: min(1, max_norm / (norm +
  /// 1e-6)), norm the L2 norm of the per-parameter norms (f32 scalar).
  Value clipCoefficient(GradientBuilder &b, ArrayRef<Value> grads) {
    auto scalarType = RankedTensorType::get({}, b.getBuilder().getF32Type());
    Value sumOfSquares;
    for (Value g : grads) {
      SmallVector<int64_t> all;
      for (int64_t d = 0; d < tensorTypeOf(g).getRank(); ++d)
        all.push_back(d);
      Value norm = b.op<SqrtOp>(
          {b.cast(b.reduceSum(b.mul(g, g), all, /*keepdims=*/false),
                  scalarType.getElementType())});
      Value square = b.mul(norm, norm);
      sumOfSquares = sumOfSquares ? b.add(sumOfSquares, square) : square;
    }
    Value total = b.op<SqrtOp>({sumOfSquares});
    Value coefficient = b.div(b.splat(scalarType, clipGradNorm),
                              b.add(total, b.splat(scalarType, 1e-6)));
    return b.op<MinOp>({coefficient, b.splat(scalarType, 1.0)});
  }

  /// The step's values every parameter's update reads: the step count
  /// before it, and Adam's bias corrections (1 - b1^t, sqrt(1 - b2^t)).
  struct StepScalars {
    Value count, bias1, bias2Sqrt;
  };

  /// torch.optim's update of `weight` by gradient `g`, its state declared
  /// and written back (commit).
  LogicalResult updateParameter(ModuleOp module, OpBuilder &builder,
                                GradientBuilder &b, WeightOp weight, Value g,
                                const StepScalars &scalars) {
    RankedTensorType type = weight.getTensorType();
    Value p = read(builder, weight);
    b.setLoc(weight.getLoc());
    auto lit = [&](double v) {
      return b.splat(RankedTensorType::get({}, type.getElementType()), v);
    };
    auto state = [&](StringRef suffix) -> FailureOr<WeightOp> {
      return declareState(module, (weight.getSymName() + "." + suffix).str(),
                          type);
    };
    // lr in the parameter's element type.
    Value rate = b.cast(learningRate, type.getElementType());
    Value newP;
    if (optimizer == "sgd") {
      if (weightDecay != 0.0)
        g = b.add(g, b.mul(p, lit(weightDecay)));
      if (momentum != 0.0) {
        FailureOr<WeightOp> buf = state("momentum_buffer");
        if (failed(buf))
          return failure();
        Value old = read(builder, *buf);
        // torch: the buffer is the gradient itself on the first step.
        Value later =
            b.add(b.mul(old, lit(momentum)),
                  dampening == 0.0 ? g : b.mul(g, lit(1.0 - dampening)));
        Value newBuf = later;
        if (dampening != 0.0)
          newBuf = b.select(b.compare(ComparePredicate::eq, scalars.count,
                                      b.scalar(scalars.count, 0.0)),
                            g, later);
        commit(builder, b, *buf, newBuf);
        g = nesterov ? b.add(g, b.mul(newBuf, lit(momentum))) : newBuf;
      }
      newP = b.sub(p, b.mul(g, rate));
    } else {
      if (optimizer == "adamw" && weightDecay != 0.0)
        p = b.mul(p, b.sub(lit(1.0), b.mul(rate, lit(weightDecay))));
      else if (weightDecay != 0.0)
        g = b.add(g, b.mul(p, lit(weightDecay)));
      FailureOr<WeightOp> m = state("exp_avg");
      FailureOr<WeightOp> v = state("exp_avg_sq");
      if (failed(m) || failed(v))
        return failure();
      // torch: exp_avg.lerp_(g, 1 - b1); exp_avg_sq.mul_(b2).addcmul_(g, g,
      // 1 - b2).
      Value oldM = read(builder, *m), oldV = read(builder, *v);
      Value newM = b.add(oldM, b.mul(b.sub(g, oldM), lit(1.0 - beta1)));
      Value newV =
          b.add(b.mul(oldV, lit(beta2)), b.mul(b.mul(g, g), lit(1.0 - beta2)));
      commit(builder, b, *m, newM);
      commit(builder, b, *v, newV);
      // denom = sqrt(v) / sqrt(1 - b2^t) + eps; p -= lr / (1 - b1^t) m /
      // denom.
      Value denom =
          b.add(b.div(b.op<SqrtOp>({newV}),
                      b.cast(scalars.bias2Sqrt, type.getElementType())),
                lit(eps));
      Value stepSize =
          b.div(rate, b.cast(scalars.bias1, type.getElementType()));
      newP = b.sub(p, b.mul(stepSize, b.div(newM, denom)));
    }
    if (!newP)
      return failure();
    commit(builder, b, weight, newP);
    return success();
  }

  func::FuncOp step;
  /// The step's `lr` input (f32 scalar).
  Value learningRate;
  /// With --accumulate: true on the call that applies the update.
  Value applyNow;
};

} // namespace
