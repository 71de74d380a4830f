// model.cpp - loading a model.so, checking it, and running its entry points.
#include "modelc/abi.h"
#include "modelc/runtime.hpp"

#include "cublaslt.hpp"
#include "cuda_driver.hpp"
#include "packed_conv.hpp"
#include "packed_linear.hpp"
#include "parallel.hpp"
#include "plan_choice.hpp"
#include "safetensors.hpp"
#include "streams.hpp"

#include <algorithm>
#include <cblas.h>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <mutex>
#include <omp.h>
#include <set>
#include <thread>

extern "C" void openblas_set_num_threads(int num_threads);

namespace modelc {

namespace {

/// dlopen handle closed when the last user lets go.
struct Library {
  void *handle = nullptr;
  ~Library() {
    if (handle)
      ::dlclose(handle);
  }
};

/// 64-byte aligned scratch memory of one run.
struct Arena {
  Arena() = default;
  explicit Arena(uint64_t bytes) {
    std::size_t rounded = ((bytes + 63) / 64) * 64;
    memory = static_cast<unsigned char *>(
        std::aligned_alloc(64, rounded ? rounded : 64));
    if (!memory)
      throw Error("out of host memory allocating a " + std::to_string(bytes) +
                  "-byte arena");
  }
  virtual ~Arena() { std::free(memory); }
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;
  unsigned char *memory = nullptr;
};

/// Host memory the GPUs copy to and from directly (page-locked, for every
/// context: CU_MEMHOSTALLOC_PORTABLE): the host arena of a plan with GPUs,
/// and the staging buffers of its inputs.
struct PinnedArena : Arena {
  PinnedArena(const detail::CudaApi &cuda, detail::CUcontext ctx,
              uint64_t bytes, const std::string &what)
      : cuda(cuda) {
    void *p = nullptr;
    cuda.cuCtxSetCurrent(ctx);
    detail::cudaCheck(cuda.cuMemHostAlloc(&p, bytes ? bytes : 64,
                                          /*CU_MEMHOSTALLOC_PORTABLE*/ 1),
                      "cuMemHostAlloc", "the host",
                      what + " (" + std::to_string(bytes) + " bytes)");
    memory = static_cast<unsigned char *>(p);
  }
  ~PinnedArena() override {
    cuda.cuMemFreeHost(memory);
    memory = nullptr;
  }
  const detail::CudaApi &cuda;
};

/// Scratch of one run: an arena per device of the plan and, for a
/// multi-device plan, its events and per device a compute and a copy
/// stream. Pooled per entry point, reused across runs: runs in flight at
/// once never share streams, so they cannot wait on each other.
struct RunResources {
  std::vector<std::unique_ptr<Arena>> arenas;
  std::vector<unsigned char *> arenaPointers;
  std::vector<uint64_t> arenaSizes;
  std::vector<std::unique_ptr<Stream>> compute, copy;
  // A plan with GPUs: the entry's inputs are copied here first, so that
  // the GPUs read them from page-locked memory.
  std::vector<std::unique_ptr<Arena>> stagedInputs;
  std::vector<const void *> stagedPointers;
  EventSet events;
  PackedLinearRun packedLinear;
  PackedConvRun packedConv;

  // GPU devices of the plan (indexed by plan device; empty entries for the
  // host and simulated devices): the run's CUDA streams and arena. The host
  // streams above issue the driver calls, so host order is GPU order.
  struct Gpu {
    detail::CUcontext ctx = nullptr;
    detail::CUstream compute = nullptr, copy = nullptr;
    detail::CUdeviceptr arena = 0;
    detail::GemmState gemm; // cuBLASLt, made on the first gemm
  };
  const detail::CublasLtApi *cublasLt = nullptr; // opened on the first gemm

  // CUDA graph mode (LoadOptions::cuda_graphs): the run's GPU work, captured
  // on the first run of these resources, and the host tasks (the outputs
  // task) that run after each replay.
  struct Graph {
    bool warm = false; // a first run went without a graph
    bool capturing = false;
    detail::CUgraphExec exec = nullptr;
    std::vector<modelc_task_fn> hostTasks;
    // Fork and join events of the capture, with their contexts.
    std::vector<std::pair<detail::CUevent, detail::CUcontext>> events;
  } graph;
  const detail::CudaApi *cuda = nullptr;
  std::vector<Gpu> gpus;
  // Per event of the run: the CUDA event where it is recorded on a GPU
  // (always the same stream for a given event), else null.
  std::vector<detail::CUevent> gpuEvents;
  std::vector<detail::CUcontext> gpuEventContexts;

  RunResources() = default;
  RunResources(const RunResources &) = delete;
  RunResources &operator=(const RunResources &) = delete;
  ~RunResources() {
    if (!cuda)
      return;
    if (graph.exec)
      cuda->cuGraphExecDestroy(graph.exec);
    for (auto &[event, ctx] : graph.events) {
      cuda->cuCtxSetCurrent(ctx);
      cuda->cuEventDestroy(event);
    }
    // Nothing is in flight: every run drains its streams before it ends.
    for (std::size_t e = 0; e < gpuEvents.size(); ++e)
      if (gpuEvents[e]) {
        cuda->cuCtxSetCurrent(gpuEventContexts[e]);
        cuda->cuEventDestroy(gpuEvents[e]);
      }
    for (Gpu &g : gpus) {
      if (!g.ctx)
        continue;
      cuda->cuCtxSetCurrent(g.ctx);
      if (cublasLt)
        detail::releaseGemmState(*cublasLt, *cuda, g.gemm);
      if (g.compute)
        cuda->cuStreamDestroy(g.compute);
      if (g.copy)
        cuda->cuStreamDestroy(g.copy);
      if (g.arena)
        cuda->cuMemFree(g.arena);
    }
  }
};

/// What report_error and the callbacks need during one run.
struct RunState {
  Model::Impl *impl;
  std::size_t entry = 0;
  RunResources *resources = nullptr;
  std::mutex mutex; // tasks on several streams may report at once
  std::string error;
};

std::string modelName(const std::string &path) { return "'" + path + "'"; }

/// Checks that `path` is a complete 64-bit ELF shared object before dlopen
/// maps it: a truncated file would otherwise fault (SIGBUS) when touched.
void checkElfFile(const std::string &path) {
  std::string where = "model " + modelName(path);
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file)
    throw Error("cannot open " + where + ": " + std::strerror(errno));
  uint64_t size = static_cast<uint64_t>(file.tellg());
  file.seekg(0);
  Elf64_Ehdr header{};
  file.read(reinterpret_cast<char *>(&header), sizeof(header));
  if (static_cast<uint64_t>(file.gcount()) < 4 ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    throw Error(where + " is not a compiled model: not a shared library");
  if (static_cast<uint64_t>(file.gcount()) < sizeof(header) ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_type != ET_DYN)
    throw Error(where + " is not a compiled model: not a 64-bit shared "
                        "library");
  auto truncated = [&] {
    return Error(where +
                 " is truncated or corrupt: its ELF headers "
                 "describe more than its " +
                 std::to_string(size) + " bytes");
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phoff + uint64_t(header.e_phnum) * sizeof(Elf64_Phdr) > size ||
      header.e_shoff + uint64_t(header.e_shnum) * header.e_shentsize > size)
    throw truncated();
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    file.seekg(
        static_cast<std::streamoff>(header.e_phoff + i * sizeof(segment)));
    file.read(reinterpret_cast<char *>(&segment), sizeof(segment));
    if (segment.p_offset + segment.p_filesz > size)
      throw truncated();
  }
}

} // namespace

struct Model::Impl {
  std::string path;
  std::shared_ptr<Library> library;
  const modelc_model_desc *desc = nullptr;
  const modelc_plan_desc *plan = nullptr;
  std::string planName, compilerVersion, compilerFlags;
  // Why the default choice fell back from a GPU plan, or empty.
  std::string planNote;
  std::vector<EntryInfo> entries;
  std::vector<const void *> weights;
  std::vector<Tensor> ownedWeights; // aligned copies of unaligned weights
  std::unique_ptr<SafetensorsFile> weightFile;
  int numThreads = 1;
  PackedLinearCache packedLinear;
  PackedConvCache packedConv;
  modelc_runtime_api api{};

  // Per entry point: run resources not in use by a run.
  std::vector<std::vector<std::unique_ptr<RunResources>>> freeResources;
  std::mutex resourceMutex;

  // Multi-device plans: per device its resident weights (and, for a GPU, its
  // context and the model's kernels); streams belong to the runs.
  bool multiDevice = false;
  struct DeviceState {
    std::string name;
    // A GPU: its visible ordinal, driver handle and primary context, and the
    // weights resident there (uploaded once at load).
    int physical = -1;
    detail::CUdevice gpu = 0;
    detail::CUcontext ctx = nullptr;
    std::vector<detail::CUdeviceptr> gpuWeights;
    detail::CUmodule module = nullptr;       // the model's GPU code
    std::vector<detail::CUfunction> kernels; // per kernel name
    std::vector<const void *> weights;       // per weight of the table, or null
    std::vector<Tensor> ownedWeights;        // copies resident on a sim device
  };
  std::vector<DeviceState> devices;
  std::vector<const void *const *> deviceWeightTables;
  const detail::CudaApi *cuda = nullptr; // set when the plan has GPUs
  bool graphs = false;                   // LoadOptions::cuda_graphs

  ~Impl() {
    // Runs' GPU resources first, then the weights and the contexts.
    freeResources.clear();
    if (!cuda)
      return;
    for (DeviceState &d : devices) {
      if (!d.ctx)
        continue;
      cuda->cuCtxSetCurrent(d.ctx);
      for (detail::CUdeviceptr p : d.gpuWeights)
        cuda->cuMemFree(p);
      if (d.module)
        cuda->cuModuleUnload(d.module);
      cuda->cuDevicePrimaryCtxRelease(d.gpu);
    }
  }

  /// Device memory on GPU device `d`; out of memory names the device, the
  /// bytes, what they are for and the plan.
  detail::CUdeviceptr gpuAlloc(const DeviceState &d, uint64_t bytes,
                               const std::string &what) const {
    detail::CUdeviceptr ptr = 0;
    cuda->cuCtxSetCurrent(d.ctx);
    detail::CUresult rc = cuda->cuMemAlloc(&ptr, bytes ? bytes : 1);
    if (rc == 2 /* CUDA_ERROR_OUT_OF_MEMORY */) {
      size_t freeBytes = 0, total = 0;
      cuda->cuMemGetInfo(&freeBytes, &total);
      throw Error("model " + modelName(path) + ": out of memory on " + d.name +
                  " (visible GPU " + std::to_string(d.physical) + "): " + what +
                  " needs " + std::to_string(bytes) + " bytes; " +
                  std::to_string(freeBytes) + " of " + std::to_string(total) +
                  " bytes are free (plan '" + planName + "')");
    }
    detail::cudaCheck(rc, "cuMemAlloc", d.name,
                      what + ", plan '" + planName + "'");
    return ptr;
  }

  std::size_t entryIndex(const std::string &name) const {
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i].name == name)
        return i;
    std::string known;
    for (const EntryInfo &e : entries)
      known += (known.empty() ? "'" : ", '") + e.name + "'";
    throw Error("model " + modelName(path) + " has no entry point '" + name +
                "'; it has " + known);
  }

  std::unique_ptr<RunResources> acquireResources(std::size_t entry) {
    {
      std::lock_guard<std::mutex> lock(resourceMutex);
      auto &list = freeResources[entry];
      if (!list.empty()) {
        std::unique_ptr<RunResources> resources = std::move(list.back());
        list.pop_back();
        return resources;
      }
    }
    auto resources = std::make_unique<RunResources>();
    resources->cuda = cuda;
    resources->gpus.resize(plan->num_devices);
    // Page-locked host memory needs a context: any GPU's (it is portable).
    detail::CUcontext anyGpu = nullptr;
    for (const DeviceState &d : devices)
      if (d.ctx && !anyGpu)
        anyGpu = d.ctx;
    for (uint32_t d = 0; d < plan->num_devices; ++d) {
      uint64_t bytes = plan->arena_bytes[entry * plan->num_devices + d];
      if (devices[d].ctx) {
        RunResources::Gpu &g = resources->gpus[d];
        const DeviceState &dev = devices[d];
        g.ctx = dev.ctx;
        g.arena = gpuAlloc(dev, bytes,
                           "the scratch arena of entry '" +
                               entries[entry].name + "'");
        detail::cudaCheck(cuda->cuStreamCreate(&g.compute, 1), "cuStreamCreate",
                          dev.name, "plan '" + planName + "'");
        detail::cudaCheck(cuda->cuStreamCreate(&g.copy, 1), "cuStreamCreate",
                          dev.name, "plan '" + planName + "'");
        resources->arenas.push_back(nullptr);
        resources->arenaPointers.push_back(
            reinterpret_cast<unsigned char *>(static_cast<uintptr_t>(g.arena)));
      } else if (anyGpu && devices[d].name == "cpu") {
        resources->arenas.push_back(std::make_unique<PinnedArena>(
            *cuda, anyGpu, bytes,
            "the host arena of entry '" + entries[entry].name + "'"));
        resources->arenaPointers.push_back(resources->arenas.back()->memory);
      } else {
        resources->arenas.push_back(std::make_unique<Arena>(bytes));
        resources->arenaPointers.push_back(resources->arenas.back()->memory);
      }
      resources->arenaSizes.push_back(bytes);
      if (multiDevice) {
        resources->compute.push_back(std::make_unique<Stream>());
        resources->copy.push_back(std::make_unique<Stream>());
      }
    }
    if (anyGpu)
      for (const TensorInfo &input : entries[entry].inputs) {
        uint64_t bytes = dtypeSize(input.dtype);
        for (int64_t dim : input.shape)
          bytes *= static_cast<uint64_t>(dim);
        resources->stagedInputs.push_back(std::make_unique<PinnedArena>(
            *cuda, anyGpu, bytes,
            "the staging buffer of input '" + input.name + "'"));
        resources->stagedPointers.push_back(
            resources->stagedInputs.back()->memory);
      }
    return resources;
  }
  void releaseResources(std::size_t entry,
                        std::unique_ptr<RunResources> resources) {
    std::lock_guard<std::mutex> lock(resourceMutex);
    freeResources[entry].push_back(std::move(resources));
  }

  /// `physical`: per device of the plan, the visible GPU it runs on, or -1.
  void setUpDevices(const std::vector<int> &physical);
  /// The device of the plan that owns [ptr, ptr + bytes) during `state`'s
  /// run, or -1.
  int ownerOf(const RunState &state, const modelc_run_ctx &ctx, const void *ptr,
              uint64_t bytes) const;

  void checkDescriptor();
  void bindWeights(const LoadOptions &options);
};

//===----------------------------------------------------------------------===//
// Callbacks of modelc_runtime_api
//===----------------------------------------------------------------------===//

static void sgemmBlock(int transA, int transB, int64_t m, int64_t n, int64_t k,
                       float alpha, const float *a, int64_t lda, const float *b,
                       int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

/// GEMM on the runtime's threads (parallelFor): OpenBLAS runs
/// single-threaded, and the columns of C (or its rows, when C is tall and
/// narrow) are split across the threads. One set of threads for everything:
/// no OpenBLAS workers spinning while other loops run on the same cores.
static void runtimeSgemm(modelc_run_ctx *ctx, int transA, int transB, int64_t m,
                         int64_t n, int64_t k, float alpha, const float *a,
                         int64_t lda, const float *b, int64_t ldb, float beta,
                         float *c, int64_t ldc) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  int threads = state->impl->numThreads;
  double flops = 2.0 * m * n * k;
  if (threads == 1 || flops < 4e6) {
    sgemmBlock(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  struct Args {
    int transA, transB;
    int64_t m, n, k;
    float alpha, beta;
    const float *a, *b;
    float *c;
    int64_t lda, ldb, ldc;
    bool byRows;
    int64_t parts;
  } args{transA, transB, m, n,   k,   alpha, beta,
         a,      b,      c, lda, ldb, ldc,   n < 2 * threads * 16 && m >= n,
         threads};
  parallelFor(
      threads, args.parts, 1,
      [](void *p, int64_t begin, int64_t end) {
        auto &g = *static_cast<Args *>(p);
        for (int64_t part = begin; part < end; ++part) {
          int64_t total = g.byRows ? g.m : g.n;
          // Block boundaries on multiples of 16 keep the kernels' panels whole.
          int64_t step = ((total + g.parts - 1) / g.parts + 15) / 16 * 16;
          int64_t from = std::min(total, part * step);
          int64_t to = std::min(total, from + step);
          if (from >= to)
            continue;
          if (g.byRows)
            sgemmBlock(g.transA, g.transB, to - from, g.n, g.k, g.alpha,
                       g.transA ? g.a + from : g.a + from * g.lda, g.lda, g.b,
                       g.ldb, g.beta, g.c + from * g.ldc, g.ldc);
          else
            sgemmBlock(g.transA, g.transB, g.m, to - from, g.k, g.alpha, g.a,
                       g.lda, g.transB ? g.b + from * g.ldb : g.b + from, g.ldb,
                       g.beta, g.c + from, g.ldc);
        }
      },
      &args);
}

static void runtimeReportError(modelc_run_ctx *ctx, const char *message);

static void runtimeLinear(modelc_run_ctx *ctx, uint32_t site, const float *x,
                          const float *w, const float *bias, float *y,
                          int64_t m, int64_t n, int64_t k) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  std::string error;
  // oneDNN parallelises with OpenMP: as many threads as the pool.
  omp_set_num_threads(state->impl->numThreads);
  PackedLinearSite *packed =
      state->impl->packedLinear.site(site, w, bias != nullptr, m, n, k, error);
  if (!packed ||
      !state->resources->packedLinear.execute(state->impl->packedLinear, site,
                                              *packed, x, bias, y, error))
    runtimeReportError(ctx, ("linear layer: " + error).c_str());
}

static void runtimeConv2d(modelc_run_ctx *ctx, uint32_t site, const float *x,
                          const float *w, const float *bias, float *y,
                          const int64_t *shape) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  std::string error;
  omp_set_num_threads(state->impl->numThreads);
  PackedConvSite *packed =
      state->impl->packedConv.site(site, w, bias != nullptr, shape, error);
  if (!packed || !state->resources->packedConv.execute(
                     state->impl->packedConv, site, *packed, x, bias, y, error))
    runtimeReportError(ctx, ("convolution: " + error).c_str());
}

static void runtimeParallelFor(modelc_run_ctx *ctx, int64_t n, int64_t grain,
                               void (*fn)(void *, int64_t, int64_t),
                               void *arg) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  parallelFor(state->impl->numThreads, n, grain, fn, arg);
}

static void runtimeReportError(modelc_run_ctx *ctx, const char *message) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  std::lock_guard<std::mutex> lock(state->mutex);
  if (state->error.empty())
    state->error = message ? message : "unknown error";
}

/// The run's compute or copy stream of `device`.
static Stream &stream(modelc_run_ctx *ctx, uint32_t device, int kind) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  auto &streams = kind == MODELC_STREAM_COPY ? state->resources->copy
                                             : state->resources->compute;
  return *streams.at(device);
}

/// A task of a GPU device for a host stream: `work` issues driver calls; an
/// error is reported for the run.
static Stream::Task gpuTask(modelc_run_ctx *ctx, std::function<void()> work) {
  Stream::Task t{Stream::Task::Call};
  t.ctx = ctx;
  t.call = std::move(work);
  t.onError = [ctx](const std::string &message) {
    runtimeReportError(ctx, message.c_str());
  };
  return t;
}

static void runtimeLaunch(modelc_run_ctx *ctx, uint32_t device,
                          modelc_task_fn task) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  const Model::Impl::DeviceState &d = state->impl->devices.at(device);
  if (d.ctx) {
    // On the device's host worker, with its context current: the task
    // issues kernels (launch_kernel) onto the device's compute stream.
    const detail::CudaApi *cuda = state->impl->cuda;
    stream(ctx, device, MODELC_STREAM_COMPUTE).enqueue(gpuTask(ctx, [=, &d] {
      cuda->cuCtxSetCurrent(d.ctx);
      task(ctx); // errors arrive through report_error
    }));
    return;
  }
  if (state->resources->graph.capturing) {
    // Graph mode: host tasks (the outputs task) run after each replay.
    state->resources->graph.hostTasks.push_back(task);
    return;
  }
  Stream::Task t{Stream::Task::Launch};
  t.ctx = ctx;
  t.task = task;
  stream(ctx, device, MODELC_STREAM_COMPUTE).enqueue(t);
}

static void runtimeLaunchKernel(modelc_run_ctx *ctx, uint32_t device,
                                uint32_t kernel, const uint32_t grid[3],
                                const uint32_t block[3], uint32_t sharedBytes,
                                void **args) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  const Model::Impl &impl = *state->impl;
  if (device >= impl.devices.size() || !impl.devices[device].ctx) {
    runtimeReportError(ctx, ("launch_kernel on device #" +
                             std::to_string(device) + ", which is not a GPU")
                                .c_str());
    return;
  }
  const Model::Impl::DeviceState &d = impl.devices[device];
  if (kernel >= d.kernels.size()) {
    runtimeReportError(ctx,
                       ("launch_kernel of kernel #" + std::to_string(kernel) +
                        " on " + d.name + ": the model has " +
                        std::to_string(d.kernels.size()) + " kernels")
                           .c_str());
    return;
  }
  detail::CUresult rc = impl.cuda->cuLaunchKernel(
      d.kernels[kernel], grid[0], grid[1], grid[2], block[0], block[1],
      block[2], sharedBytes, state->resources->gpus[device].compute, args,
      nullptr);
  if (rc != 0)
    runtimeReportError(ctx, ("cuLaunchKernel failed on " + d.name +
                             " (kernel '" + impl.desc->kernel_names[kernel] +
                             "'): " + detail::cudaErrorName(rc))
                                .c_str());
}

static void runtimeGemm(modelc_run_ctx *ctx, uint32_t device,
                        const modelc_gemm *g) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  const Model::Impl &impl = *state->impl;
  if (device >= impl.devices.size() || !impl.devices[device].ctx) {
    runtimeReportError(ctx, ("gemm on device #" + std::to_string(device) +
                             ", which is not a GPU")
                                .c_str());
    return;
  }
  const Model::Impl::DeviceState &d = impl.devices[device];
  RunResources &resources = *state->resources;
  try {
    if (!resources.cublasLt) {
      std::string why;
      resources.cublasLt = detail::cublasLtApi(why);
      if (!resources.cublasLt)
        throw Error("plan '" + impl.planName +
                    "' computes matrix products on " + d.name +
                    " with cuBLASLt: " + why);
    }
    detail::runGemm(*resources.cublasLt, *impl.cuda,
                    resources.gpus[device].gemm, resources.gpus[device].compute,
                    *g, d.name);
  } catch (const std::exception &e) {
    runtimeReportError(ctx, e.what());
  }
}

static void runtimeCopy(modelc_run_ctx *ctx, uint32_t dstDevice, void *dst,
                        uint32_t srcDevice, const void *src, uint64_t bytes,
                        const char *op) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  const Model::Impl &impl = *state->impl;
  const Model::Impl::DeviceState &to = impl.devices.at(dstDevice);
  const Model::Impl::DeviceState &from = impl.devices.at(srcDevice);
  if (to.ctx || from.ctx) {
    // Issued from the destination's copy stream, on the CUDA copy stream of
    // the destination GPU (of the source GPU for a copy to the host, which
    // then waits for it: host work after it reads the data).
    RunResources *res = state->resources;
    const detail::CudaApi *cuda = impl.cuda;
    auto d = [](const void *p) {
      return static_cast<detail::CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
    };
    // The message is made only when a call fails.
    auto what = [=, &to, &from] {
      return (op ? std::string(op) + ": " : std::string()) + "a copy of " +
             std::to_string(bytes) + " bytes from " + from.name + " to " +
             to.name;
    };
    stream(ctx, dstDevice, MODELC_STREAM_COPY)
        .enqueue(gpuTask(ctx, [=, &to, &from] {
          if (to.ctx && from.ctx && dstDevice == srcDevice) {
            cuda->cuCtxSetCurrent(to.ctx);
            detail::cudaCheckLazy(
                cuda->cuMemcpyDtoDAsync(d(dst), d(src), bytes,
                                        res->gpus[dstDevice].copy),
                "cuMemcpyDtoDAsync", to.name, what);
          } else if (to.ctx && from.ctx) {
            cuda->cuCtxSetCurrent(to.ctx);
            detail::cudaCheckLazy(
                cuda->cuMemcpyPeerAsync(d(dst), to.ctx, d(src), from.ctx, bytes,
                                        res->gpus[dstDevice].copy),
                "cuMemcpyPeerAsync", to.name, what);
          } else if (to.ctx) {
            cuda->cuCtxSetCurrent(to.ctx);
            detail::cudaCheckLazy(
                cuda->cuMemcpyHtoDAsync(d(dst), src, bytes,
                                        res->gpus[dstDevice].copy),
                "cuMemcpyHtoDAsync", to.name, what);
          } else {
            detail::CUstream s = res->gpus[srcDevice].copy;
            cuda->cuCtxSetCurrent(from.ctx);
            detail::cudaCheckLazy(
                cuda->cuMemcpyDtoHAsync(dst, d(src), bytes, s),
                "cuMemcpyDtoHAsync", from.name, what);
            // While a graph is captured nothing runs: the replay syncs.
            if (!res->graph.capturing)
              detail::cudaCheckLazy(cuda->cuStreamSynchronize(s),
                                    "cuStreamSynchronize", from.name, what);
          }
        }));
    return;
  }
  // Simulated devices and the host share the address space: a copy is a
  // memcpy on the destination's copy stream.
  Stream::Task t{Stream::Task::Copy};
  t.ctx = ctx;
  t.dst = dst;
  t.src = src;
  t.bytes = bytes;
  stream(ctx, dstDevice, MODELC_STREAM_COPY).enqueue(t);
}

static void enqueueEvent(modelc_run_ctx *ctx, uint32_t device, int which,
                         uint32_t event, Stream::Task::Kind kind) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  const Model::Impl &impl = *state->impl;
  if (impl.cuda) {
    // A plan with GPUs: an event recorded on a GPU is a CUDA event, and the
    // host event says it has been issued. Waiting on it: a GPU stream waits
    // on the CUDA event; a host stream waits for it to complete.
    RunResources *res = state->resources;
    const Model::Impl::DeviceState &dev = impl.devices.at(device);
    const detail::CudaApi *cuda = impl.cuda;
    detail::CUstream gpuStream =
        dev.ctx ? (which == MODELC_STREAM_COPY ? res->gpus[device].copy
                                               : res->gpus[device].compute)
                : nullptr;
    auto what = [event] { return "event " + std::to_string(event); };
    if (kind == Stream::Task::Record) {
      stream(ctx, device, which).enqueue(gpuTask(ctx, [=, &dev] {
        struct Issued { // the host event is set even when a call fails
          RunResources *res;
          uint32_t event;
          ~Issued() { res->events.set(event); }
        } issued{res, event};
        if (!dev.ctx)
          return;
        cuda->cuCtxSetCurrent(dev.ctx);
        if (!res->gpuEvents.at(event)) {
          detail::cudaCheckLazy(cuda->cuEventCreate(&res->gpuEvents[event],
                                                    2 /* DISABLE_TIMING */),
                                "cuEventCreate", dev.name, what);
          res->gpuEventContexts[event] = dev.ctx;
        }
        detail::cudaCheckLazy(
            cuda->cuEventRecord(res->gpuEvents[event], gpuStream),
            "cuEventRecord", dev.name, what);
      }));
    } else {
      stream(ctx, device, which).enqueue(gpuTask(ctx, [=, &dev] {
        res->events.wait(event);
        detail::CUevent ev = res->gpuEvents.at(event);
        if (!ev)
          return;
        if (dev.ctx) {
          cuda->cuCtxSetCurrent(dev.ctx);
          detail::cudaCheckLazy(cuda->cuStreamWaitEvent(gpuStream, ev, 0),
                                "cuStreamWaitEvent", dev.name, what);
        } else if (!res->graph.capturing) {
          cuda->cuCtxSetCurrent(res->gpuEventContexts[event]);
          detail::cudaCheckLazy(cuda->cuEventSynchronize(ev),
                                "cuEventSynchronize", dev.name, what);
        }
      }));
    }
    return;
  }
  Stream::Task t{kind};
  t.ctx = ctx;
  t.event = event;
  t.events = &state->resources->events;
  stream(ctx, device, which).enqueue(t);
}

static void runtimeRecord(modelc_run_ctx *ctx, uint32_t device, int stream,
                          uint32_t event) {
  enqueueEvent(ctx, device, stream, event, Stream::Task::Record);
}

static void runtimeWait(modelc_run_ctx *ctx, uint32_t device, int stream,
                        uint32_t event) {
  enqueueEvent(ctx, device, stream, event, Stream::Task::Wait);
}

static void runtimeCheck(modelc_run_ctx *ctx, uint32_t device, const void *ptr,
                         uint64_t bytes, const char *what) {
  auto *state = static_cast<RunState *>(ctx->runtime);
  int owner = state->impl->ownerOf(*state, *ctx, ptr, bytes);
  if (owner == static_cast<int>(device))
    return;
  std::string message =
      std::string("checked run: ") + what + " on " +
      state->impl->devices[device].name + " touches " + std::to_string(bytes) +
      " bytes of " +
      (owner < 0 ? std::string("memory of no device")
                 : "the memory of " + state->impl->devices[owner].name) +
      ": a transfer is missing";
  runtimeReportError(ctx, message.c_str());
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

static bool validDType(uint32_t code) {
  return dtypeFromCode(code).has_value();
}

static TensorInfo tensorInfo(const modelc_tensor_desc &d,
                             const std::string &where) {
  if (!d.name || !validDType(d.dtype) || (d.rank && !d.shape))
    throw Error(where + ": malformed tensor description");
  TensorInfo info{d.name, *dtypeFromCode(d.dtype),
                  std::vector<int64_t>(d.shape, d.shape + d.rank)};
  for (int64_t dim : info.shape)
    if (dim < 0)
      throw Error(where + ": tensor '" + info.name +
                  "' has a negative "
                  "dimension");
  return info;
}

void Model::Impl::checkDescriptor() {
  std::string where = "model " + modelName(path);
  if (desc->struct_size < sizeof(modelc_model_desc))
    throw Error(where + " has a truncated descriptor (" +
                std::to_string(desc->struct_size) + " bytes, expected " +
                std::to_string(sizeof(modelc_model_desc)) + ")");
  compilerVersion = desc->compiler_version ? desc->compiler_version : "";
  compilerFlags = desc->compiler_flags ? desc->compiler_flags : "";
  if (desc->num_entries == 0 || !desc->entries)
    throw Error(where + " has no entry points");
  for (uint32_t i = 0; i < desc->num_entries; ++i) {
    const modelc_entry_desc &e = desc->entries[i];
    if (!e.name || (e.num_inputs && !e.inputs) || (e.num_outputs && !e.outputs))
      throw Error(where + ": malformed entry point #" + std::to_string(i));
    EntryInfo info{e.name, {}, {}};
    for (uint32_t j = 0; j < e.num_inputs; ++j)
      info.inputs.push_back(tensorInfo(e.inputs[j], where));
    for (uint32_t j = 0; j < e.num_outputs; ++j)
      info.outputs.push_back(tensorInfo(e.outputs[j], where));
    entries.push_back(std::move(info));
  }
  if (desc->num_weights && !desc->weights)
    throw Error(where + ": malformed weight table");
  for (uint32_t i = 0; i < desc->num_weights; ++i) {
    const modelc_weight_desc &w = desc->weights[i];
    if (!w.name || !validDType(w.dtype) || (w.rank && !w.shape))
      throw Error(where + ": malformed weight #" + std::to_string(i));
  }
  if ((desc->gpu_image && !desc->gpu_image_size) ||
      (desc->num_kernels && (!desc->kernel_names || !desc->gpu_image)))
    throw Error(where + ": malformed GPU code table");
  for (uint32_t k = 0; k < desc->num_kernels; ++k)
    if (!desc->kernel_names[k])
      throw Error(where + ": malformed GPU kernel #" + std::to_string(k));
  if (desc->num_plans == 0 || !desc->plans)
    throw Error(where + " has no plans");
  for (uint32_t i = 0; i < desc->num_plans; ++i) {
    const modelc_plan_desc &p = desc->plans[i];
    if (!p.name || !p.num_devices || !p.devices || !p.arena_bytes || !p.run)
      throw Error(where + ": malformed plan #" + std::to_string(i));
    for (uint32_t e = 0; e < desc->num_entries; ++e)
      if (!p.run[e])
        throw Error(where + ": plan '" + p.name + "' lacks entry point '" +
                    entries[e].name + "'");
  }
}

void Model::Impl::bindWeights(const LoadOptions &options) {
  std::string where = "model " + modelName(path);
  weights.assign(desc->num_weights, nullptr);
  std::string file = options.weights;
  if (file.empty() && !desc->weight_data && desc->external_weights &&
      desc->num_weights) {
    file = desc->external_weights;
    // A relative path is relative to the model.so.
    if (!file.empty() && file[0] != '/') {
      std::size_t slash = path.rfind('/');
      if (slash != std::string::npos)
        file = path.substr(0, slash + 1) + file;
    }
  }
  if (!file.empty()) {
    weightFile = std::make_unique<SafetensorsFile>(file);
    std::set<std::string> used;
    for (uint32_t i = 0; i < desc->num_weights; ++i) {
      const modelc_weight_desc &w = desc->weights[i];
      DType dtype = *dtypeFromCode(w.dtype);
      std::vector<int64_t> shape(w.shape, w.shape + w.rank);
      auto it = weightFile->tensors().find(w.name);
      if (it == weightFile->tensors().end())
        throw Error("weight '" + std::string(w.name) + "' is missing from '" +
                    file + "'");
      const SafetensorsEntry &entry = it->second;
      if (entry.dtype != dtype || entry.shape != shape)
        throw Error("weight '" + std::string(w.name) + "' in '" + file +
                    "' is " + describe(entry.dtype, entry.shape) +
                    "; the model expects " + describe(dtype, shape));
      used.insert(w.name);
      if (reinterpret_cast<uintptr_t>(entry.data) % 64 == 0) {
        weights[i] = entry.data;
      } else {
        // Kernels assume aligned data; copy once at load.
        ownedWeights.push_back(Tensor::copy_of(entry.data, shape, dtype));
        weights[i] = ownedWeights.back().data();
      }
    }
    for (const auto &[name, entry] : weightFile->tensors())
      if (!used.count(name))
        throw Error("'" + file + "' has a tensor '" + name + "' that model " +
                    modelName(path) + " does not use");
    return;
  }
  if (desc->num_weights == 0)
    return;
  if (!desc->weight_data)
    throw Error(where + " has no embedded weights; pass a safetensors file "
                        "in LoadOptions::weights");
  for (uint32_t i = 0; i < desc->num_weights; ++i) {
    const modelc_weight_desc &w = desc->weights[i];
    if (w.offset > desc->weight_data_size ||
        w.nbytes > desc->weight_data_size - w.offset)
      throw Error(where + ": weight '" + std::string(w.name) +
                  "' lies outside the embedded weight data");
    weights[i] = desc->weight_data + w.offset;
  }
}

Model Model::load(const std::string &path, const LoadOptions &options) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  std::string where = "model " + modelName(path);

  checkElfFile(path);

  // dlopen of a file path needs a slash, or it searches the library path.
  std::string dlPath = path.find('/') == std::string::npos ? "./" + path : path;
  impl->library = std::make_shared<Library>();
  impl->library->handle = ::dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->library->handle)
    throw Error("cannot load " + where + ": " + ::dlerror());
  auto fn = reinterpret_cast<modelc_model_fn>(
      ::dlsym(impl->library->handle, MODELC_MODEL_SYMBOL));
  if (!fn)
    throw Error(where + " is not a modelc model: it does not export " +
                MODELC_MODEL_SYMBOL);
  impl->desc = fn();
  if (!impl->desc)
    throw Error(where + " returned no descriptor");
  if (impl->desc->abi_version != MODELC_ABI_VERSION)
    throw Error(where + " was built for modelc ABI version " +
                std::to_string(impl->desc->abi_version) +
                "; this runtime supports version " +
                std::to_string(MODELC_ABI_VERSION) +
                " (rebuild the model with a matching modelc)");
  impl->checkDescriptor();

  // The plan: by name or by devices, else the best for this machine. GPUs
  // are probed only when a plan has them.
  std::vector<detail::PlanDevices> plans;
  bool anyGpu = false;
  for (uint32_t i = 0; i < impl->desc->num_plans; ++i) {
    const modelc_plan_desc &p = impl->desc->plans[i];
    detail::PlanDevices pd{p.name, {}};
    for (uint32_t d = 0; d < p.num_devices; ++d) {
      pd.devices.push_back(p.devices[d] ? p.devices[d] : "");
      anyGpu |= pd.devices.back().rfind("cuda:", 0) == 0;
    }
    plans.push_back(std::move(pd));
  }
  detail::MachineGpus machine;
  std::string noCuda;
  const detail::CudaApi *cuda = nullptr;
  if (anyGpu || options.plan.rfind("cuda:", 0) == 0) {
    const GpuInventory &gpus = visible_gpus();
    machine.count = static_cast<int>(gpus.gpus.size());
    machine.status = gpus.status;
    cuda = detail::cudaApi(noCuda);
    machine.drivable = cuda != nullptr;
    if (!cuda && machine.count > 0)
      machine.status += "; " + noCuda;
    // A model whose GPU plans multiply matrices needs cuBLASLt too: without
    // it the GPU plans cannot run here (the default choice is then a host
    // plan; asking for a GPU plan says why).
    std::string noLt;
    if (cuda && (impl->desc->gpu_libraries & MODELC_GPU_NEEDS_CUBLASLT) &&
        !detail::cublasLtApi(noLt)) {
      machine.drivable = false;
      machine.status += "; the model's GPU plans need cuBLASLt: " + noLt;
    }
  }
  detail::PlanChoice choice =
      detail::choosePlan(plans, options.plan, machine, where);
  impl->plan = &impl->desc->plans[choice.plan];
  if (std::any_of(choice.physical.begin(), choice.physical.end(),
                  [](int gpu) { return gpu >= 0; }))
    impl->cuda = cuda;
  impl->planName = impl->plan->name;
  if (options.cuda_graphs) {
    if (!impl->cuda)
      throw Error(where + ": CUDA graphs need a plan with GPUs; plan '" +
                  impl->planName + "' has none");
    if (!cuda->graphsMissing.empty())
      throw Error(where + ": CUDA graphs: the CUDA driver lacks " +
                  cuda->graphsMissing);
    std::string hostBound;
    for (std::size_t e = 0; e < impl->entries.size(); ++e)
      if (!impl->plan->graph_capturable || !impl->plan->graph_capturable[e])
        hostBound +=
            (hostBound.empty() ? "'" : ", '") + impl->entries[e].name + "'";
    if (!hostBound.empty())
      throw Error(where + ": CUDA graphs: in plan '" + impl->planName +
                  "', entry point " + hostBound +
                  " runs ops on the host, which a CUDA graph cannot hold "
                  "(a plan with every op on GPUs can be one: modelc "
                  "--place-all=cuda:0 builds such a plan)");
    impl->graphs = true;
  }

  impl->bindWeights(options);

  int threads = options.num_threads > 0
                    ? options.num_threads
                    : std::max(1u, std::thread::hardware_concurrency());
  impl->numThreads = threads;
  // GEMMs are split across the runtime's pool (runtimeSgemm); OpenBLAS
  // itself stays single-threaded so that no second set of threads competes
  // for the same cores.
  openblas_set_num_threads(1);
  impl->api.struct_size = sizeof(modelc_runtime_api);
  impl->api.sgemm = runtimeSgemm;
  impl->api.parallel_for = runtimeParallelFor;
  impl->api.linear = runtimeLinear;
  impl->api.conv2d = runtimeConv2d;
  impl->api.report_error = runtimeReportError;
  impl->api.launch = runtimeLaunch;
  impl->api.copy = runtimeCopy;
  impl->api.record = runtimeRecord;
  impl->api.wait = runtimeWait;
  impl->api.check = runtimeCheck;
  impl->api.launch_kernel = runtimeLaunchKernel;
  impl->api.gemm = runtimeGemm;
  impl->freeResources.resize(impl->entries.size());
  try {
    impl->setUpDevices(choice.physical);
  } catch (const Error &e) {
    // A GPU plan the runtime chose by itself that cannot be set up here
    // (its GPU code rejected, out of memory, ...): the model still runs,
    // on the plan it would pick without GPUs, and says why.
    if (!options.plan.empty() || !impl->cuda)
      throw;
    detail::MachineGpus none;
    none.status = "the GPU plan failed";
    LoadOptions fallback = options;
    try {
      detail::PlanChoice host = detail::choosePlan(plans, "", none, where);
      fallback.plan = impl->desc->plans[host.plan].name;
    } catch (const Error &) {
      throw e; // no plan without GPUs: the GPU plan's failure is the error
    }
    std::string failedPlan = impl->planName;
    impl.reset(); // releases what the GPU plan took
    Model model = Model::load(path, fallback);
    model.impl_->planNote = "GPU plan '" + failedPlan +
                            "' could not be set up (" + e.what() +
                            "); running plan '" + model.impl_->planName + "'";
    return model;
  }

  Model model;
  model.impl_ = std::move(impl);
  return model;
}

void Model::Impl::setUpDevices(const std::vector<int> &physical) {
  uint32_t count = plan->num_devices;
  multiDevice = count > 1 || std::strcmp(plan->devices[0], "cpu") != 0;
  uint32_t numWeights = desc->num_weights;
  devices.resize(count);
  for (uint32_t d = 0; d < count; ++d) {
    DeviceState &state = devices[d];
    state.name = plan->devices[d];
    state.weights.assign(numWeights, nullptr);
    if (physical[d] >= 0) {
      state.physical = physical[d];
      std::string what = "plan '" + planName + "'";
      detail::cudaCheck(cuda->cuDeviceGet(&state.gpu, state.physical),
                        "cuDeviceGet", state.name, what);
      detail::cudaCheck(cuda->cuDevicePrimaryCtxRetain(&state.ctx, state.gpu),
                        "cuDevicePrimaryCtxRetain", state.name, what);
      if (desc->gpu_image) {
        cuda->cuCtxSetCurrent(state.ctx);
        detail::cudaCheck(
            cuda->cuModuleLoadData(&state.module, desc->gpu_image),
            "cuModuleLoadData", state.name, "the model's GPU code, " + what);
        for (uint32_t k = 0; k < desc->num_kernels; ++k) {
          detail::CUfunction fn = nullptr;
          detail::cudaCheck(cuda->cuModuleGetFunction(&fn, state.module,
                                                      desc->kernel_names[k]),
                            "cuModuleGetFunction", state.name,
                            "kernel '" + std::string(desc->kernel_names[k]) +
                                "'");
          state.kernels.push_back(fn);
        }
      }
    }
    for (uint32_t w = 0; w < numWeights; ++w) {
      bool resident = plan->weight_devices
                          ? plan->weight_devices[d * numWeights + w] != 0
                          : d == 0;
      if (!resident)
        continue;
      if (state.name == "cpu") {
        state.weights[w] = weights[w];
        continue;
      }
      const modelc_weight_desc &desc_w = desc->weights[w];
      if (state.ctx) {
        // Uploaded once at load.
        std::string what = "weight '" + std::string(desc_w.name) + "'";
        detail::CUdeviceptr ptr = gpuAlloc(state, desc_w.nbytes, what);
        state.gpuWeights.push_back(ptr);
        detail::cudaCheck(cuda->cuMemcpyHtoD(ptr, weights[w], desc_w.nbytes),
                          "cuMemcpyHtoD", state.name, what);
        state.weights[w] =
            reinterpret_cast<const void *>(static_cast<uintptr_t>(ptr));
        continue;
      }
      // A simulated device holds its own copy, made once at load.
      state.ownedWeights.push_back(Tensor::copy_of(
          weights[w],
          std::vector<int64_t>(desc_w.shape, desc_w.shape + desc_w.rank),
          *dtypeFromCode(desc_w.dtype)));
      state.weights[w] = state.ownedWeights.back().data();
    }
  }
  for (DeviceState &state : devices)
    deviceWeightTables.push_back(state.weights.data());
  // Direct copies between the plan's GPUs where the hardware allows them
  // (NVLink or PCIe peer access); elsewhere the driver stages through the
  // host.
  for (DeviceState &a : devices)
    for (DeviceState &b : devices) {
      if (!a.ctx || !b.ctx || a.physical == b.physical)
        continue;
      int can = 0;
      if (cuda->cuDeviceCanAccessPeer(&can, a.gpu, b.gpu) != 0 || !can)
        continue;
      cuda->cuCtxSetCurrent(a.ctx);
      detail::CUresult rc = cuda->cuCtxEnablePeerAccess(b.ctx, 0);
      if (rc != 0 && rc != 704 /* CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED */)
        detail::cudaCheck(rc, "cuCtxEnablePeerAccess", a.name,
                          "peer access to " + b.name + ", plan '" + planName +
                              "'");
    }
}

int Model::Impl::ownerOf(const RunState &state, const modelc_run_ctx &ctx,
                         const void *ptr, uint64_t bytes) const {
  auto within = [&](const void *base, uint64_t size) {
    auto p = reinterpret_cast<uintptr_t>(ptr);
    auto b = reinterpret_cast<uintptr_t>(base);
    return base && p >= b && p + bytes <= b + size;
  };
  const EntryInfo &entry = entries[state.entry];
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (within(state.resources->arenaPointers[d],
               state.resources->arenaSizes[d]))
      return static_cast<int>(d);
    for (uint32_t w = 0; w < desc->num_weights; ++w)
      if (within(devices[d].weights[w], desc->weights[w].nbytes))
        return static_cast<int>(d);
    if (devices[d].name != "cpu")
      continue;
    for (std::size_t i = 0; i < entry.inputs.size(); ++i) {
      const TensorInfo &t = entry.inputs[i];
      Tensor view = Tensor::from_host(ctx.inputs[i], t.shape, t.dtype);
      if (within(ctx.inputs[i], view.nbytes()))
        return static_cast<int>(d);
    }
    for (std::size_t i = 0; i < entry.outputs.size(); ++i) {
      const TensorInfo &t = entry.outputs[i];
      Tensor view = Tensor::from_host(ctx.outputs[i], t.shape, t.dtype);
      if (within(ctx.outputs[i], view.nbytes()))
        return static_cast<int>(d);
    }
  }
  return -1;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

const std::vector<EntryInfo> &Model::entries() const { return impl_->entries; }

const EntryInfo &Model::entry(const std::string &name) const {
  return impl_->entries[impl_->entryIndex(name)];
}

const std::string &Model::plan() const { return impl_->planName; }
const std::string &Model::plan_note() const { return impl_->planNote; }
std::vector<std::string> Model::plans() const {
  std::vector<std::string> names;
  for (uint32_t p = 0; p < impl_->desc->num_plans; ++p)
    names.push_back(impl_->desc->plans[p].name);
  return names;
}
std::size_t Model::gpu_kernels() const {
  return impl_->desc->gpu_image ? impl_->desc->num_kernels : 0;
}
const std::string &Model::compiler_version() const {
  return impl_->compilerVersion;
}
const std::string &Model::compiler_flags() const {
  return impl_->compilerFlags;
}
int Model::num_threads() const { return impl_->numThreads; }

std::vector<std::string> Model::weight_names() const {
  std::vector<std::string> names;
  for (uint32_t i = 0; i < impl_->desc->num_weights; ++i)
    names.push_back(impl_->desc->weights[i].name);
  return names;
}

Tensor Model::weight(const std::string &name) const {
  for (uint32_t i = 0; i < impl_->desc->num_weights; ++i) {
    const modelc_weight_desc &w = impl_->desc->weights[i];
    if (name == w.name)
      return Tensor::from_host(impl_->weights[i],
                               std::vector<int64_t>(w.shape, w.shape + w.rank),
                               *dtypeFromCode(w.dtype));
  }
  throw Error("model '" + impl_->path + "' has no weight '" + name + "'");
}

uint64_t Model::arena_bytes(const std::string &entry) const {
  std::size_t index = impl_->entryIndex(entry);
  return impl_->plan->arena_bytes[index * impl_->plan->num_devices];
}

static void checkTensors(const std::string &what,
                         const std::vector<TensorInfo> &expected,
                         const std::vector<Tensor> &given,
                         const std::string &entry) {
  if (given.size() != expected.size())
    throw Error("entry point '" + entry + "' takes " +
                std::to_string(expected.size()) + " " + what + "s, got " +
                std::to_string(given.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const TensorInfo &want = expected[i];
    const Tensor &got = given[i];
    if (got.device() != "cpu")
      throw Error(what + " '" + want.name +
                  "': expected a tensor on cpu, "
                  "got one on " +
                  got.device());
    if (got.dtype() != want.dtype || got.shape() != want.shape)
      throw Error(what + " '" + want.name + "': expected " +
                  describe(want.dtype, want.shape) + ", got " + got.describe());
    if (!got.data() && got.nbytes())
      throw Error(what + " '" + want.name + "' has no data");
  }
}

/// A run of a GPU plan as a CUDA graph (LoadOptions::cuda_graphs): the first
/// run of `res` captures what the entry function issues on the run's CUDA
/// streams (relaxed mode: the host workers issue from their own threads;
/// every stream forks from and joins the first GPU's compute stream), with
/// host tasks (the outputs task) set aside; every run then launches the
/// graph, waits for it, and runs the host tasks. Errors go to report_error.
static void runAsGraph(const Model::Impl &impl, std::size_t index,
                       RunResources &res, modelc_run_ctx &ctx,
                       RunState &state) {
  const detail::CudaApi &cuda = *impl.cuda;
  std::size_t first = 0;
  while (!res.gpus[first].ctx)
    ++first;
  RunResources::Gpu &origin = res.gpus[first];
  const std::string &name = impl.devices[first].name;
  auto failed = [&](detail::CUresult rc, const char *call,
                    const std::string &what) {
    if (rc == 0)
      return false;
    runtimeReportError(&ctx, (std::string(call) + " failed on " + name + " (" +
                              what + "): " + detail::cudaErrorName(rc))
                                 .c_str());
    return true;
  };
  // The run's CUDA streams but the origin, with their contexts.
  std::vector<std::pair<detail::CUstream, detail::CUcontext>> others;
  for (RunResources::Gpu &g : res.gpus)
    if (g.ctx)
      for (detail::CUstream s : {g.compute, g.copy})
        if (s != origin.compute)
          others.push_back({s, g.ctx});
  auto newEvent = [&](detail::CUcontext c) {
    detail::CUevent e = nullptr;
    cuda.cuCtxSetCurrent(c);
    if (!failed(cuda.cuEventCreate(&e, 2 /* DISABLE_TIMING */), "cuEventCreate",
                "a CUDA graph's fork or join"))
      res.graph.events.push_back({e, c});
    return e;
  };

  if (!res.graph.exec) {
    std::size_t numEvents =
        impl.plan->num_events ? impl.plan->num_events[index] : 0;
    res.events.reset(numEvents);
    res.gpuEvents.resize(numEvents, nullptr); // made by the first run
    res.gpuEventContexts.resize(numEvents, nullptr);
    std::string what = "capturing entry '" + impl.entries[index].name +
                       "' of plan '" + impl.planName + "' as a CUDA graph";
    cuda.cuCtxSetCurrent(origin.ctx);
    if (failed(cuda.cuStreamBeginCapture(
                   origin.compute, 2 /* CU_STREAM_CAPTURE_MODE_RELAXED */),
               "cuStreamBeginCapture", what))
      return;
    // Fork: every other stream of the run joins the capture.
    detail::CUevent fork = newEvent(origin.ctx);
    if (fork)
      failed(cuda.cuEventRecord(fork, origin.compute), "cuEventRecord", what);
    for (auto &[s, c] : others) {
      cuda.cuCtxSetCurrent(c);
      if (fork)
        failed(cuda.cuStreamWaitEvent(s, fork, 0), "cuStreamWaitEvent", what);
    }
    res.graph.capturing = true;
    res.graph.hostTasks.clear();
    int status = state.error.empty() ? impl.plan->run[index](&ctx) : 1;
    for (std::size_t d = 0; d < res.compute.size(); ++d) {
      res.compute[d]->drain();
      res.copy[d]->drain();
    }
    // Join: the origin waits for every other stream's last work.
    for (auto &[s, c] : others) {
      detail::CUevent join = newEvent(c);
      if (!join)
        continue;
      cuda.cuCtxSetCurrent(c);
      failed(cuda.cuEventRecord(join, s), "cuEventRecord", what);
      cuda.cuCtxSetCurrent(origin.ctx);
      failed(cuda.cuStreamWaitEvent(origin.compute, join, 0),
             "cuStreamWaitEvent", what);
    }
    cuda.cuCtxSetCurrent(origin.ctx);
    detail::CUgraph graph = nullptr;
    detail::CUresult rc = cuda.cuStreamEndCapture(origin.compute, &graph);
    res.graph.capturing = false;
    bool ok = !failed(rc, "cuStreamEndCapture", what) && status == 0 &&
              state.error.empty() && graph;
    if (ok)
      ok = !failed(cuda.cuGraphInstantiate(&res.graph.exec, graph, 0),
                   "cuGraphInstantiate", what);
    if (graph)
      cuda.cuGraphDestroy(graph);
    if (!ok) {
      res.graph.exec = nullptr;
      if (state.error.empty())
        runtimeReportError(&ctx, (what + " failed").c_str());
      return;
    }
  }
  cuda.cuCtxSetCurrent(origin.ctx);
  if (failed(cuda.cuGraphLaunch(res.graph.exec, origin.compute),
             "cuGraphLaunch", "entry '" + impl.entries[index].name + "'") ||
      failed(cuda.cuStreamSynchronize(origin.compute), "cuStreamSynchronize",
             "the end of the graph of entry '" + impl.entries[index].name +
                 "'"))
    return;
  for (modelc_task_fn task : res.graph.hostTasks)
    if (task(&ctx) != 0)
      return; // the task has reported why
}

void Model::run_into(const std::string &entry,
                     const std::vector<Tensor> &inputs,
                     std::vector<Tensor> &outputs) const {
  Impl &impl = *impl_;
  std::size_t index = impl.entryIndex(entry);
  const EntryInfo &info = impl.entries[index];
  checkTensors("input", info.inputs, inputs, entry);
  checkTensors("output", info.outputs, outputs, entry);

  // Pointer tables on the stack for small models, no allocation.
  constexpr std::size_t kInline = 16;
  const void *inlineIn[kInline];
  void *inlineOut[kInline];
  std::vector<const void *> heapIn;
  std::vector<void *> heapOut;
  const void **in = inlineIn;
  void **out = inlineOut;
  if (inputs.size() > kInline) {
    heapIn.resize(inputs.size());
    in = heapIn.data();
  }
  if (outputs.size() > kInline) {
    heapOut.resize(outputs.size());
    out = heapOut.data();
  }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    in[i] = inputs[i].data();
  for (std::size_t i = 0; i < outputs.size(); ++i)
    out[i] = outputs[i].mutable_data();

  std::unique_ptr<RunResources> resources = impl.acquireResources(index);
  RunState state;
  state.impl = &impl;
  state.entry = index;
  state.resources = resources.get();
  modelc_run_ctx ctx;
  ctx.api = &impl.api;
  ctx.runtime = &state;
  ctx.inputs = in;
  if (!resources->stagedPointers.empty()) {
    // GPUs copy the inputs from page-locked memory.
    for (std::size_t i = 0; i < inputs.size(); ++i)
      std::memcpy(resources->stagedInputs[i]->memory, inputs[i].data(),
                  inputs[i].nbytes());
    ctx.inputs = resources->stagedPointers.data();
  }
  ctx.outputs = out;
  ctx.weights = impl.weights.data();
  ctx.arena = resources->arenaPointers[0];
  ctx.arenas = resources->arenaPointers.data();
  ctx.device_weights = impl.deviceWeightTables.data();
  int status;
  if (impl.graphs && resources->graph.warm) {
    runAsGraph(impl, index, *resources, ctx, state);
    status = 0;
  } else if (impl.multiDevice) {
    // (Graph mode: the first run of these resources goes without a graph,
    // so that what is made on first use — cuBLASLt's handle, workspace and
    // plans, events — is made outside the capture.)
    resources->graph.warm = true;
    // The entry function enqueues; the run ends when the run's own streams
    // have drained.
    std::size_t numEvents =
        impl.plan->num_events ? impl.plan->num_events[index] : 0;
    resources->events.reset(numEvents);
    if (impl.cuda) {
      resources->gpuEvents.resize(numEvents, nullptr);
      resources->gpuEventContexts.resize(numEvents, nullptr);
    }
    status = impl.plan->run[index](&ctx);
    for (std::size_t d = 0; d < resources->compute.size(); ++d) {
      resources->compute[d]->drain();
      resources->copy[d]->drain();
    }
    // Then the GPUs: the run ends when their streams have finished.
    for (std::size_t d = 0; d < resources->gpus.size(); ++d) {
      RunResources::Gpu &g = resources->gpus[d];
      if (!g.ctx)
        continue;
      impl.cuda->cuCtxSetCurrent(g.ctx);
      for (detail::CUstream s : {g.compute, g.copy})
        if (detail::CUresult rc = impl.cuda->cuStreamSynchronize(s))
          runtimeReportError(
              &ctx, ("cuStreamSynchronize failed on " + impl.devices[d].name +
                     " at the end of the run: " + detail::cudaErrorName(rc))
                        .c_str());
    }
  } else {
    status = impl.plan->run[index](&ctx);
  }
  impl.releaseResources(index, std::move(resources));
  if (status != 0 || !state.error.empty())
    throw Error(
        "running '" + entry + "' of model " + modelName(impl.path) +
        " failed: " + (state.error.empty() ? "unknown error" : state.error));
}

std::vector<Tensor> Model::run(const std::string &entry,
                               const std::vector<Tensor> &inputs) const {
  const EntryInfo &info = this->entry(entry);
  std::vector<Tensor> outputs;
  outputs.reserve(info.outputs.size());
  for (const TensorInfo &o : info.outputs)
    outputs.push_back(Tensor::zeros(o.shape, o.dtype));
  run_into(entry, inputs, outputs);
  return outputs;
}

} // namespace modelc
