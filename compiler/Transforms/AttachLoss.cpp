//===- AttachLoss.cpp - a loss entry point from a model's forward ---------===//
//
// Adds `loss`: the forward entry point's ops, then one of torch.nn's losses
// of its output against a new input `target`, spelled as graph ops that
// have gradient rules (graph.cross_entropy itself where PyTorch's formula is
// that op's; reductions, one-hot masks and elementwise ops otherwise).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GradientBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace modelc {
#define GEN_PASS_DEF_ATTACHLOSSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct AttachLossPass : modelc::impl::AttachLossPassBase<AttachLossPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (loss != "cross_entropy" && loss != "nll" && loss != "mse" &&
        loss != "bce_with_logits") {
      emitError(module.getLoc())
          << "unknown loss '" << loss
          << "' (expected cross_entropy, nll, mse or bce_with_logits)";
      return signalPassFailure();
    }
    if (reduction != "mean" && reduction != "sum") {
      emitError(module.getLoc())
          << "loss reduction '" << reduction
          << "' is not supported for training (expected mean or sum: the "
             "loss must be one number)";
      return signalPassFailure();
    }
    if (!(labelSmoothing >= 0.0 && labelSmoothing <= 1.0)) {
      emitError(module.getLoc())
          << "label smoothing " << labelSmoothing << " is not in [0, 1]";
      return signalPassFailure();
    }
    if (labelSmoothing != 0.0 && loss != "cross_entropy") {
      emitError(module.getLoc())
          << "label smoothing applies to cross_entropy, not to " << loss;
      return signalPassFailure();
    }
    if (!classWeights.empty() && loss != "cross_entropy" && loss != "nll") {
      emitError(module.getLoc())
          << "class weights apply to cross_entropy and nll, not to " << loss;
      return signalPassFailure();
    }
    auto forward = module.lookupSymbol<func::FuncOp>(entry);
    if (!forward || forward.isExternal()) {
      emitError(module.getLoc()) << "modelc-attach-loss: no entry point '"
                                 << entry << "' to attach the loss to";
      return signalPassFailure();
    }
    if (module.lookupSymbol("loss")) {
      emitError(module.getLoc())
          << "modelc-attach-loss: the module already has a symbol 'loss', "
             "the entry point this pass adds";
      return signalPassFailure();
    }
    FunctionType type = forward.getFunctionType();
    auto output = type.getNumResults() == 1
                      ? dyn_cast<RankedTensorType>(type.getResult(0))
                      : RankedTensorType();
    if (!output || !isa<FloatType>(output.getElementType())) {
      forward.emitError("the loss ")
          << loss << " needs one float output of '" << entry << "'; it has "
          << type.getNumResults() << " output(s)";
      return signalPassFailure();
    }
    bool classes = loss == "cross_entropy" || loss == "nll";
    // [N, C] scores, or [N, C, d1, ..., dk] (a class per pixel: PyTorch's
    // K-dimensional CrossEntropyLoss and NLLLoss) with targets [N, d1, ...,
    // dk], of static sizes.
    if (classes && (output.getRank() < 2 ||
                    (output.getRank() > 2 && !output.hasStaticShape()))) {
      forward.emitError("the loss ")
          << loss << " takes [N, C] or [N, C, d1, ...] scores of known sizes; "
          << "the output of '" << entry << "' is " << output;
      return signalPassFailure();
    }
    if (classes && !classWeights.empty() &&
        static_cast<int64_t>(classWeights.size()) != output.getDimSize(1)) {
      forward.emitError("the loss has ")
          << classWeights.size() << " class weights for "
          << output.getDimSize(1) << " classes";
      return signalPassFailure();
    }

    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(forward);
    auto function = cast<func::FuncOp>(builder.clone(*forward));
    function.setSymName("loss");
    Block &body = function.getBody().front();
    SmallVector<int64_t> targetShape = {output.getDimSize(0)};
    if (classes)
      llvm::append_range(targetShape, output.getShape().drop_front(2));
    Type targetType =
        classes ? Type(RankedTensorType::get(targetShape, builder.getI64Type()))
                : Type(output);
    unsigned index = function.getNumArguments();
    if (failed(function.insertArgument(
            index, targetType,
            builder.getDictionaryAttr({builder.getNamedAttr(
                "graph.name", builder.getStringAttr("target"))}),
            function.getLoc())))
      return signalPassFailure();
    Value target = body.getArgument(index);

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    builder.setInsertionPoint(ret);
    // The loss's ops are named after it ("model.onnx:loss 'mse'") in
    // reports and run-time errors.
    std::string file;
    if (auto name = dyn_cast<NameLoc>(function.getLoc()))
      file = name.getName().str();
    else if (auto line = dyn_cast<FileLineColLoc>(function.getLoc()))
      file = line.getFilename().str();
    Location lossLoc =
        NameLoc::get(builder.getStringAttr(file + ":loss '" + loss + "'"),
                     function.getLoc());
    GradientBuilder b(builder, lossLoc);
    Value y = ret.getOperand(0);
    if (classes && output.getRank() > 2) {
      // A class per position: the scores as rows [N * d1 * ... * dk, C]
      // (the classes last), the targets as [N * d1 * ... * dk]; the means
      // and weights then are PyTorch's over every position.
      SmallVector<int64_t> perm = {0};
      for (int64_t d = 2; d < output.getRank(); ++d)
        perm.push_back(d);
      perm.push_back(1);
      int64_t rows = output.getNumElements() / output.getDimSize(1);
      y = b.reshape(b.transpose(y, perm), {rows, output.getDimSize(1)});
      target = b.reshape(target, {rows});
    }
    Value classWeight = classes ? weights(b, y) : Value();
    Value l;
    if (loss == "cross_entropy") {
      l = crossEntropy(b, y, target, classWeight);
    } else if (loss == "nll") {
      // Per sample -w[t] y[t]; mean divides by the weights used (PyTorch's).
      Value oneHot = weightedOneHot(b, y, target, classWeight);
      l = reduce(b, b.neg(b.reduceSum(b.mul(oneHot, y), {1}, false)),
                 b.reduceSum(oneHot, {0, 1}, /*keepdims=*/false));
    } else if (loss == "mse") {
      Value d = b.sub(y, target);
      l = reduce(b, b.mul(d, d));
    } else {
      // max(x, 0) - x t + log(1 + e^-|x|), as PyTorch's stable form.
      Value softplus = b.op<LogOp>(
          {b.add(b.scalar(y, 1.0), b.exp(b.neg(b.op<AbsOp>({y}))))});
      l = reduce(b,
                 b.add(b.sub(b.op<ReluOp>({y}), b.mul(y, target)), softplus));
    }
    if (!l)
      return signalPassFailure();
    // Each rank's loss is its share of the whole batch's: a sum of shares,
    // and its gradient a sum too (modelc-all-reduce-gradients reads this).
    if (distributed)
      function->setAttr("graph.loss_share", builder.getUnitAttr());
    func::ReturnOp::create(builder, ret.getLoc(), ValueRange{l});
    ret.erase();
    function.setFunctionType(builder.getFunctionType(
        function.getFunctionType().getInputs(), {l.getType()}));
    function.removeResAttrsAttr();
    function.setResultAttr(0, "graph.name", builder.getStringAttr("loss"));
  }

  /// The class weights as a constant [C], or null without them.
  Value weights(GradientBuilder &b, Value scores) {
    if (classWeights.empty())
      return nullptr;
    RankedTensorType type = tensorTypeOf(scores);
    auto weightType =
        RankedTensorType::get({type.getDimSize(1)}, type.getElementType());
    SmallVector<Attribute> values;
    for (double w : classWeights)
      values.push_back(FloatAttr::get(type.getElementType(), w));
    return ConstantOp::create(b.getBuilder(), b.getLoc(),
                              DenseElementsAttr::get(weightType, values));
  }

  /// [N, C]: 1 at each sample's target class (none for an ignored sample),
  /// times its class weight (`w`, when given), in the scores' element type.
  Value weightedOneHot(GradientBuilder &b, Value scores, Value target,
                       Value w) {
    RankedTensorType type = tensorTypeOf(scores);
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    OpBuilder &builder = b.getBuilder();
    SmallVector<int64_t> classes;
    for (int64_t i = 0; i < c; ++i)
      classes.push_back(i);
    Value iota = ConstantOp::create(
        builder, b.getLoc(),
        DenseElementsAttr::get(RankedTensorType::get({c}, builder.getI64Type()),
                               ArrayRef<int64_t>(classes)));
    Value t = b.reshape(target, {n, 1});
    Type element = type.getElementType();
    Value oneHot = b.mul(
        b.cast(b.compare(ComparePredicate::eq, t, iota), element),
        b.cast(b.compare(ComparePredicate::ne, t, b.scalar(t, ignoreIndex)),
               element));
    return w ? b.mul(oneHot, w) : oneHot;
  }

  /// `perSample` summed, or for mean divided by `denominator` (the class
  /// losses' weights used) or averaged over its elements (mse, bce).
  Value reduce(GradientBuilder &b, Value perSample,
               Value denominator = Value()) {
    if (!perSample)
      return nullptr;
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < tensorTypeOf(perSample).getRank(); ++d)
      all.push_back(d);
    if (reduction == "mean" && !denominator && !distributed)
      return b.op<ReduceMeanOp>(
          {perSample},
          {b.named("axes", b.getBuilder().getDenseI64ArrayAttr(all))});
    Value sum = b.reduceSum(perSample, all, /*keepdims=*/false);
    if (reduction == "sum")
      return sum;
    if (!denominator)
      denominator = b.scalar(
          sum, static_cast<double>(tensorTypeOf(perSample).getNumElements()));
    return b.div(sum, global(b, denominator));
  }

  /// A mean's denominator: this rank's own, or (distributed) the sum over
  /// the ranks, so that each rank's loss is its share of the whole batch's
  /// mean, weights and ignored targets included, as one process would
  /// compute it.
  Value global(GradientBuilder &b, Value denominator) {
    return distributed ? b.op<AllReduceOp>({denominator}) : denominator;
  }

  Value crossEntropy(GradientBuilder &b, Value logits, Value target, Value w) {
    RankedTensorType type = tensorTypeOf(logits);
    // Distributed, a mean is the sum over the global weight of the targets.
    bool globalMean = distributed && reduction == "mean";
    // The weight of the targets kept (their count without class weights):
    // a mean's denominator, made once when first needed.
    Value kept, used;
    auto keptMask = [&]() -> Value {
      if (!kept)
        kept = b.compare(ComparePredicate::ne, target,
                         b.scalar(target, ignoreIndex));
      return kept;
    };
    auto weightUsed = [&]() -> Value {
      if (used)
        return used;
      if (w)
        used = b.reduceSum(weightedOneHot(b, logits, target, w), {0, 1}, false);
      else
        used =
            b.reduceSum(b.cast(keptMask(), type.getElementType()), {0}, false);
      return used = global(b, used);
    };
    if (globalMean)
      weightUsed();
    SmallVector<NamedAttribute> attrs{
        b.named("ignore_index", b.getBuilder().getI64IntegerAttr(ignoreIndex)),
        b.named("reduction", ReductionAttr::get(b.getBuilder().getContext(),
                                                reduction == "sum" || globalMean
                                                    ? Reduction::sum
                                                    : Reduction::mean))};
    SmallVector<Value> operands{logits, target};
    if (w)
      operands.push_back(w);
    Value nll = b.op<CrossEntropyOp>(operands, attrs);
    if (globalMean)
      nll = b.div(nll, weightUsed());
    if (labelSmoothing == 0.0)
      return nll;
    // PyTorch's cross_entropy with label_smoothing: (1 - eps) nll + eps / C
    // * smooth, smooth = -sum_c w[c] log_softmax[c] per sample (0 where
    // ignored), summed, or for mean divided by the weights of the targets
    // (the count of samples kept without weights).
    int64_t c = type.getDimSize(1);
    Value logProbs = b.op<LogSoftmaxOp>(
        {logits}, {b.named("axis", b.getBuilder().getI64IntegerAttr(1))});
    if (w)
      logProbs = b.mul(logProbs, w);
    Value perSample = b.neg(b.reduceSum(logProbs, {1}, false));
    perSample = b.select(keptMask(), perSample, b.scalar(perSample, 0.0));
    Value smooth = b.reduceSum(perSample, {0}, false);
    if (reduction == "mean")
      smooth = b.div(smooth, weightUsed());
    return b.add(b.scale(nll, 1.0 - labelSmoothing),
                 b.scale(smooth, labelSmoothing / static_cast<double>(c)));
  }
};

} // namespace
