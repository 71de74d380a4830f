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
#include <array>
#include <optional>

#define GET_ATTRDEF_CLASSES
#include "dialects/Sched/IR/SchedAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Sched/IR/SchedOps.h.inc"

namespace modelc::sched {
/// The device whose streams run `op`, and in whose arena its buffers live:
/// a transfer's destination, an op's `device`, or the host.
device::DeviceAttr runningDevice(mlir::Operation *op);

/// Whether `op` runs on its device's copy stream, beside the compute that
/// goes on: a transfer, a member of a sum over the replicas, and a sum
/// over the ranks placed on a GPU (graph.all_reduce through NCCL).
bool runsOnCopyStream(mlir::Operation *op);

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

/// The symbol attribute modelc-update-weights-in-place sets on a
/// sched.fused whose value a graph.assign writes into that weight: the loop
/// writes the value straight into the weight's storage (no buffer in the
/// arena, no copy at the assign).
constexpr const char kWritesWeightAttrName[] = "sched.writes_weight";

/// The string attribute modelc-select-conv-algorithms sets on a CPU
/// graph.conv2d whose weight is not a constant, graph.conv_transpose2d or
/// graph.conv2d_weight_grad (a training step's convolutions) that runs
/// through oneDNN's convolution primitives (modelc_runtime_api::conv):
/// "winograd" (Winograd's algorithm where oneDNN has it) or "direct".
constexpr const char kDnnlConvAttrName[] = "sched.dnnl_conv";

/// The forward convolution `op` (a graph.conv2d, a graph.conv_transpose2d
/// as the input gradient of a convolution, a graph.conv2d_weight_grad as
/// its weight gradient) computes or differentiates, as modelc_conv's
/// `shape` (n, c, h, w, o, kh, kw, oh, ow, strides, padding top, left,
/// bottom, right, dilations, groups; padding bottom and right from the
/// sizes); none for other ops, non-f32 operands, a transposed convolution
/// with a bias, shapes that are not static, or sizes oneDNN's forward
/// convolution cannot describe (a bottom or right padding below 0).
std::optional<std::array<int64_t, 18>> dnnlConvShape(mlir::Operation *op);

/// Channels of a convolution output kept in oneDNN's layout are blocked by
/// up to this many, the last block padded: its buffer is sized for it.
constexpr int64_t kKeptLayoutChannelBlock = 16;
} // namespace modelc::sched

#endif // MODELC_DIALECTS_SCHED_IR_SCHEDOPS_H
