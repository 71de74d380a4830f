// calibrate.cpp - measures this machine's CPU for the compiler's cost model
// (modelc-run --calibrate): the figures a target JSON gives a device
// (docs/placement.md), measured with the code modelc's plans run.
#include "modelc/calibrate.hpp"

#include "packed_product.hpp"
#include "parallel.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace modelc {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Bytes of memory modelc's plans may use here: the machine's, or a
/// cgroup's limit below it.
uint64_t machineMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  uint64_t memory =
      pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
  for (const char *file : {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    unsigned long long limit = 0;
    if (in >> limit && limit > 0 && (memory == 0 || limit < memory))
      memory = limit;
  }
  return memory;
}

struct CopyArgs {
  const unsigned char *src;
  unsigned char *dst;
};

void copyChunk(void *arg, int64_t begin, int64_t end) {
  auto *a = static_cast<CopyArgs *>(arg);
  std::memcpy(a->dst + begin, a->src + begin, static_cast<size_t>(end - begin));
}

/// Memory bandwidth as the cost model counts it (bytes read plus bytes
/// written, per second): a parallel copy of `bytes`, the best of `reps`.
double measureBandwidth(int threads, uint64_t bytes, int reps) {
  std::vector<unsigned char> src(bytes, 1), dst(bytes, 0);
  CopyArgs args{src.data(), dst.data()};
  double best = 0;
  for (int r = 0; r < reps + 1; ++r) { // the first touches the pages
    auto start = Clock::now();
    parallelFor(threads, static_cast<int64_t>(bytes), 1 << 20, copyChunk,
                &args);
    double t = seconds(start);
    if (r > 0)
      best = std::max(best, 2.0 * static_cast<double>(bytes) / t);
  }
  return best;
}

void nothing(void *, int64_t, int64_t) {}

/// What one parallel loop costs beyond its work: the CPU's "launch".
double measureLoopOverhead(int threads) {
  std::vector<double> times;
  for (int r = 0; r < 7; ++r) {
    const int loops = 2000;
    auto start = Clock::now();
    for (int i = 0; i < loops; ++i)
      parallelFor(threads, threads, 1, nothing, nullptr);
    times.push_back(seconds(start) / loops);
  }
  return median(times);
}

/// FLOP/s of an n x n x n matrix product of a constant weight through the
/// runtime's packed products (oneDNN), in f32 or, with `flags`, f16/bf16:
/// the best of a few runs after a warm-up.
double measureProduct(int threads, int64_t n, uint32_t flags,
                      std::string &error) {
  bool half = flags != 0;
  size_t elements = static_cast<size_t>(n * n);
  std::vector<float> xf(elements, 0.5f), wf(elements, 0.25f), yf(elements);
  std::vector<uint16_t> xh(elements, 0x3800), wh(elements, 0x3400),
      yh(elements);
  if (flags & MODELC_PRODUCT_BF16) {
    std::fill(xh.begin(), xh.end(), uint16_t(0x3f00));
    std::fill(wh.begin(), wh.end(), uint16_t(0x3e80));
  }
  const void *x = half ? static_cast<const void *>(xh.data()) : xf.data();
  const void *w = half ? static_cast<const void *>(wh.data()) : wf.data();
  void *y = half ? static_cast<void *>(yh.data()) : yf.data();
  modelc_product p{};
  p.site = 1;
  p.kind = MODELC_PRODUCT_MATMUL;
  p.trans_w = 1;
  p.m = p.n = p.k = n;
  p.flags = flags;
  p.what = "calibration";
  omp_set_num_threads(threads);
  PackedProductCache cache;
  PackedProductRun run;
  PackedProductSite *site = cache.site(p, w, false, error);
  if (!site)
    return 0;
  double flops = 2.0 * double(n) * double(n) * double(n), best = 0;
  for (int r = 0; r < 6; ++r) {
    auto start = Clock::now();
    if (!run.execute(cache, p, *site, w, x, nullptr, y, nullptr, error))
      return 0;
    double t = seconds(start);
    if (r > 0)
      best = std::max(best, flops / t);
  }
  return best;
}

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

} // namespace

CalibrationResult calibrate_cpu(int num_threads) {
  int threads = num_threads > 0 ? num_threads : defaultThreads();
  CalibrationResult result;
  result.threads = threads;
  result.memory = machineMemory();
  result.bandwidth = measureBandwidth(threads, uint64_t(64) << 20, 5);
  result.launch_overhead = measureLoopOverhead(threads);
  std::string error;
  for (int64_t n : {256, 512, 1024}) {
    double f32 = measureProduct(threads, n, 0, error);
    if (!error.empty())
      throw Error("calibration: an f32 matrix product failed: " + error);
    result.gemm.push_back({"f32", n, f32});
    result.peak_f32 = std::max(result.peak_f32, f32);
  }
  // f16 and bf16 at the largest size: oneDNN's own kernels where the CPU
  // has them, else f32 with conversions (what the plans run, too).
  for (auto [name, flag] :
       {std::pair<const char *, uint32_t>{"f16", MODELC_PRODUCT_F16},
        {"bf16", MODELC_PRODUCT_BF16}}) {
    double rate = measureProduct(threads, 1024, flag, error);
    if (!error.empty())
      throw Error(std::string("calibration: a ") + name +
                  " matrix product failed: " + error);
    result.gemm.push_back({name, 1024, rate});
    (std::string(name) == "f16" ? result.peak_f16 : result.peak_bf16) = rate;
  }
  return result;
}

std::string calibration_target_json(const CalibrationResult &r,
                                    const std::string &name) {
  auto peaks = [](double f32, double f16, double bf16, double i32, double i64) {
    return "{\"f32\": " + number(f32) + ", \"f16\": " + number(f16) +
           ", \"bf16\": " + number(bf16) + ", \"i32\": " + number(i32) +
           ", \"i64\": " + number(i64) + "}";
  };
  auto device = [&](const std::string &device, uint64_t memory,
                    double bandwidth, double launch, const std::string &flops) {
    return "    {\"device\": \"" + device +
           "\", \"memory\": " + std::to_string(memory) +
           ", \"bandwidth\": " + number(bandwidth) +
           ", \"launch_overhead\": " + number(launch) +
           ",\n     \"peak_flops\": " + flops + "}";
  };
  auto link = [](const std::string &from, const std::string &to,
                 double bandwidth, double latency) {
    return "    {\"from\": \"" + from + "\", \"to\": \"" + to +
           "\", \"bandwidth\": " + number(bandwidth) +
           ", \"latency\": " + number(latency) + "}";
  };
  std::string json = "{\n  \"name\": \"" + name + "\",\n";
  json += "  \"calibration\": {\"threads\": " + std::to_string(r.threads) +
          ", \"gemm_flops\": [";
  for (size_t i = 0; i < r.gemm.size(); ++i)
    json += std::string(i ? ", " : "") + "{\"dtype\": \"" + r.gemm[i].dtype +
            "\", \"n\": " + std::to_string(r.gemm[i].n) +
            ", \"flops\": " + number(r.gemm[i].flops) + "}";
  json += "]";
  for (const CalibrationResult::Gpu &g : r.gpus)
    json += ", \"cuda:" + std::to_string(g.ordinal) + "\": \"" + g.name + "\"";
  json += "},\n  \"devices\": [\n";
  json += device("cpu", r.memory, r.bandwidth, r.launch_overhead,
                 peaks(r.peak_f32, r.peak_f16, r.peak_bf16, r.peak_f32 / 2,
                       r.peak_f32 / 4));
  for (const CalibrationResult::Gpu &g : r.gpus)
    json += ",\n" + device("cuda:" + std::to_string(g.ordinal), g.memory,
                           g.bandwidth, g.launch_overhead,
                           peaks(g.peak_f32, g.peak_f16, g.peak_bf16,
                                 g.peak_f32 / 2, g.peak_f32 * 0.15));
  json += "\n  ],\n  \"links\": [";
  std::vector<std::string> links;
  for (const CalibrationResult::Gpu &g : r.gpus) {
    std::string gpu = "cuda:" + std::to_string(g.ordinal);
    links.push_back(link("cpu", gpu, g.to_gpu.bandwidth, g.to_gpu.latency));
    links.push_back(link(gpu, "cpu", g.to_host.bandwidth, g.to_host.latency));
  }
  for (const CalibrationResult::Peer &p : r.peers)
    links.push_back(link("cuda:" + std::to_string(p.from),
                         "cuda:" + std::to_string(p.to), p.bandwidth,
                         p.latency));
  for (size_t i = 0; i < links.size(); ++i)
    json += (i ? ",\n" : "\n") + links[i];
  json += links.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return json;
}

} // namespace modelc
