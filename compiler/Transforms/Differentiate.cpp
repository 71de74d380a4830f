//===- Differentiate.cpp - reverse mode over a loss entry point -----------===//
//
// Adds the entry point `gradients`: the loss entry's ops, then their
// backward, built by asking each op on a parameter's path to the loss for
// its operands' gradients (GradientOpInterface). The pass keeps no list of
// ops: an op without the interface has no gradient.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GradientBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

namespace modelc {
#define GEN_PASS_DEF_DIFFERENTIATEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

struct DifferentiatePass
    : modelc::impl::DifferentiatePassBase<DifferentiatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto loss = module.lookupSymbol<func::FuncOp>(entry);
    if (!loss || loss.isExternal()) {
      emitError(module.getLoc()) << "modelc-differentiate: no entry point '"
                                 << entry << "' to take the loss from";
      return signalPassFailure();
    }
    if (module.lookupSymbol("gradients")) {
      emitError(module.getLoc())
          << "modelc-differentiate: the module already has a symbol "
             "'gradients', the entry point this pass adds";
      return signalPassFailure();
    }
    FunctionType fnType = loss.getFunctionType();
    auto lossType = fnType.getNumResults() == 1
                        ? dyn_cast<RankedTensorType>(fnType.getResult(0))
                        : RankedTensorType();
    if (!lossType || lossType.getRank() != 0 ||
        !isa<FloatType>(lossType.getElementType())) {
      loss.emitError("the loss entry point '")
          << entry << "' must return one scalar float tensor (tensor<f32>); "
          << "it returns " << fnType.getNumResults() << " value(s)"
          << (fnType.getNumResults() ? " of type " : "")
          << (fnType.getNumResults() ? fnType.getResult(0) : Type());
      return signalPassFailure();
    }
    if (failed(markFrozen(module)))
      return signalPassFailure();

    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(loss);
    auto gradients = cast<func::FuncOp>(builder.clone(*loss));
    gradients.setSymName("gradients");
    if (failed(differentiate(module, gradients))) {
      gradients.erase();
      return signalPassFailure();
    }
  }

  /// Sets `frozen` on the weights the option's expression matches.
  LogicalResult markFrozen(ModuleOp module) {
    if (frozen.empty())
      return success();
    llvm::Regex pattern("^(" + frozen + ")$");
    std::string why;
    if (!pattern.isValid(why))
      return emitError(module.getLoc())
             << "--frozen: '" << frozen
             << "' is not a valid regular expression: " << why;
    for (WeightOp weight : module.getOps<WeightOp>())
      if (pattern.match(weight.getSymName()))
        weight.setFrozen(true);
    return success();
  }

  LogicalResult differentiate(ModuleOp module, func::FuncOp function) {
    Block &body = function.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value lossValue = ret.getOperand(0);

    // Values that depend on a parameter (forward), then those of them the
    // loss depends on (backward): the ops to differentiate.
    llvm::DenseSet<Value> active;
    llvm::MapVector<StringRef, SmallVector<Value>> parameterRefs;
    for (Operation &op : body) {
      if (auto ref = dyn_cast<WeightRefOp>(op)) {
        auto weight = module.lookupSymbol<WeightOp>(ref.getNameAttr());
        if (weight && !weight.getFrozen() && isFloatTensor(ref.getResult()))
          active.insert(ref.getResult());
        continue;
      }
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value r : op.getResults())
          if (isFloatTensor(r))
            active.insert(r);
    }
    llvm::DenseSet<Value> needed;
    SmallVector<Operation *> path; // in reverse order
    if (active.contains(lossValue))
      needed.insert(lossValue);
    for (Operation &op : llvm::reverse(body)) {
      if (!llvm::any_of(op.getResults(),
                        [&](Value r) { return needed.contains(r); }))
        continue;
      if (auto ref = dyn_cast<WeightRefOp>(op)) {
        parameterRefs[ref.getName()].push_back(ref.getResult());
        continue;
      }
      path.push_back(&op);
      for (Value v : op.getOperands())
        if (active.contains(v))
          needed.insert(v);
    }
    if (parameterRefs.empty())
      return function.emitError("the loss of '")
             << entry << "' depends on no trainable weight (every weight it "
             << "reads is frozen, or none is read)";

    // Every op on the way needs a rule: one error lists those without.
    SmallVector<Operation *> missing;
    for (Operation *op : llvm::reverse(path))
      if (!isa<GradientOpInterface>(op))
        missing.push_back(op);
    if (!missing.empty()) {
      llvm::SetVector<StringRef> kinds;
      for (Operation *op : missing)
        kinds.insert(op->getName().getStringRef());
      InFlightDiagnostic diag =
          emitError(module.lookupSymbol(entry)->getLoc())
          << "cannot differentiate '" << entry << "': no gradient for "
          << llvm::join(kinds, ", ") << " (" << missing.size()
          << (missing.size() == 1 ? " op" : " ops")
          << " on the way from the parameters to the loss; not supported yet)";
      for (Operation *op : missing)
        diag.attachNote(op->getLoc()) << "'" << op->getName() << "' here";
      return failure();
    }

    OpBuilder builder(ret);
    GradientBuilder grad(builder, lossValue.getLoc());
    llvm::DenseMap<Value, Value> gradientOf;
    gradientOf[lossValue] =
        grad.splat(cast<RankedTensorType>(lossValue.getType()), 1.0);
    for (Operation *op : path) {
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value r : op->getResults()) {
        Value g = gradientOf.lookup(r);
        any |= static_cast<bool>(g);
        resultGrads.push_back(g);
      }
      if (!any)
        continue;
      grad.setLoc(op->getLoc());
      for (auto [r, g] : llvm::zip(op->getResults(), resultGrads))
        if (!g)
          g = grad.splat(cast<RankedTensorType>(r.getType()), 0.0);
      SmallVector<Value> operandGrads;
      if (failed(cast<GradientOpInterface>(op).buildGradients(grad, resultGrads,
                                                              operandGrads)))
        return failure();
      if (operandGrads.size() != op->getNumOperands())
        return op->emitError("internal error: the gradient rule of '")
               << op->getName() << "' gave " << operandGrads.size()
               << " gradients for " << op->getNumOperands() << " operands";
      for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
        if (!g || !needed.contains(operand))
          continue;
        if (g.getType() != operand.getType())
          return op->emitError("internal error: the gradient rule of '")
                 << op->getName() << "' gave " << g.getType()
                 << " for an operand of type " << operand.getType();
        Value &sum = gradientOf[operand];
        sum = sum ? grad.add(sum, g) : g;
        if (!sum)
          return failure();
      }
    }

    // The loss, then one gradient per parameter in declaration order.
    SmallVector<Value> results{lossValue};
    SmallVector<Attribute> names{builder.getStringAttr("loss")};
    SmallVector<Attribute> parameters;
    SmallVector<StringRef> buffers;
    for (WeightOp weight : module.getOps<WeightOp>()) {
      auto it = parameterRefs.find(weight.getSymName());
      if (it == parameterRefs.end())
        continue;
      // A weight no op on the way differentiates (BatchNorm's running
      // statistics: a buffer its training form writes) is not a
      // parameter: no gradient, no optimizer state.
      Value total;
      for (Value ref : it->second)
        if (Value g = gradientOf.lookup(ref))
          total = total ? grad.add(total, g) : g;
      if (!total) {
        buffers.push_back(weight.getSymName());
        continue;
      }
      results.push_back(total);
      names.push_back(weight.getSymNameAttr());
      parameters.push_back(FlatSymbolRefAttr::get(weight.getSymNameAttr()));
    }
    if (parameters.empty()) {
      if (buffers.size() > 3) {
        buffers.resize(3);
        buffers.push_back("...");
      }
      return function.emitError("the loss of '")
             << entry << "' has a gradient for no trainable weight: the "
             << "ops on the way differentiate none of those it reaches ("
             << llvm::join(buffers, ", ")
             << ": buffers, such as BatchNorm's running statistics); is every "
             << "parameter frozen?";
    }
    func::ReturnOp::create(builder, ret.getLoc(), results);
    ret.erase();
    // Gradients no parameter needs (of the inputs, say) are dropped.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    function.setFunctionType(builder.getFunctionType(
        function.getFunctionType().getInputs(), resultTypes));
    function.removeResAttrsAttr();
    for (auto [index, name] : llvm::enumerate(names))
      function.setResultAttr(index, "graph.name", name);
    function->setAttr("graph.parameters", builder.getArrayAttr(parameters));
    return success();
  }
};

} // namespace
