#include "cuda_driver.hpp"
#include "dl_symbol.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace modelc {
namespace detail {
namespace {

constexpr CUresult kSuccess = 0;
void *driverHandle = nullptr; // set by probe(), never closed
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

GpuInventory probe() {
  GpuInventory inv;
  const char *env = std::getenv("MODELC_CUDA_DRIVER");
  std::string library = env && *env ? env : "libcuda.so.1";
  inv.driver_library = library;
  // The handle stays open for the life of the process, as the CUDA runtime
  // does: unloading a driver that has initialised is not supported.
  void *handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  driverHandle = handle;
  if (!handle) {
    const char *why = ::dlerror();
    inv.status = "no CUDA driver: cannot load " + library +
                 (why ? std::string(" (") + why + ")" : std::string());
    return inv;
  }
  DriverApi api{};
  std::string missing;
  // cuDeviceTotalMem is the 64-bit "_v2" entry point since CUDA 3.2.
  resolveSymbol(handle, "cuInit", api.cuInit, missing);
  resolveSymbol(handle, "cuDriverGetVersion", api.cuDriverGetVersion, missing);
  resolveSymbol(handle, "cuDeviceGetCount", api.cuDeviceGetCount, missing);
  resolveSymbol(handle, "cuDeviceGet", api.cuDeviceGet, missing);
  resolveSymbol(handle, "cuDeviceGetName", api.cuDeviceGetName, missing);
  resolveSymbol(handle, "cuDeviceTotalMem_v2", api.cuDeviceTotalMem, missing);
  resolveSymbol(handle, "cuDeviceGetAttribute", api.cuDeviceGetAttribute,
                missing);
  resolveSymbol(handle, "cuGetErrorName", api.cuGetErrorName, missing);
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

DriverApi errorApi() {
  DriverApi api{};
  if (driverHandle)
    api.cuGetErrorName = reinterpret_cast<decltype(api.cuGetErrorName)>(
        ::dlsym(driverHandle, "cuGetErrorName"));
  return api;
}

} // namespace

const GpuInventory &probeGpus() {
  static std::once_flag once;
  static GpuInventory inventory;
  std::call_once(once, [] { inventory = probe(); });
  return inventory;
}

std::string cudaErrorName(CUresult code) { return errorName(errorApi(), code); }

void cudaCheck(CUresult rc, const char *call, const std::string &device,
               const std::string &what) {
  if (rc != kSuccess)
    throw Error(std::string(call) + " failed on " + device + " (" + what +
                "): " + cudaErrorName(rc));
}

const CudaApi *cudaApi(std::string &why) {
  static std::once_flag once;
  static CudaApi api{};
  static std::string missing;
  std::call_once(once, [] {
    const GpuInventory &inv = probeGpus();
    if (!driverHandle || inv.gpus.empty()) {
      missing = inv.status;
      return;
    }
    void *h = driverHandle;
    resolveSymbol(h, "cuDeviceGet", api.cuDeviceGet, missing);
    resolveSymbol(h, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain,
                  missing);
    resolveSymbol(h, "cuDevicePrimaryCtxRelease_v2",
                  api.cuDevicePrimaryCtxRelease, missing);
    resolveSymbol(h, "cuCtxSetCurrent", api.cuCtxSetCurrent, missing);
    resolveSymbol(h, "cuMemAlloc_v2", api.cuMemAlloc, missing);
    resolveSymbol(h, "cuMemFree_v2", api.cuMemFree, missing);
    resolveSymbol(h, "cuMemGetInfo_v2", api.cuMemGetInfo, missing);
    resolveSymbol(h, "cuMemHostAlloc", api.cuMemHostAlloc, missing);
    resolveSymbol(h, "cuMemFreeHost", api.cuMemFreeHost, missing);
    resolveSymbol(h, "cuMemcpyHtoD_v2", api.cuMemcpyHtoD, missing);
    resolveSymbol(h, "cuMemcpyHtoDAsync_v2", api.cuMemcpyHtoDAsync, missing);
    resolveSymbol(h, "cuMemcpyDtoHAsync_v2", api.cuMemcpyDtoHAsync, missing);
    resolveSymbol(h, "cuMemcpyDtoDAsync_v2", api.cuMemcpyDtoDAsync, missing);
    resolveSymbol(h, "cuMemcpyPeerAsync", api.cuMemcpyPeerAsync, missing);
    resolveSymbol(h, "cuStreamCreate", api.cuStreamCreate, missing);
    resolveSymbol(h, "cuStreamDestroy_v2", api.cuStreamDestroy, missing);
    resolveSymbol(h, "cuStreamSynchronize", api.cuStreamSynchronize, missing);
    resolveSymbol(h, "cuStreamWaitEvent", api.cuStreamWaitEvent, missing);
    resolveSymbol(h, "cuEventCreate", api.cuEventCreate, missing);
    resolveSymbol(h, "cuEventDestroy_v2", api.cuEventDestroy, missing);
    resolveSymbol(h, "cuEventRecord", api.cuEventRecord, missing);
    resolveSymbol(h, "cuEventSynchronize", api.cuEventSynchronize, missing);
    resolveSymbol(h, "cuDeviceCanAccessPeer", api.cuDeviceCanAccessPeer,
                  missing);
    resolveSymbol(h, "cuCtxEnablePeerAccess", api.cuCtxEnablePeerAccess,
                  missing);
    resolveSymbol(h, "cuModuleLoadData", api.cuModuleLoadData, missing);
    resolveSymbol(h, "cuModuleGetFunction", api.cuModuleGetFunction, missing);
    resolveSymbol(h, "cuModuleUnload", api.cuModuleUnload, missing);
    resolveSymbol(h, "cuLaunchKernel", api.cuLaunchKernel, missing);
    // Optional: only runs with CUDA graphs need them.
    std::string graphs;
    resolveSymbol(h, "cuStreamBeginCapture_v2", api.cuStreamBeginCapture,
                  graphs);
    resolveSymbol(h, "cuStreamEndCapture", api.cuStreamEndCapture, graphs);
    resolveSymbol(h, "cuGraphInstantiateWithFlags", api.cuGraphInstantiate,
                  graphs);
    resolveSymbol(h, "cuGraphLaunch", api.cuGraphLaunch, graphs);
    resolveSymbol(h, "cuGraphExecDestroy", api.cuGraphExecDestroy, graphs);
    resolveSymbol(h, "cuGraphDestroy", api.cuGraphDestroy, graphs);
    api.graphsMissing = graphs;
    std::string hostFunc; // optional: traced runs on GPUs need it
    resolveSymbol(h, "cuLaunchHostFunc", api.cuLaunchHostFunc, hostFunc);
    if (!missing.empty())
      missing = "the CUDA driver " + inv.driver_library + " lacks " + missing;
  });
  if (!missing.empty()) {
    why = missing;
    return nullptr;
  }
  return &api;
}

} // namespace detail

const GpuInventory &visible_gpus() { return detail::probeGpus(); }

} // namespace modelc
