//===- Target.h - the machine a plan runs on --------------------*- C++ -*-===//
//
// A target lists devices (kind, index, memory capacity, memory bandwidth,
// kernel launch overhead, peak FLOP/s per element type) and the links
// between them (bandwidth, latency). It comes from a named preset or a JSON
// file (schema in docs/placement.md) and is recorded in the IR as
// #device.target.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_TARGET_TARGET_H
#define MODELC_COMPILER_TARGET_TARGET_H

#include "dialects/Device/IR/DeviceAttrs.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc {

struct DeviceDesc {
  device::DeviceKind kind = device::DeviceKind::cpu;
  unsigned index = 0;
  uint64_t memory = 0;               ///< bytes
  double bandwidth = 0;              ///< bytes/s of device memory
  double launchOverhead = 0;         ///< seconds per kernel
  llvm::StringMap<double> peakFlops; ///< per element type name, op/s

  std::string name() const; ///< "cpu", "cuda:1"
  bool isHost() const { return kind == device::DeviceKind::cpu; }
  /// Peak for an element type; types without a figure fall back to f32's.
  double peakFor(mlir::Type elementType) const;
};

struct LinkDesc {
  unsigned from = 0, to = 0; ///< indices into TargetDescription::devices
  double bandwidth = 0;      ///< bytes/s
  double latency = 0;        ///< seconds
};

struct TargetDescription {
  std::string name;
  std::vector<DeviceDesc> devices; ///< devices[0] is the CPU
  std::vector<LinkDesc> links;

  /// Index of the device named `name` ("cuda:1"), if the target has it.
  std::optional<unsigned> find(llvm::StringRef name) const;
  std::optional<unsigned> find(device::DeviceAttr device) const;
  /// "cpu, cuda:0, cuda:1", for messages.
  std::string deviceNames() const;
  device::DeviceAttr deviceAttr(mlir::MLIRContext *context,
                                unsigned index) const;
  /// Seconds to move `bytes` from device `from` to `to`: the direct link,
  /// else through the CPU (two hops), else the slowest figures known.
  double transferTime(unsigned from, unsigned to, uint64_t bytes) const;

  device::TargetAttr toAttr(mlir::MLIRContext *context) const;
  static TargetDescription fromAttr(device::TargetAttr attr);
};

/// Names of the presets: cpu, h200, h200x2, h200x4, h200x8, cpu+sim2,
/// cpu+sim4.
std::vector<std::string> targetPresetNames();

/// A preset by name, or a JSON file; on failure `error` says why.
std::optional<TargetDescription> loadTarget(llvm::StringRef nameOrPath,
                                            std::string &error);

/// A pass's target: as above, with the failure emitted as an error at
/// `where` (the pass then fails).
std::optional<TargetDescription> loadTarget(llvm::StringRef nameOrPath,
                                            mlir::Operation *where);

/// Parses the JSON form (docs/placement.md); `source` names it in errors.
std::optional<TargetDescription> parseTargetJson(llvm::StringRef json,
                                                 llvm::StringRef source,
                                                 std::string &error);

} // namespace modelc

#endif // MODELC_COMPILER_TARGET_TARGET_H
