//===- Backends.cpp - which device kind's printer can emit an op ----------===//

#include "compiler/Codegen/Backends.h"
#include "compiler/Codegen/CudaPrinter.h"
#include "compiler/Codegen/EmitHelpers.h"
#include "compiler/Codegen/HostPrinter.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include <string>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

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

bool modelc::floatOperands(Operation *op) {
  return op->getNumOperands() && isa<FloatType>(firstElementType(op));
}

bool modelc::hasKernel(Operation *op, device::DeviceKind kind) {
  if (needsNoCode(op))
    return true;
  // The communication backend works on host memory.
  if (isa<AllReduceOp>(op))
    return kind == device::DeviceKind::cpu;
  bool gpu = kind == device::DeviceKind::cuda;
  if (op->hasTrait<Elementwise>())
    return spellsElement(op, gpu ? codegen::CodeFlavor::Gpu
                                 : codegen::CodeFlavor::Cpu);
  return gpu ? cudaPrinterPrints(op) : hostPrinterPrints(op);
}
