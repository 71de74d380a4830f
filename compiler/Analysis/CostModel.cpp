//===- CostModel.cpp - estimated time of ops and transfers ----------------===//

#include "compiler/Analysis/CostModel.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

static double numel(Value v) {
  return static_cast<double>(
      cast<RankedTensorType>(v.getType()).getNumElements());
}

OpWork modelc::estimateOpWork(Operation *op) {
  if (isa<WeightRefOp, ConstantOp>(op) || getViewOffset(op) ||
      op->getNumResults() == 0)
    return {};
  OpWork work;
  for (Value operand : op->getOperands())
    work.bytes += valueBytes(operand);
  for (Value result : op->getResults())
    work.bytes += valueBytes(result);
  double out = numel(op->getResult(0));
  work.flops =
      llvm::TypeSwitch<Operation *, double>(op)
          // A transcendental costs several multiply-adds.
          .Case<ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, SiluOp, ErfOp,
                GeluOp, PowOp>([&](Operation *) { return 8 * out; })
          .Case<MatmulOp>([&](MatmulOp m) {
            auto a = cast<RankedTensorType>(m.getLhs().getType()).getShape();
            return 2 * out * static_cast<double>(a.back());
          })
          .Case<LinearOp>([&](LinearOp l) {
            auto x = cast<RankedTensorType>(l.getInput().getType()).getShape();
            return 2 * out * static_cast<double>(x.back()) + out;
          })
          .Case<GemmOp>([&](GemmOp g) {
            auto a = cast<RankedTensorType>(g.getA().getType()).getShape();
            return 2 * out * static_cast<double>(a[g.getTransposeA() ? 0 : 1]) +
                   2 * out;
          })
          .Case<Conv2dOp>([&](Conv2dOp c) {
            auto w = cast<RankedTensorType>(c.getWeight().getType()).getShape();
            return 2 * out * static_cast<double>(w[1] * w[2] * w[3]);
          })
          .Case<MaxPool2dOp, AvgPool2dOp>([&](auto p) {
            ArrayRef<int64_t> k = p.getKernel();
            return out * static_cast<double>(k[0] * k[1]);
          })
          .Case<SoftmaxOp, LogSoftmaxOp, CrossEntropyOp>(
              [&](Operation *o) { return 5 * numel(o->getOperand(0)); })
          .Case<LayerNormOp>([&](LayerNormOp) { return 8 * out; })
          .Case<BatchNormOp>([&](BatchNormOp) { return 2 * out; })
          .Case<GlobalAvgPoolOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(
              [&](Operation *o) { return numel(o->getOperand(0)); })
          .Case<TransposeOp, ConcatOp, SliceOp, GatherOp, CastOp>(
              [&](Operation *) { return 0.0; })
          .Default([&](Operation *) { return out; });
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
