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
  return isa<WeightRefOp, ConstantOp, device::TransferOp>(op) || isView(op);
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
  if (!op->getNumOperands())
    return false;
  Type t = firstElementType(op);
  return t.isF32() || t.isF16() || t.isBF16();
}

bool modelc::isHostOnlyElementType(Type type) {
  if (type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  return integer && (integer.isUnsigned() ||
                     (integer.getWidth() != 1 && integer.getWidth() != 32 &&
                      integer.getWidth() != 64));
}

/// Whether an operand or result of `op` has a host-only element type.
static bool hasHostOnlyTypes(Operation *op) {
  auto hostOnly = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && isHostOnlyElementType(tensor.getElementType());
  };
  return llvm::any_of(op->getOperandTypes(), hostOnly) ||
         llvm::any_of(op->getResultTypes(), hostOnly);
}

bool modelc::hasKernel(Operation *op, device::DeviceKind kind) {
  if (needsNoCode(op))
    return true;
  // The communication backend works on host memory; a GPU sums over the
  // ranks with NCCL (or through the host) on its copy stream.
  if (isa<AllReduceOp>(op))
    return kind == device::DeviceKind::cpu || kind == device::DeviceKind::cuda;
  if (isa<OwnerBroadcastOp>(op))
    return kind == device::DeviceKind::cpu;
  // The runtime sums the replicas of accelerators (NCCL, or through host
  // memory); replicas on the host are summed with graph ops.
  if (isa<ReplicaAllReduceOp>(op))
    return kind != device::DeviceKind::cpu;
  bool gpu = kind == device::DeviceKind::cuda;
  if (gpu && hasHostOnlyTypes(op))
    return false;
  if (op->hasTrait<Elementwise>())
    return spellsElement(op, gpu ? codegen::CodeFlavor::Gpu
                                 : codegen::CodeFlavor::Cpu);
  return gpu ? cudaPrinterPrints(op) : hostPrinterPrints(op);
}
