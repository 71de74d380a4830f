//===- CostModel.cpp - estimated time of ops and transfers ----------------===//

#include "compiler/Analysis/CostModel.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

OpWork modelc::estimateOpWork(Operation *op) {
  if (isa<WeightRefOp, ConstantOp>(op) || isView(op) ||
      op->getNumResults() == 0)
    return {};
  OpWork work;
  for (Value operand : op->getOperands())
    work.bytes += valueBytes(operand);
  for (Value result : op->getResults())
    work.bytes += valueBytes(result);
  // The op's own count (GraphInterfaces.td), else one operation per result
  // element, several multiply-adds for a transcendental.
  if (auto cost = dyn_cast<CostOpInterface>(op)) {
    work.flops = cost.getFlops();
  } else {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    work.flops = static_cast<double>(type.getNumElements()) *
                 (op->hasTrait<Transcendental>() ? 8 : 1);
  }
  return work;
}

double modelc::estimateOpTime(Operation *op, const DeviceDesc &device) {
  OpWork work = estimateOpWork(op);
  if (work.flops == 0 && work.bytes == 0)
    return 0.0;
  Type element =
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  if (op->getNumOperands())
    element =
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  double compute = work.flops / device.peakFor(element);
  double memory = work.bytes / device.bandwidth;
  return device.launchOverhead + std::max(compute, memory);
}

std::string modelc::formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (unit == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.1f %s", value, units[unit]);
  return text;
}
