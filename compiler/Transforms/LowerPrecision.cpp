//===- LowerPrecision.cpp - an f32 model stored in f16 or bf16 ------------===//
//
// model.half() at compile time: rewrites every f32 tensor of the model
// (weights, constants, op results) to f16 or bf16, with casts where the
// entry points take and return f32.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace modelc {
#define GEN_PASS_DEF_LOWERPRECISIONPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// `type` with `half` elements when it is an f32 tensor.
Type narrow(Type type, Type half) {
  return isF32Tensor(type) ? cast<RankedTensorType>(type).clone(half) : type;
}

/// A constant's f32 value rounded to `half` (to nearest even).
Attribute narrowValue(Attribute value, Type half) {
  auto elements = dyn_cast<DenseFPElementsAttr>(value);
  if (!elements || !elements.getElementType().isF32())
    return value;
  const llvm::fltSemantics &semantics =
      cast<FloatType>(half).getFloatSemantics();
  return elements.mapValues(half, [&](const APFloat &v) {
    APFloat rounded = v;
    bool lost;
    rounded.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    return rounded.bitcastToAPInt();
  });
}

/// Rewrites the body of `function` to `half`, with casts at its edges.
void narrowFunction(func::FuncOp function, Type half) {
  Block &entry = function.front();
  function.walk([&](Operation *op) {
    if (isa<func::ReturnOp>(op))
      return;
    if (auto cast = dyn_cast<CastOp>(op); cast && cast.getDtype().isF32())
      cast.setDtype(half);
    if (auto constant = dyn_cast<ConstantOp>(op))
      constant.setValueAttr(
          cast<ElementsAttr>(narrowValue(constant.getValueAttr(), half)));
    for (OpResult result : op->getResults())
      result.setType(narrow(result.getType(), half));
  });
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  for (BlockArgument argument : entry.getArguments()) {
    if (!isF32Tensor(argument.getType()))
      continue;
    auto inBody = [](OpOperand &use) {
      return !isa<func::ReturnOp>(use.getOwner());
    };
    if (llvm::none_of(argument.getUses(), inBody))
      continue;
    auto cast = CastOp::create(builder, argument.getLoc(), argument, half);
    argument.replaceUsesWithIf(cast, [&](OpOperand &use) {
      return use.getOwner() != cast && inBody(use);
    });
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  builder.setInsertionPoint(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    Type declared = function.getResultTypes()[operand.getOperandNumber()];
    if (operand.get().getType() == declared)
      continue;
    Value value = operand.get();
    operand.set(
        CastOp::create(builder, value.getLoc(), value,
                       cast<RankedTensorType>(declared).getElementType()));
  }
}

struct LowerPrecisionPass
    : modelc::impl::LowerPrecisionPassBase<LowerPrecisionPass> {
  using LowerPrecisionPassBase::LowerPrecisionPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    Type half;
    if (precision == "f16")
      half = Float16Type::get(context);
    else if (precision == "bf16")
      half = BFloat16Type::get(context);
    else if (precision == "f32")
      return;
    else {
      module.emitError("unknown precision '")
          << precision << "': use f32, f16 or bf16";
      return signalPassFailure();
    }
    Type f32 = Float32Type::get(context);
    for (WeightOp weight : module.getOps<WeightOp>()) {
      if (!isF32Tensor(weight.getType()))
        continue;
      weight.setType(narrow(weight.getType(), half));
      weight.setSourceDtype(f32);
    }
    for (func::FuncOp function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        narrowFunction(function, half);
  }
};

} // namespace
