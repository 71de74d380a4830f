// packed_product.hpp - products of constant weights through oneDNN, with
// the weight packed once and the ops after the product as post-ops.
//
// Linear layers and convolutions read a weight that never changes between
// runs. oneDNN's matmul and direct convolution with weights in their own
// blocked layout ("format any", reordered once) run ~500 GFLOP/s on the
// bench shapes where OpenBLAS sgemm, which packs its operand again on every
// call, runs 300-390, and im2col + GEMM 145-355 (bench/RESULTS.md). The ops
// the compiler folded after the product (modelc-fold-cpu-products: bias,
// activation, residual) run as oneDNN post-ops on values still in cache.
// A convolution reorders its NCHW input into the blocked layout oneDNN
// chose and its output back. The primitive and the packed weight are made
// on the first run of a call site and shared by every run; each run keeps
// its own memory handles and scratchpads, so runs from many threads need no
// lock once warm and allocate nothing.
#ifndef MODELC_RUNTIME_PACKED_PRODUCT_HPP
#define MODELC_RUNTIME_PACKED_PRODUCT_HPP

#include "modelc/abi.h"

#include <oneapi/dnnl/dnnl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace modelc {

/// One call site: the primitive, its packed weight, a convolution's
/// reorders, and the descriptions of the post-ops' operands.
struct PackedProductSite {
  dnnl_primitive_t primitive = nullptr, reorderIn = nullptr,
                   reorderOut = nullptr;
  /// A sum post-op (`sum` >= 0, its index): its NCHW operand is reordered
  /// into the output's layout before the product adds to it.
  dnnl_primitive_t reorderSum = nullptr;
  dnnl_memory_desc_t sumSrc{}, sumScratch{};
  int sum = -1;
  dnnl_memory_t packedWeight = nullptr;
  dnnl_memory_desc_t plainSrc{}, plainDst{}, src{}, dst{}, bias{};
  /// The type x, w, bias, y and the operands hold (f32, f16, bf16), and
  /// the one the primitive computes in: the same where oneDNN has it for
  /// this CPU, else f32, and reorders convert on the way in and out.
  dnnl_data_type_t storage = dnnl_f32, compute = dnnl_f32;
  /// Computing in f32 on f16 or bf16 data: the bias converted per run
  /// (oneDNN's f32 primitives take only an f32 bias).
  dnnl_primitive_t reorderBias = nullptr;
  dnnl_memory_desc_t computeBias{}, biasScratch{};
  dnnl_memory_desc_t scratch{}, inScratch{}, outScratch{};
  /// Per post-op: its operand's description (binary post-ops only; empty,
  /// ndims 0, for the others).
  std::vector<dnnl_memory_desc_t> operands;
  /// Computing in f32 on f16 or bf16 data: per operand, its conversion to
  /// f32 each run (oneDNN 2.6 misreads f16 operands of f32 primitives).
  std::vector<dnnl_primitive_t> operandReorders;
  std::vector<dnnl_memory_desc_t> computeOperands, operandScratch;
  bool hasOperand(size_t i) const { return operands[i].ndims > 0; }
  bool hasBias = false;
  ~PackedProductSite();
};

/// What one run keeps per site: handles, blocked buffers, scratchpads.
struct PackedProductHandles {
  dnnl_memory_t plainSrc = nullptr, plainDst = nullptr, src = nullptr,
                dst = nullptr, bias = nullptr;
  dnnl_memory_t scratch = nullptr, inScratch = nullptr, outScratch = nullptr;
  dnnl_memory_t sumSrc = nullptr, sumScratch = nullptr;
  dnnl_memory_t computeBias = nullptr, biasScratch = nullptr;
  std::vector<dnnl_memory_t> operands, computeOperands, operandScratch;
  dnnl_stream_t stream = nullptr;
  ~PackedProductHandles();
};

/// The sites of one model, and the engine they run on.
class PackedProductCache {
public:
  PackedProductCache();
  ~PackedProductCache();
  /// The site of `p`, made (and its weight packed) on first use; null on
  /// failure.
  PackedProductSite *site(const modelc_product &p, const void *w, bool hasBias,
                          std::string &error);
  dnnl_engine_t engine() const { return engine_; }

private:
  dnnl_engine_t engine_ = nullptr;
  std::mutex mutex_;
  std::unordered_map<uint32_t, std::unique_ptr<PackedProductSite>> sites_;
};

/// Per run: a stream and the handles of each site.
class PackedProductRun {
public:
  ~PackedProductRun();
  /// Runs `site` (the product `p`); false (with `error`) on failure.
  bool execute(PackedProductCache &cache, const modelc_product &p,
               PackedProductSite &site, const void *x, const void *bias,
               void *y, const void *const *operands, std::string &error);

private:
  std::mutex mutex_; // tasks of several devices may run at once
  std::unordered_map<uint32_t, PackedProductHandles> handles_;
};

} // namespace modelc

#endif // MODELC_RUNTIME_PACKED_PRODUCT_HPP
