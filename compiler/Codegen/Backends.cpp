//===- Backends.cpp - which device kind's printer can emit an op ----------===//

#include "compiler/Codegen/Backends.h"
#include "compiler/Codegen/EmitHelpers.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include <string>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// The ops, besides elementwise ones, that both printers emit (HostPrinter's
/// emitOp and CudaPrinter's emitGpuOp handle exactly these): keep in step
/// with them when an op is added.
bool printedByBothBackends(Operation *op) {
  return isa<LinearOp, MatmulOp, GemmOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
             BatchNormOp, Conv2dOp, MaxPool2dOp, AvgPool2dOp, GlobalAvgPoolOp,
             TransposeOp, ConcatOp, SliceOp, GatherOp, ReduceSumOp,
             ReduceMeanOp, ReduceMaxOp, CrossEntropyOp>(op);
}

/// Ops that need no code of their own.
bool needsNoCode(Operation *op) {
  return isa<WeightRefOp, ConstantOp, device::TransferOp>(op) ||
         getViewOffset(op).has_value();
}

Type firstElementType(Operation *op) {
  return cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
}

/// Whether EmitHelpers spells one element of elementwise `op` for `flavor`.
bool spellsElement(Operation *op, codegen::CodeFlavor flavor) {
  SmallVector<std::string> args;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    args.push_back("x" + std::to_string(i));
  return !codegen::elementExpression(op, args, flavor).empty();
}

} // namespace

bool modelc::hasKernel(Operation *op, device::DeviceKind kind) {
  if (needsNoCode(op))
    return true;
  bool gpu = kind == device::DeviceKind::cuda;
  if (op->hasTrait<Elementwise>())
    return spellsElement(op, gpu ? codegen::CodeFlavor::Gpu
                                 : codegen::CodeFlavor::Cpu);
  if (!printedByBothBackends(op))
    return false;
  // Matrix products and convolutions of integers have no kernel yet, and
  // the CUDA reductions are float-only.
  if (isa<MatmulOp, LinearOp, GemmOp, Conv2dOp>(op))
    return isa<FloatType>(firstElementType(op));
  if (gpu && isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
    return isa<FloatType>(firstElementType(op));
  return true;
}
