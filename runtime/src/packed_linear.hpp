// packed_linear.hpp - y = x * W^T + b with W pre-packed once (oneDNN matmul).
//
// Linear layers read a weight that never changes between runs. oneDNN's
// matmul with weights in its own blocked layout ("format any", reordered
// once) runs ~500 GFLOP/s on the MLP and transformer shapes where OpenBLAS
// sgemm, which packs its operand again on every call, runs 300-390
// (bench/RESULTS.md). The packed weight and the primitive are made on the
// first run of a call site and shared by every run; each run keeps its own
// memory handles, so runs from many threads need no lock once warm and
// allocate nothing.
#ifndef MODELC_RUNTIME_PACKED_LINEAR_HPP
#define MODELC_RUNTIME_PACKED_LINEAR_HPP

#include <oneapi/dnnl/dnnl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace modelc {

/// One call site's primitive and packed weight.
struct PackedLinearSite {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t packedWeight = nullptr;
  dnnl_memory_desc_t src{}, dst{}, bias{}, scratchpad{};
  bool hasBias = false;
  ~PackedLinearSite();
};

/// The memory handles and stream one run uses at one call site (a site is
/// one op, which a run executes once, so these are never shared).
struct PackedLinearHandles {
  dnnl_memory_t src = nullptr, dst = nullptr, bias = nullptr;
  dnnl_memory_t scratchpad = nullptr; // the run's own: runs share primitives
  dnnl_stream_t stream = nullptr;
  ~PackedLinearHandles();
};

/// The sites of one model, and the engine they run on.
class PackedLinearCache {
public:
  PackedLinearCache();
  ~PackedLinearCache();
  /// The site, made (and its weight packed) on first use; null on failure.
  PackedLinearSite *site(uint32_t id, const float *w, bool hasBias, int64_t m,
                         int64_t n, int64_t k, std::string &error);
  dnnl_engine_t engine() const { return engine_; }

private:
  dnnl_engine_t engine_ = nullptr;
  std::mutex mutex_;
  std::unordered_map<uint32_t, std::unique_ptr<PackedLinearSite>> sites_;
};

/// Per run: a stream and the handles of each site.
class PackedLinearRun {
public:
  ~PackedLinearRun();
  /// Runs `site` on x, bias -> y; false (with `error`) on failure.
  bool execute(PackedLinearCache &cache, uint32_t id, PackedLinearSite &site,
               const float *x, const float *bias, float *y, std::string &error);

private:
  std::mutex mutex_; // tasks of several devices may run at once
  std::unordered_map<uint32_t, PackedLinearHandles> handles_;
};

} // namespace modelc

#endif // MODELC_RUNTIME_PACKED_LINEAR_HPP
