// device_cuda.cpp - the "cuda:N" device: an NVIDIA GPU through the driver
// API and cuBLASLt, both opened at run time.
#include "device_cuda.hpp"

#include <algorithm>

#include "model_impl.hpp"
#include "nccl.hpp"
#include "run_state.hpp"

namespace modelc::detail {

namespace {

/// Host memory the GPUs copy to and from directly (page-locked, for every
/// context: CU_MEMHOSTALLOC_PORTABLE).
struct PinnedMemory : HostMemory {
  PinnedMemory(const CudaApi &cuda, CUcontext ctx, uint64_t bytes,
               const std::string &what)
      : cuda(cuda), ctx(ctx) {
    void *p = nullptr;
    cudaCheck(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "the host", what);
    cudaCheck(cuda.cuMemHostAlloc(&p, bytes ? bytes : 64,
                                  /*CU_MEMHOSTALLOC_PORTABLE*/ 1),
              "cuMemHostAlloc", "the host",
              what + " (" + std::to_string(bytes) + " bytes)");
    memory = static_cast<unsigned char *>(p);
  }
  // On whichever thread drops it: the context it was made in first (the
  // call fails without one, and the memory would stay locked).
  ~PinnedMemory() override {
    if (cuda.cuCtxSetCurrent(ctx) == 0)
      cuda.cuMemFreeHost(memory);
  }
  const CudaApi &cuda;
  CUcontext ctx;
};

CUdeviceptr devicePointer(const void *p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

} // namespace

CudaRun::~CudaRun() {
  if (!ctx || cuda->cuCtxSetCurrent(ctx) != 0)
    return; // nothing can be freed without the context
  if (cublasLt)
    releaseGemmState(*cublasLt, *cuda, gemm);
  if (computeStream)
    cuda->cuStreamDestroy(computeStream);
  if (copyStream)
    cuda->cuStreamDestroy(copyStream);
  if (downloadStream)
    cuda->cuStreamDestroy(downloadStream);
  if (arenaMemory)
    cuda->cuMemFree(arenaMemory);
}

CudaDevice::~CudaDevice() {
  if (!ctx_)
    return;
  if (cuda().cuCtxSetCurrent(ctx_) == 0) { // else nothing can be freed
    for (CUdeviceptr p : gpuWeights_)
      cuda().cuMemFree(p);
    if (module_)
      cuda().cuModuleUnload(module_);
  }
  cuda().cuDevicePrimaryCtxRelease(gpu_);
}

bool CudaDevice::supportsCapture(std::string &why) const {
  if (cuda().graphsMissing.empty())
    return true;
  why = "the CUDA driver lacks " + cuda().graphsMissing;
  return false;
}

void CudaDevice::setUp() {
  const modelc_model_desc &desc = *setup_.desc;
  std::string what = "plan '" + setup_.planName + "'";
  cudaCheck(cuda().cuDeviceGet(&gpu_, setup_.physical), "cuDeviceGet", name(),
            what);
  cudaCheck(cuda().cuDevicePrimaryCtxRetain(&ctx_, gpu_),
            "cuDevicePrimaryCtxRetain", name(), what);
  if (!desc.gpu_image)
    return;
  makeCurrent(what);
  cudaCheck(cuda().cuModuleLoadData(&module_, desc.gpu_image),
            "cuModuleLoadData", name(), "the model's GPU code, " + what);
  for (uint32_t k = 0; k < desc.num_kernels; ++k) {
    CUfunction fn = nullptr;
    cudaCheck(cuda().cuModuleGetFunction(&fn, module_, desc.kernel_names[k]),
              "cuModuleGetFunction", name(),
              "kernel '" + std::string(desc.kernel_names[k]) + "'");
    kernels_.push_back(fn);
  }
}

void CudaDevice::connect(const std::vector<Device *> &devices) {
  // Direct copies to the plan's other GPUs where the hardware allows them
  // (NVLink or PCIe peer access); elsewhere the driver stages through the
  // host.
  for (Device *device : devices) {
    auto *peer = dynamic_cast<CudaDevice *>(device);
    if (!peer || peer->setup_.physical == setup_.physical)
      continue;
    int can = 0;
    if (cuda().cuDeviceCanAccessPeer(&can, gpu_, peer->gpu_) != 0 || !can)
      continue;
    makeCurrent("peer access to " + peer->name());
    CUresult rc = cuda().cuCtxEnablePeerAccess(peer->ctx_, 0);
    if (rc != 0 && rc != 704 /* CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED */)
      cudaCheck(rc, "cuCtxEnablePeerAccess", name(),
                "peer access to " + peer->name() + ", plan '" +
                    setup_.planName + "'");
  }
}

CUdeviceptr CudaDevice::gpuAlloc(uint64_t bytes,
                                 const std::string &what) const {
  CUdeviceptr ptr = 0;
  makeCurrent(what);
  CUresult rc = cuda().cuMemAlloc(&ptr, bytes ? bytes : 1);
  if (rc == 2 /* CUDA_ERROR_OUT_OF_MEMORY */) {
    size_t freeBytes = 0, total = 0;
    cuda().cuMemGetInfo(&freeBytes, &total);
    throw Error(setup_.where + ": out of memory on " + name() +
                " (visible GPU " + std::to_string(setup_.physical) +
                "): " + what + " needs " + std::to_string(bytes) + " bytes; " +
                std::to_string(freeBytes) + " of " + std::to_string(total) +
                " bytes are free (plan '" + setup_.planName + "')");
  }
  cudaCheck(rc, "cuMemAlloc", name(),
            what + ", plan '" + setup_.planName + "'");
  return ptr;
}

const void *CudaDevice::upload(const void *host,
                               const modelc_weight_desc &desc) {
  // Uploaded once at load.
  std::string what = "weight '" + std::string(desc.name) + "'";
  CUdeviceptr ptr = gpuAlloc(desc.nbytes, what);
  gpuWeights_.push_back(ptr);
  cudaCheck(cuda().cuMemcpyHtoD(ptr, host, desc.nbytes), "cuMemcpyHtoD", name(),
            what);
  landed(what);
  return reinterpret_cast<const void *>(static_cast<uintptr_t>(ptr));
}

void CudaDevice::readResident(void *host, const void *resident,
                              uint64_t bytes) const {
  makeCurrent("reading a weight");
  auto ptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(resident));
  // The legacy stream: ordered after every stream's finished work.
  cudaCheck(cuda().cuMemcpyDtoHAsync(host, ptr, bytes, nullptr),
            "cuMemcpyDtoHAsync", name(), "reading a weight");
  cudaCheck(cuda().cuStreamSynchronize(nullptr), "cuStreamSynchronize", name(),
            "reading a weight");
}

void CudaDevice::writeResident(void *resident, const void *host,
                               uint64_t bytes) const {
  makeCurrent("writing a weight");
  auto ptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(resident));
  cudaCheck(cuda().cuMemcpyHtoD(ptr, host, bytes), "cuMemcpyHtoD", name(),
            "writing a weight");
  landed("writing a weight");
}

void CudaDevice::makeCurrent(const std::string &what) const {
  cudaCheck(cuda().cuCtxSetCurrent(ctx_), "cuCtxSetCurrent", name(), what);
}

void CudaDevice::landed(const std::string &what) const {
  // A synchronous copy from pageable memory may return once its data is
  // staged; the rest is work of the legacy stream, which the run's
  // (non-blocking) streams do not wait for.
  cudaCheck(cuda().cuStreamSynchronize(nullptr), "cuStreamSynchronize", name(),
            what);
}

std::unique_ptr<DeviceRun> CudaDevice::allocate(uint64_t bytes,
                                                const std::string &entry) {
  auto run = std::make_unique<CudaRun>();
  run->cuda = &cuda();
  run->ctx = ctx_;
  run->arenaMemory =
      gpuAlloc(bytes, "the scratch arena of entry '" + entry + "'");
  std::string what = "plan '" + setup_.planName + "'";
  cudaCheck(cuda().cuStreamCreate(&run->computeStream, 1), "cuStreamCreate",
            name(), what);
  cudaCheck(cuda().cuStreamCreate(&run->copyStream, 1), "cuStreamCreate",
            name(), what);
  cudaCheck(cuda().cuStreamCreate(&run->downloadStream, 1), "cuStreamCreate",
            name(), what);
  run->arena = reinterpret_cast<unsigned char *>(
      static_cast<uintptr_t>(run->arenaMemory));
  run->arenaBytes = bytes;
  return run;
}

std::unique_ptr<HostMemory>
CudaDevice::allocateHost(uint64_t bytes, const std::string &what) const {
  return std::make_unique<PinnedMemory>(cuda(), ctx_, bytes, what);
}

CudaRun &CudaDevice::on(RunState &run) const {
  return static_cast<CudaRun &>(run.on(*this));
}

void CudaDevice::launch(RunState &run, modelc_task_fn task) {
  // On the device's host worker, with its context current: the task issues
  // kernels (launch_kernel) onto the device's compute stream.
  modelc_run_ctx *ctx = run.ctx;
  run.on(*this)
      .stream(MODELC_STREAM_COMPUTE)
      .enqueue(deviceCall(run, [this, ctx, task] {
        makeCurrent("a task");
        task(ctx); // errors arrive through report_error
      }));
}

void CudaDevice::launchKernel(RunState &run, uint32_t kernel,
                              const uint32_t grid[3], const uint32_t block[3],
                              uint32_t sharedBytes, void **args) {
  if (kernel >= kernels_.size()) {
    report(run, "launch_kernel of kernel #" + std::to_string(kernel) + " on " +
                    name() + ": the model has " +
                    std::to_string(kernels_.size()) + " kernels");
    return;
  }
  CUresult rc = cuda().cuLaunchKernel(
      kernels_[kernel], grid[0], grid[1], grid[2], block[0], block[1], block[2],
      sharedBytes, on(run).computeStream, args, nullptr);
  if (rc != 0)
    report(run, "cuLaunchKernel failed on " + name() + " (kernel '" +
                    setup_.desc->kernel_names[kernel] +
                    "'): " + cudaErrorName(rc));
}

void CudaDevice::gemm(RunState &run, const modelc_gemm &g) {
  CudaRun &mine = on(run);
  try {
    if (!mine.cublasLt) {
      std::string why;
      mine.cublasLt = cublasLtApi(why);
      if (!mine.cublasLt)
        throw Error("plan '" + setup_.planName +
                    "' computes matrix products on " + name() +
                    " with cuBLASLt: " + why);
    }
    runGemm(*mine.cublasLt, cuda(), mine.gemm, mine.computeStream, g, name());
  } catch (const std::exception &e) {
    report(run, e.what());
  }
}

void CudaDevice::copy(RunState &run, Device &to, void *dst, Device &from,
                      const void *src, uint64_t bytes, const char *op) {
  // Issued from the destination's copy stream, on the CUDA copy stream of
  // the destination GPU (of the source GPU for a copy to the host, which
  // then waits for it: host work after it reads the data).
  auto *toGpu = dynamic_cast<CudaDevice *>(&to);
  auto *fromGpu = dynamic_cast<CudaDevice *>(&from);
  CudaRun *toRun = toGpu ? &toGpu->on(run) : nullptr;
  CudaRun *fromRun = fromGpu ? &fromGpu->on(run) : nullptr;
  RunCapture *capture = &run.resources->capture;
  RunEvents *events = &run.resources->events;
  DeviceRun *toHostRun = toGpu ? nullptr : &run.on(to);
  const CudaApi *api = &cuda();
  // The message is made only when a call fails.
  auto what = [=, &to, &from] {
    return (op ? std::string(op) + ": " : std::string()) + "a copy of " +
           std::to_string(bytes) + " bytes from " + from.name() + " to " +
           to.name();
  };
  // Issued in the destination GPU's context, else the source GPU's.
  CudaDevice *issuer = toGpu ? toGpu : fromGpu;
  run.on(to).stream(MODELC_STREAM_COPY).enqueue(deviceCall(run, [=, &to] {
    cudaCheckLazy(api->cuCtxSetCurrent(issuer->ctx_), "cuCtxSetCurrent",
                  issuer->name(), what);
    if (toGpu && fromGpu && toGpu == fromGpu) {
      cudaCheckLazy(api->cuMemcpyDtoDAsync(devicePointer(dst),
                                           devicePointer(src), bytes,
                                           toRun->copyStream),
                    "cuMemcpyDtoDAsync", to.name(), what);
    } else if (toGpu && fromGpu) {
      cudaCheckLazy(api->cuMemcpyPeerAsync(devicePointer(dst), toGpu->ctx_,
                                           devicePointer(src), fromGpu->ctx_,
                                           bytes, toRun->copyStream),
                    "cuMemcpyPeerAsync", to.name(), what);
    } else if (toGpu) {
      cudaCheckLazy(api->cuMemcpyHtoDAsync(devicePointer(dst), src, bytes,
                                           toRun->copyStream),
                    "cuMemcpyHtoDAsync", to.name(), what);
    } else {
      CUstream s = fromRun->downloadStream;
      // After the GPU work the host stream waited for: in a CUDA graph the
      // copy is ordered by these waits alone.
      std::vector<uint32_t> &waited = toHostRun->gpuWaitsOf(MODELC_STREAM_COPY);
      for (uint32_t e : waited)
        cudaCheckLazy(api->cuStreamWaitEvent(
                          s, static_cast<CUevent>(events->native(e)), 0),
                      "cuStreamWaitEvent", fromGpu->name(), what);
      waited.clear();
      cudaCheckLazy(api->cuMemcpyDtoHAsync(dst, devicePointer(src), bytes, s),
                    "cuMemcpyDtoHAsync", fromGpu->name(), what);
      // While a graph is captured nothing runs: the replay syncs.
      if (!capture->capturing)
        cudaCheckLazy(api->cuStreamSynchronize(s), "cuStreamSynchronize",
                      fromGpu->name(), what);
    }
  }));
}

void CudaDevice::replicaSum(RunState &run, const ReplicaMember &m) {
  // With NCCL, when the group is the clique made at load: ncclAllReduce on
  // the CUDA copy stream (each GPU's host worker issues its own rank's
  // call, in the same order of groups on every GPU). Otherwise through host
  // memory: the part copied out, the host's sum, the sum copied back.
  CudaRun &mine = on(run);
  const NcclClique *clique = run.nccl;
  if (clique && (clique->devices().size() != m.members ||
                 !std::equal(clique->devices().begin(), clique->devices().end(),
                             m.devices)))
    clique = nullptr;
  auto what = [m, this] {
    return std::string(m.what ? m.what : "graph.replica_all_reduce") + " on " +
           name();
  };
  auto bytes = static_cast<std::size_t>(m.count) * sizeof(float);
  if (clique) {
    mine.stream(MODELC_STREAM_COPY).enqueue(deviceCall(run, [=, &mine, &run] {
      makeCurrent("a sum over the replicas");
      const NcclApi &nccl = clique->api();
      // A communicator aborted by another GPU's failure is never used again.
      ncclResult rc = 0;
      if (!clique->allReduce(m.member, m.src, m.dst,
                             static_cast<size_t>(m.count), mine.copyStream, rc))
        throw Error(what() + ": not run: NCCL was aborted after another "
                             "GPU's all-reduce failed");
      if (rc != 0) {
        // The other GPUs' NCCL kernels of this collective would wait for
        // this one for ever: abort the communicators, which ends them. The
        // run reports this failure first, not the others' that follow.
        std::string error =
            what() + ": ncclAllReduce failed: " + ncclErrorText(nccl, rc);
        run.reportError(error);
        clique->abort(error);
        throw Error(error);
      }
    }));
    return;
  }
  ReplicaSums *sums = &run.resources->replicaSums;
  double timeout = run.impl->collectiveTimeout;
  mine.stream(MODELC_STREAM_COPY).enqueue(deviceCall(run, [=, &mine] {
    // Every member meets the others even when its copy failed: they would
    // wait for it otherwise. The run reports the failure.
    std::string failed;
    float *part = sums->staging(m);
    try {
      makeCurrent("a sum over the replicas");
      if (bytes) {
        cudaCheckLazy(cuda().cuMemcpyDtoHAsync(part, devicePointer(m.src),
                                               bytes, mine.copyStream),
                      "cuMemcpyDtoHAsync", name(), what);
        cudaCheckLazy(cuda().cuStreamSynchronize(mine.copyStream),
                      "cuStreamSynchronize", name(), what);
      }
    } catch (const std::exception &e) {
      failed = e.what();
    }
    std::string error;
    const float *sum = sums->meet(m, part, timeout, error);
    if (!failed.empty())
      throw Error(failed);
    if (!sum)
      throw Error(what() + ": " + error);
    if (bytes)
      cudaCheckLazy(cuda().cuMemcpyHtoDAsync(devicePointer(m.dst), sum, bytes,
                                             mine.copyStream),
                    "cuMemcpyHtoDAsync", name(), what);
  }));
}

void CudaDevice::rankSum(RunState &run, const float *src, float *dst,
                         int64_t count, const char *what) {
  // The plan's one stream of sums over the ranks (every rank enqueues them
  // in program order): NCCL's communicator made at load, else the part
  // copied out, summed by the communication backend and copied back. With
  // one rank the sum is the part itself.
  CudaRun &mine = on(run);
  Model::Impl &impl = *run.impl;
  auto name = [what, this] {
    return std::string(what ? what : "graph.all_reduce") + " on " +
           this->name();
  };
  auto bytes = static_cast<std::size_t>(count) * sizeof(float);
  detail::Communicator *comm = impl.comm.get();
  if (!comm || comm->size() == 1) {
    if (src != dst && bytes)
      mine.stream(MODELC_STREAM_COPY).enqueue(deviceCall(run, [=, &mine] {
        makeCurrent("a sum over one rank");
        cudaCheckLazy(cuda().cuMemcpyDtoDAsync(devicePointer(dst),
                                               devicePointer(src), bytes,
                                               mine.copyStream),
                      "cuMemcpyDtoDAsync", this->name(), name);
      }));
    return;
  }
  if (const NcclClique *clique = impl.rankNccl.get()) {
    mine.stream(MODELC_STREAM_COPY).enqueue(deviceCall(run, [=, &mine, &run] {
      makeCurrent("a sum over the ranks");
      // The other ranks go on with NCCL: after a failure here (the clique
      // aborted, the call not made) this rank cannot sum with them any
      // other way.
      ncclResult rc = 0;
      if (!clique->allReduce(0, src, dst, static_cast<size_t>(count),
                             mine.copyStream, rc))
        throw Error(name() +
                    ": the sums over the ranks stopped after NCCL "
                    "failed (" +
                    clique->aborted() + ")");
      if (rc != 0) {
        std::string error = name() +
                            ": ncclAllReduce across the ranks "
                            "failed: " +
                            ncclErrorText(clique->api(), rc);
        run.reportError(error);
        clique->abort(error);
        throw Error(error);
      }
    }));
    return;
  }
  double timeout = impl.collectiveTimeout;
  mine.stream(MODELC_STREAM_COPY).enqueue(deviceCall(run, [=, &mine] {
    // This rank meets the others' sum even when its copy failed (they
    // would wait for it otherwise); the run then reports the copy's error.
    std::vector<float> part(static_cast<std::size_t>(count));
    std::string failed;
    try {
      makeCurrent("a sum over the ranks");
      if (bytes) {
        cudaCheckLazy(cuda().cuMemcpyDtoHAsync(part.data(), devicePointer(src),
                                               bytes, mine.copyStream),
                      "cuMemcpyDtoHAsync", this->name(), name);
        cudaCheckLazy(cuda().cuStreamSynchronize(mine.copyStream),
                      "cuStreamSynchronize", this->name(), name);
      }
    } catch (const std::exception &e) {
      failed = e.what();
    }
    std::string error;
    bool summed =
        comm->allReduce(part.data(), part.data(), count, timeout, error);
    if (!failed.empty())
      throw Error(failed);
    if (!summed)
      throw Error(name() + ": " + error);
    if (bytes) {
      cudaCheckLazy(cuda().cuMemcpyHtoDAsync(devicePointer(dst), part.data(),
                                             bytes, mine.copyStream),
                    "cuMemcpyHtoDAsync", this->name(), name);
      // The part's memory goes with this call.
      cudaCheckLazy(cuda().cuStreamSynchronize(mine.copyStream),
                    "cuStreamSynchronize", this->name(), name);
    }
  }));
}

void CudaDevice::record(RunState &run, int which, uint32_t event) {
  // An event recorded on a GPU is a CUDA event, and the host event says it
  // has been issued.
  CudaRun &mine = on(run);
  RunEvents *events = &run.resources->events;
  mine.stream(which).enqueue(
      deviceCall(run, [this, &mine, events, which, event] {
        struct Issued { // the host event is set even when a call fails
          RunEvents *events;
          uint32_t event;
          ~Issued() { events->host().set(event); }
        } issued{events, event};
        auto what = [event] { return "event " + std::to_string(event); };
        makeCurrent("recording event " + std::to_string(event));
        auto native = static_cast<CUevent>(events->native(event));
        if (!native) {
          cudaCheckLazy(cuda().cuEventCreate(&native, 2 /* DISABLE_TIMING */),
                        "cuEventCreate", name(), what);
          events->setNative(event, native, this);
        }
        cudaCheckLazy(cuda().cuEventRecord(native, mine.cudaStream(which)),
                      "cuEventRecord", name(), what);
      }));
}

void CudaDevice::wait(RunState &run, int which, uint32_t event) {
  // The GPU stream waits on the CUDA event, once it has been issued.
  CudaRun &mine = on(run);
  RunEvents *events = &run.resources->events;
  mine.stream(which).enqueue(
      deviceCall(run, [this, &run, &mine, events, which, event] {
        events->host().wait(event);
        void *native = events->native(event);
        if (!native)
          return;
        if (!dynamic_cast<CudaDevice *>(events->owner(event))) {
          events->owner(event)->synchronizeEvent(run, event, name());
          return;
        }
        makeCurrent("waiting on event " + std::to_string(event));
        cudaCheckLazy(cuda().cuStreamWaitEvent(mine.cudaStream(which),
                                               static_cast<CUevent>(native), 0),
                      "cuStreamWaitEvent", name(),
                      [event] { return "event " + std::to_string(event); });
      }));
}

void CudaDevice::synchronizeEvent(RunState &run, uint32_t event,
                                  const std::string &waiter) {
  // While a graph is captured nothing runs: the replay orders the work.
  if (run.resources->capture.capturing)
    return;
  makeCurrent("synchronizing with event " + std::to_string(event));
  cudaCheckLazy(cuda().cuEventSynchronize(
                    static_cast<CUevent>(run.resources->events.native(event))),
                "cuEventSynchronize", waiter,
                [event] { return "event " + std::to_string(event); });
}

void CudaDevice::destroyEvent(void *native) {
  if (cuda().cuCtxSetCurrent(ctx_) == 0)
    cuda().cuEventDestroy(static_cast<CUevent>(native));
}

namespace {

/// A host function on a CUDA stream: runs `at` once, then frees it.
void runStamp(void *data) {
  auto *at = static_cast<std::function<void()> *>(data);
  try {
    (*at)();
  } catch (...) {
    // A driver thread: nothing may escape; the slice is lost.
  }
  delete at;
}

} // namespace

void CudaDevice::stampInTask(RunState &run, std::function<void()> at) {
  // On this GPU's host worker (inside a task): when its compute stream
  // reaches the kernels issued so far.
  if (!cuda().cuLaunchHostFunc) {
    report(run, "tracing a run on " + name() +
                    " needs cuLaunchHostFunc, which this CUDA driver lacks");
    return;
  }
  auto *copy = new std::function<void()>(std::move(at));
  if (CUresult rc =
          cuda().cuLaunchHostFunc(on(run).computeStream, runStamp, copy)) {
    delete copy;
    report(run, "cuLaunchHostFunc failed on " + name() +
                    " (trace): " + cudaErrorName(rc));
  }
}

void CudaDevice::stamp(RunState &run, int which, std::function<void()> at) {
  // Issued from the host stream `which`, onto the CUDA stream it feeds.
  CudaRun &mine = on(run);
  mine.stream(which).enqueue(deviceCall(run, [this, &run, &mine, which, at] {
    if (!cuda().cuLaunchHostFunc)
      throw Error("tracing a run on " + name() +
                  " needs cuLaunchHostFunc, which this CUDA driver lacks");
    makeCurrent("tracing a run");
    auto *copy = new std::function<void()>(at);
    if (CUresult rc =
            cuda().cuLaunchHostFunc(mine.cudaStream(which), runStamp, copy)) {
      delete copy;
      throw Error("cuLaunchHostFunc failed on " + name() +
                  " (trace): " + cudaErrorName(rc));
    }
    (void)run;
  }));
}

void CudaDevice::finish(RunState &run) {
  // The run ends when the GPU's streams have finished.
  CudaRun &mine = on(run);
  if (CUresult rc = cuda().cuCtxSetCurrent(ctx_)) {
    report(run, "cuCtxSetCurrent failed on " + name() +
                    " at the end of the run: " + cudaErrorName(rc));
    return;
  }
  for (CUstream s : {mine.computeStream, mine.copyStream, mine.downloadStream})
    if (CUresult rc = cuda().cuStreamSynchronize(s))
      report(run, "cuStreamSynchronize failed on " + name() +
                      " at the end of the run: " + cudaErrorName(rc));
}

MachineGpus probeMachineGpus(const modelc_model_desc &desc,
                             const CudaApi *&cuda) {
  MachineGpus machine;
  const GpuInventory &gpus = visible_gpus();
  machine.count = static_cast<int>(gpus.gpus.size());
  machine.status = gpus.status;
  std::string noCuda;
  cuda = cudaApi(noCuda);
  machine.drivable = cuda != nullptr;
  if (!cuda && machine.count > 0)
    machine.status += "; " + noCuda;
  std::string noLt;
  if (cuda && (desc.gpu_libraries & MODELC_GPU_NEEDS_CUBLASLT) &&
      !cublasLtApi(noLt)) {
    machine.drivable = false;
    machine.status += "; the model's GPU plans need cuBLASLt: " + noLt;
  }
  return machine;
}

} // namespace modelc::detail
