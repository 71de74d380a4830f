// packed_conv.hpp - 2-D convolutions through oneDNN with weights packed once.
//
// oneDNN's direct convolutions (brgconv on AVX-512) want blocked layouts:
// each call site keeps its weight reordered once, and each run reorders its
// NCHW input in and its output back out around the convolution. Measured on
// ResNet-18's layers: 410-560 GFLOP/s including the reorders, against
// 145-355 GFLOP/s for im2col + GEMM on NCHW (bench/RESULTS.md).
#ifndef MODELC_RUNTIME_PACKED_CONV_HPP
#define MODELC_RUNTIME_PACKED_CONV_HPP

#include <oneapi/dnnl/dnnl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace modelc {

/// One call site: the convolution, its packed weight, the reorders.
struct PackedConvSite {
  dnnl_primitive_t conv = nullptr, reorderIn = nullptr, reorderOut = nullptr;
  dnnl_memory_t packedWeight = nullptr;
  dnnl_memory_desc_t plainSrc{}, plainDst{}, src{}, dst{}, bias{};
  dnnl_memory_desc_t convScratch{}, inScratch{}, outScratch{};
  bool hasBias = false;
  ~PackedConvSite();
};

/// What one run keeps per site: handles, blocked buffers, scratchpads.
struct PackedConvHandles {
  dnnl_memory_t plainSrc = nullptr, plainDst = nullptr, src = nullptr,
                dst = nullptr, bias = nullptr;
  dnnl_memory_t convScratch = nullptr, inScratch = nullptr,
                outScratch = nullptr;
  dnnl_stream_t stream = nullptr;
  ~PackedConvHandles();
};

class PackedConvCache {
public:
  PackedConvCache();
  ~PackedConvCache();
  PackedConvSite *site(uint32_t id, const float *w, bool hasBias,
                       const int64_t *shape, std::string &error);
  dnnl_engine_t engine() const { return engine_; }

private:
  dnnl_engine_t engine_ = nullptr;
  std::mutex mutex_;
  std::unordered_map<uint32_t, std::unique_ptr<PackedConvSite>> sites_;
};

class PackedConvRun {
public:
  bool execute(PackedConvCache &cache, uint32_t id, PackedConvSite &site,
               const float *x, const float *bias, float *y, std::string &error);

private:
  std::mutex mutex_;
  std::unordered_map<uint32_t, PackedConvHandles> handles_;
};

} // namespace modelc

#endif // MODELC_RUNTIME_PACKED_CONV_HPP
