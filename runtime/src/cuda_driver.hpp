// The CUDA driver, opened lazily with dlopen: the runtime has no link-time
// dependency on libcuda, so one build runs on machines with and without a
// GPU. Only the calls the runtime needs are declared here; their ABI is the
// driver API's stable C ABI (cuda.h is not needed to build the runtime).
#ifndef MODELC_RUNTIME_CUDA_DRIVER_HPP
#define MODELC_RUNTIME_CUDA_DRIVER_HPP

#include "modelc/runtime.hpp"

namespace modelc::detail {

/// The GPUs this process sees, probed once: dlopen of the driver
/// (MODELC_CUDA_DRIVER names the library file, else "libcuda.so.1"), cuInit,
/// then per device its name, memory and compute capability. The driver
/// applies CUDA_VISIBLE_DEVICES, so ordinals are the visible ones.
const GpuInventory &probeGpus();

} // namespace modelc::detail

#endif // MODELC_RUNTIME_CUDA_DRIVER_HPP
