#include "cuda_driver.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace modelc {
namespace detail {
namespace {

// The driver API's types, as cuda.h declares them.
using CUresult = int;
using CUdevice = int;
constexpr CUresult kSuccess = 0;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuGetErrorName)(CUresult, const char **);
};

std::string errorName(const DriverApi &api, CUresult code) {
  const char *name = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(code, &name) == kSuccess && name)
    return name;
  // The stub libcuda of the toolkit names no errors; say what the usual
  // ones mean.
  switch (code) {
  case 34:
    return "CUDA_ERROR_STUB_LIBRARY (the CUDA toolkit's stub libcuda, not a "
           "driver)";
  case 35:
    return "CUDA_ERROR_INSUFFICIENT_DRIVER (the driver is older than CUDA "
           "needs)";
  case 100:
    return "CUDA_ERROR_NO_DEVICE";
  default:
    return "CUDA error " + std::to_string(code);
  }
}

template <typename Fn>
bool resolve(void *handle, const char *symbol, Fn &fn, std::string &missing) {
  fn = reinterpret_cast<Fn>(::dlsym(handle, symbol));
  if (!fn && missing.empty())
    missing = symbol;
  return fn != nullptr;
}

GpuInventory probe() {
  GpuInventory inv;
  const char *env = std::getenv("MODELC_CUDA_DRIVER");
  std::string library = env && *env ? env : "libcuda.so.1";
  inv.driver_library = library;
  // The handle stays open for the life of the process, as the CUDA runtime
  // does: unloading a driver that has initialised is not supported.
  void *handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    inv.status = "no CUDA driver: cannot load " + library +
                 (why ? std::string(" (") + why + ")" : std::string());
    return inv;
  }
  DriverApi api{};
  std::string missing;
  // cuDeviceTotalMem is the 64-bit "_v2" entry point since CUDA 3.2.
  resolve(handle, "cuInit", api.cuInit, missing);
  resolve(handle, "cuDriverGetVersion", api.cuDriverGetVersion, missing);
  resolve(handle, "cuDeviceGetCount", api.cuDeviceGetCount, missing);
  resolve(handle, "cuDeviceGet", api.cuDeviceGet, missing);
  resolve(handle, "cuDeviceGetName", api.cuDeviceGetName, missing);
  resolve(handle, "cuDeviceTotalMem_v2", api.cuDeviceTotalMem, missing);
  resolve(handle, "cuDeviceGetAttribute", api.cuDeviceGetAttribute, missing);
  resolve(handle, "cuGetErrorName", api.cuGetErrorName, missing);
  if (!missing.empty()) {
    inv.status = "the CUDA driver " + library + " lacks " + missing +
                 " (not a CUDA driver, or too old)";
    return inv;
  }
  int version = 0;
  if (api.cuDriverGetVersion(&version) == kSuccess)
    inv.driver_version = version;
  if (CUresult rc = api.cuInit(0); rc != kSuccess) {
    inv.status = "the CUDA driver " + library +
                 " found no usable GPU: cuInit: " + errorName(api, rc);
    return inv;
  }
  int count = 0;
  if (CUresult rc = api.cuDeviceGetCount(&count); rc != kSuccess) {
    inv.status = "cuDeviceGetCount: " + errorName(api, rc);
    return inv;
  }
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    GpuInfo info;
    info.ordinal = i;
    char name[256] = {};
    size_t bytes = 0;
    CUresult rc = api.cuDeviceGet(&dev, i);
    if (rc == kSuccess)
      rc = api.cuDeviceGetName(name, sizeof(name) - 1, dev);
    if (rc == kSuccess)
      rc = api.cuDeviceTotalMem(&bytes, dev);
    if (rc == kSuccess)
      rc = api.cuDeviceGetAttribute(&info.compute_major,
                                    kAttrComputeCapabilityMajor, dev);
    if (rc == kSuccess)
      rc = api.cuDeviceGetAttribute(&info.compute_minor,
                                    kAttrComputeCapabilityMinor, dev);
    if (rc != kSuccess) {
      inv.gpus.clear();
      inv.status =
          "cannot query GPU " + std::to_string(i) + ": " + errorName(api, rc);
      return inv;
    }
    info.name = name;
    info.memory_bytes = bytes;
    inv.gpus.push_back(std::move(info));
  }
  inv.status = count ? std::to_string(count) + " GPU" + (count > 1 ? "s" : "")
                     : "the CUDA driver " + library + " reports no GPU";
  return inv;
}

} // namespace

const GpuInventory &probeGpus() {
  static std::once_flag once;
  static GpuInventory inventory;
  std::call_once(once, [] { inventory = probe(); });
  return inventory;
}

} // namespace detail

const GpuInventory &visible_gpus() { return detail::probeGpus(); }

} // namespace modelc
