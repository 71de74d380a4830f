//===- PlacedOn.h - which device a placed op runs on ------------*- C++ -*-===//
//
// The backend passes after placement ask of an op which device it runs on,
// and whether the host printer (the CPU and sim devices) or a GPU computes
// it: one spelling of those questions for all of them.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_TRANSFORMS_PLACEDON_H
#define MODELC_COMPILER_TRANSFORMS_PLACEDON_H

#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

namespace modelc {

/// The device placement gave `op`, or null.
inline device::DeviceAttr deviceOf(mlir::Operation *op) {
  return op->getAttrOfType<device::DeviceAttr>(graph::kDeviceAttrName);
}

/// Whether `op` runs on a GPU (`cuda`).
inline bool onGpu(mlir::Operation *op) {
  device::DeviceAttr device = deviceOf(op);
  return device && device.getKind() == device::DeviceKind::cuda;
}

/// Whether the host printer computes `op` (the CPU or a sim device).
inline bool onHost(mlir::Operation *op) {
  device::DeviceAttr device = deviceOf(op);
  return device && device.getKind() != device::DeviceKind::cuda;
}

/// A pass that wraps ops in a new op (a packed product, a GEMM, a fused
/// loop) gives it the rank that runs them (graph.shard, set by
/// modelc-shard-optimizer-state): that of `from`, the op whose result the
/// wrapper takes over (the ops a wrapper takes serve it alone, so they
/// share it). The printer guards top-level ops only.
inline void keepShardGuard(mlir::Operation *from, mlir::Operation *to) {
  if (mlir::Attribute shard =
          from->getAttr(graph::GraphDialect::kShardAttrName))
    to->setAttr(graph::GraphDialect::kShardAttrName, shard);
}

/// Whether `module`'s plan is the CPU alone, or it has no target (a file
/// run through modelc-opt): its entry points then run their ops one after
/// the other in the body's order, with no streams (modelc-schedule-streams
/// leaves them alone, the CPU printer emits straight-line code).
inline bool planIsCpuAlone(mlir::ModuleOp module) {
  auto target = module->getAttrOfType<device::TargetAttr>("device.target");
  return !target || (target.getDevices().size() < 2 &&
                     mlir::cast<device::DeviceSpecAttr>(target.getDevices()[0])
                             .getDevice()
                             .getKind() == device::DeviceKind::cpu);
}

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_PLACEDON_H
