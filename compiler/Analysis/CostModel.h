//===- CostModel.h - estimated time of ops and transfers --------*- C++ -*-===//
//
// The only place placement estimates come from. An op's time on a device is
// its launch overhead plus the larger of compute time (FLOPs / peak FLOP/s
// for its element type) and memory time (bytes read and written / memory
// bandwidth): a roofline. A transfer costs the link's latency plus bytes
// over its bandwidth (TargetDescription::transferTime). docs/placement.md
// lists the FLOP counts per op.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_ANALYSIS_COSTMODEL_H
#define MODELC_COMPILER_ANALYSIS_COSTMODEL_H

#include "compiler/Target/Target.h"

#include "mlir/IR/Operation.h"

namespace modelc {

struct OpWork {
  double flops = 0; ///< arithmetic operations
  double bytes = 0; ///< bytes of operands read plus results written
};

/// FLOPs and bytes of one graph op. Weight reads count as bytes (they come
/// from device memory); aliases (reshape, flatten) and sources (weight_ref,
/// constant) cost nothing.
OpWork estimateOpWork(mlir::Operation *op);

/// "1.5 GB" (decimal units) for reports and messages.
std::string formatBytes(uint64_t bytes);

/// Seconds `op` takes on `device`: 0 for free ops, else launch overhead +
/// max(flops / peak, bytes / bandwidth).
double estimateOpTime(mlir::Operation *op, const DeviceDesc &device);

} // namespace modelc

#endif // MODELC_COMPILER_ANALYSIS_COSTMODEL_H
