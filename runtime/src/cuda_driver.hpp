// The CUDA driver, opened lazily with dlopen: the runtime has no link-time
// dependency on libcuda, so one build runs on machines with and without a
// GPU. Only the calls the runtime needs are declared here; their ABI is the
// driver API's stable C ABI (cuda.h is not needed to build the runtime).
#ifndef MODELC_RUNTIME_CUDA_DRIVER_HPP
#define MODELC_RUNTIME_CUDA_DRIVER_HPP

#include "modelc/runtime.hpp"

namespace modelc::detail {

// The driver API's types, as cuda.h declares them.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUdeviceptr = unsigned long long;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// The driver calls that running a plan on GPUs needs (resolved on first
/// need from the library probeGpus opened).
struct CudaApi {
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext,
                                size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuDeviceCanAccessPeer)(int *, CUdevice, CUdevice);
  CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  // CUDA graphs (LoadOptions::cuda_graphs); null when the driver lacks them
  // (graphsMissing says which).
  CUresult (*cuStreamBeginCapture)(CUstream, int mode);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  std::string graphsMissing;
  // Traced runs (LoadOptions::trace): a host function run when a stream
  // reaches it; null when the driver lacks it.
  CUresult (*cuLaunchHostFunc)(CUstream, void (*)(void *), void *);
};

/// The driver API for plans on GPUs, or null with `why` set (no driver, or
/// one that lacks a call).
const CudaApi *cudaApi(std::string &why);

/// The name of a driver error code ("CUDA_ERROR_OUT_OF_MEMORY").
std::string cudaErrorName(CUresult code);

/// Throws modelc::Error "CALL failed on DEVICE (WHAT): NAME" unless rc is 0.
void cudaCheck(CUresult rc, const char *call, const std::string &device,
               const std::string &what);

/// As cudaCheck, for the run path: `what()` makes the message only when the
/// call failed.
template <typename What>
void cudaCheckLazy(CUresult rc, const char *call, const std::string &device,
                   const What &what) {
  if (rc != 0)
    cudaCheck(rc, call, device, what());
}

/// The GPUs this process sees, probed once: dlopen of the driver
/// (MODELC_CUDA_DRIVER names the library file, else "libcuda.so.1"), cuInit,
/// then per device its name, memory and compute capability. The driver
/// applies CUDA_VISIBLE_DEVICES, so ordinals are the visible ones.
const GpuInventory &probeGpus();

} // namespace modelc::detail

#endif // MODELC_RUNTIME_CUDA_DRIVER_HPP
