// calibrate_gpu.cpp - measures each visible GPU and the links between the
// host and the GPUs and between GPUs (modelc-run --calibrate), through the
// CUDA driver and cuBLASLt as the plans use them.
#include "modelc/calibrate.hpp"

#include "cublaslt.hpp"
#include "cuda_driver.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

namespace modelc {

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// An empty kernel, as PTX: the driver compiles it for whatever GPU it has.
const char kEmptyKernel[] = "// modelc calibration: an empty kernel\n"
                            ".version 6.0\n"
                            ".target sm_50\n"
                            ".address_size 64\n"
                            ".visible .entry modelc_empty()\n"
                            "{\n"
                            "  ret;\n"
                            "}\n";

/// One GPU's context, stream and buffers for the measurements.
struct GpuSession {
  const CudaApi &cuda;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  std::vector<CUdeviceptr> buffers;
  std::string name;

  GpuSession(const CudaApi &cuda, int ordinal)
      : cuda(cuda), ordinal(ordinal), name("cuda:" + std::to_string(ordinal)) {
    check(cuda.cuDeviceGet(&device, ordinal), "cuDeviceGet");
    check(cuda.cuDevicePrimaryCtxRetain(&ctx, device),
          "cuDevicePrimaryCtxRetain");
    CUresult rc = cuda.cuCtxSetCurrent(ctx);
    const char *call = "cuCtxSetCurrent";
    if (rc == 0) {
      rc = cuda.cuStreamCreate(&stream, 1);
      call = "cuStreamCreate";
    }
    if (rc != 0) {
      cuda.cuDevicePrimaryCtxRelease(device);
      check(rc, call); // throws
    }
  }
  ~GpuSession() {
    if (cuda.cuCtxSetCurrent(ctx) != 0) { // nothing can be freed without it
      cuda.cuDevicePrimaryCtxRelease(device);
      return;
    }
    for (CUdeviceptr b : buffers)
      cuda.cuMemFree(b);
    if (stream)
      cuda.cuStreamDestroy(stream);
    if (ctx)
      cuda.cuDevicePrimaryCtxRelease(device);
  }
  /// Frees the buffers allocated since `mark` (buffers.size() then).
  void freeSince(size_t mark) {
    current();
    for (size_t i = mark; i < buffers.size(); ++i)
      cuda.cuMemFree(buffers[i]);
    buffers.resize(mark);
  }
  void current() const { check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); }
  void check(CUresult rc, const char *call) const {
    cudaCheck(rc, call, name, "calibration");
  }
  CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    check(cuda.cuMemAlloc(&p, bytes), "cuMemAlloc");
    buffers.push_back(p);
    return p;
  }
  void sync() const {
    check(cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
};

/// The best of `reps` timings of `issue` (after one warm-up), each waited
/// for on `s`.
template <typename Issue>
double bestTime(const GpuSession &s, int reps, Issue issue) {
  double best = 1e30;
  for (int r = 0; r <= reps; ++r) {
    auto start = Clock::now();
    issue();
    s.sync();
    if (r > 0)
      best = std::min(best, since(start));
  }
  return best;
}

/// Pinned host memory of the GPU's context.
struct Pinned {
  const CudaApi &cuda;
  void *memory = nullptr;
  Pinned(const GpuSession &s, size_t bytes) : cuda(s.cuda) {
    s.check(cuda.cuMemHostAlloc(&memory, bytes, 0), "cuMemHostAlloc");
  }
  ~Pinned() {
    if (memory)
      cuda.cuMemFreeHost(memory);
  }
};

/// Matrix products of n x n x n through cuBLASLt in `dtype`, n doubled from
/// 512 while one takes under 20 ms (at most 8192): op/s of the largest.
double measureGemm(GpuSession &s, const CublasLtApi &lt, uint32_t dtype,
                   uint32_t site) {
  size_t element = dtype == MODELC_DTYPE_F32 ? 4 : 2;
  GemmState state;
  double rate = 0;
  try {
    for (int64_t n = 512; n <= 8192; n *= 2) {
      size_t bytes = size_t(n * n) * element;
      size_t mark = s.buffers.size(); // each size's buffers freed after it
      CUdeviceptr a = s.alloc(bytes), b = s.alloc(bytes), c = s.alloc(bytes);
      modelc_gemm g{};
      g.site = site + static_cast<uint32_t>(n);
      g.dtype = dtype;
      g.m = g.n = g.k = n;
      g.batch = 1;
      g.a = reinterpret_cast<const void *>(static_cast<uintptr_t>(a));
      g.b = reinterpret_cast<const void *>(static_cast<uintptr_t>(b));
      g.c = reinterpret_cast<void *>(static_cast<uintptr_t>(c));
      g.lda = g.ldb = g.ldc = n;
      g.alpha = 1.0f;
      g.what = "calibration";
      double t = bestTime(
          s, 3, [&] { runGemm(lt, s.cuda, state, s.stream, g, s.name); });
      rate = 2.0 * double(n) * double(n) * double(n) / t;
      s.freeSince(mark);
      if (t > 0.02)
        break;
    }
  } catch (...) {
    releaseGemmState(lt, s.cuda, state);
    throw;
  }
  releaseGemmState(lt, s.cuda, state);
  return rate;
}

} // namespace

void calibrate_gpus(CalibrationResult &result) {
  const GpuInventory &inventory = visible_gpus();
  if (inventory.gpus.empty())
    return;
  std::string why;
  const CudaApi *cuda = cudaApi(why);
  if (!cuda)
    throw Error("calibration: this machine shows GPUs, but " + why);
  const CublasLtApi *lt = cublasLtApi(why);
  if (!lt)
    throw Error("calibration: GPU matrix products need cuBLASLt: " + why);
  std::vector<std::unique_ptr<GpuSession>> sessions;
  for (const GpuInfo &info : inventory.gpus) {
    sessions.push_back(std::make_unique<GpuSession>(*cuda, info.ordinal));
    GpuSession &s = *sessions.back();
    CalibrationResult::Gpu gpu;
    gpu.ordinal = info.ordinal;
    gpu.name = info.name;
    gpu.memory = info.memory_bytes;
    // Device memory: a copy within the GPU reads and writes each byte.
    size_t bytes = size_t(256) << 20;
    size_t mark = s.buffers.size();
    CUdeviceptr a = s.alloc(bytes), b = s.alloc(bytes);
    double t = bestTime(s, 3, [&] {
      s.check(cuda->cuMemcpyDtoDAsync(b, a, bytes, s.stream),
              "cuMemcpyDtoDAsync");
    });
    gpu.bandwidth = 2.0 * double(bytes) / t;
    // Links to and from the host: 64 MB from page-locked memory, and a
    // 4-byte copy's time as the latency.
    size_t linkBytes = size_t(64) << 20;
    Pinned host(s, linkBytes);
    gpu.to_gpu.bandwidth =
        double(linkBytes) / bestTime(s, 3, [&] {
          s.check(cuda->cuMemcpyHtoDAsync(a, host.memory, linkBytes, s.stream),
                  "cuMemcpyHtoDAsync");
        });
    gpu.to_host.bandwidth =
        double(linkBytes) / bestTime(s, 3, [&] {
          s.check(cuda->cuMemcpyDtoHAsync(host.memory, a, linkBytes, s.stream),
                  "cuMemcpyDtoHAsync");
        });
    gpu.to_gpu.latency = bestTime(s, 20, [&] {
      s.check(cuda->cuMemcpyHtoDAsync(a, host.memory, 4, s.stream),
              "cuMemcpyHtoDAsync");
    });
    gpu.to_host.latency = bestTime(s, 20, [&] {
      s.check(cuda->cuMemcpyDtoHAsync(host.memory, a, 4, s.stream),
              "cuMemcpyDtoHAsync");
    });
    // Launch overhead: the time per launch of 200 empty kernels in a row.
    CUmodule module = nullptr;
    CUfunction empty = nullptr;
    s.check(cuda->cuModuleLoadData(&module, kEmptyKernel), "cuModuleLoadData");
    struct Unload { // on every way out
      const CudaApi *cuda;
      CUmodule module;
      ~Unload() { cuda->cuModuleUnload(module); }
    } unload{cuda, module};
    s.check(cuda->cuModuleGetFunction(&empty, module, "modelc_empty"),
            "cuModuleGetFunction");
    const int launches = 200;
    gpu.launch_overhead =
        bestTime(s, 3,
                 [&] {
                   for (int i = 0; i < launches; ++i)
                     s.check(cuda->cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0,
                                                  s.stream, nullptr, nullptr),
                             "cuLaunchKernel");
                 }) /
        launches;
    s.freeSince(mark);
    gpu.peak_f32 = measureGemm(s, *lt, MODELC_DTYPE_F32, 1u << 20);
    gpu.peak_f16 = measureGemm(s, *lt, MODELC_DTYPE_F16, 2u << 20);
    gpu.peak_bf16 = measureGemm(s, *lt, MODELC_DTYPE_BF16, 3u << 20);
    result.gpus.push_back(gpu);
  }
  // Between GPUs that reach each other: 64 MB peer copies.
  for (size_t i = 0; i < sessions.size(); ++i)
    for (size_t j = 0; j < sessions.size(); ++j) {
      if (i == j)
        continue;
      GpuSession &from = *sessions[i], &to = *sessions[j];
      int can = 0;
      if (cuda->cuDeviceCanAccessPeer(&can, to.device, from.device) || !can)
        continue;
      to.current();
      cuda->cuCtxEnablePeerAccess(from.ctx, 0); // already enabled: fine
      size_t bytes = size_t(64) << 20;
      CUdeviceptr src = 0, dst = 0;
      from.current();
      src = from.alloc(bytes);
      to.current();
      dst = to.alloc(bytes);
      double t = bestTime(to, 3, [&] {
        to.check(cuda->cuMemcpyPeerAsync(dst, to.ctx, src, from.ctx, bytes,
                                         to.stream),
                 "cuMemcpyPeerAsync");
      });
      double latency = bestTime(to, 20, [&] {
        to.check(
            cuda->cuMemcpyPeerAsync(dst, to.ctx, src, from.ctx, 4, to.stream),
            "cuMemcpyPeerAsync");
      });
      result.peers.push_back(
          {from.ordinal, to.ordinal, double(bytes) / t, latency});
    }
}

} // namespace modelc
