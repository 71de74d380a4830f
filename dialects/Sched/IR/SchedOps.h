//===- SchedOps.h - sched dialect operations --------------------*- C++ -*-===//

#ifndef MODELC_DIALECTS_SCHED_IR_SCHEDOPS_H
#define MODELC_DIALECTS_SCHED_IR_SCHEDOPS_H

#include "dialects/Device/IR/DeviceAttrs.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "dialects/Sched/IR/SchedAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Sched/IR/SchedOps.h.inc"

namespace modelc::sched {
/// The device whose streams run `op`, and in whose arena its buffers live:
/// a transfer's destination, an op's `device`, or the host.
device::DeviceAttr runningDevice(mlir::Operation *op);

/// Whether every reader of `v` is a sched.packed_product convolution that
/// reads it as its input or as the operand of its sum (and so can take
/// oneDNN's layout as it is).
bool readsKeptLayout(mlir::Value v);

/// Whether Winograd's algorithm applies to `conv` (oneDNN's, on AVX-512):
/// f32, 3x3, stride 1, dilation 1, one group, a multiple of 16 channels in
/// and out.
bool suitsWinograd(graph::Conv2dOp conv);

/// The unit attribute modelc-select-conv-algorithms sets on a CPU
/// graph.conv_transpose2d computed as a GEMM and col2im (with scratch for
/// one group's columns) rather than tap by tap.
constexpr const char kCol2imAttrName[] = "sched.col2im";

/// Channels of a convolution output kept in oneDNN's layout are blocked by
/// up to this many, the last block padded: its buffer is sized for it.
constexpr int64_t kKeptLayoutChannelBlock = 16;
} // namespace modelc::sched

#endif // MODELC_DIALECTS_SCHED_IR_SCHEDOPS_H
