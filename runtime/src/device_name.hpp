// device_name.hpp - the kinds of device a plan names ("cpu", "sim:N",
// "cuda:N"), read in one place: everything after plan parsing works with
// DeviceKind.
#ifndef MODELC_RUNTIME_DEVICE_NAME_HPP
#define MODELC_RUNTIME_DEVICE_NAME_HPP

#include <optional>
#include <string>

namespace modelc::detail {

/// The kinds of device the runtime drives; one Device implementation each.
enum class DeviceKind {
  Cpu,  ///< "cpu": the host, running the plan's CPU code on the caller's pool.
  Sim,  ///< "sim:N": a simulated GPU, host memory of its own and a worker.
  Cuda, ///< "cuda:N": an NVIDIA GPU through the driver API.
};

/// A device of a plan: its kind and N of "sim:N" or "cuda:N" (0 for "cpu").
struct DeviceName {
  DeviceKind kind;
  int ordinal = 0;
};

/// Reads a device name of a plan; nullopt when it is not one.
std::optional<DeviceName> parseDeviceName(const std::string &name);

/// The kind that `text` (a device name or a device request such as
/// "cuda:0,cuda:2" or "cuda:0=cuda:1") starts with, ordinal or not;
/// nullopt when it names none.
std::optional<DeviceKind> deviceKindOf(const std::string &text);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DEVICE_NAME_HPP
