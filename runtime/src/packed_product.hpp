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

#include "exact_post_ops.hpp"
#include "host_memory.hpp"
#include "modelc/abi.h"
#include "pick_implementation.hpp"

#include <oneapi/dnnl/dnnl.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace modelc {

struct PackedProductSite;

/// A site's exact path (exact_post_ops.hpp), made the first time a run
/// needs it: the product alone, f32, plain layout and direct, and the
/// reorders from and to the layouts the site keeps.
struct ExactProduct {
  std::unique_ptr<PackedProductSite> product;
  dnnl_primitive_t srcToPlain = nullptr, sumToPlain = nullptr,
                   plainToDst = nullptr;
  dnnl_memory_desc_t plainX{}, plainY{}, srcScratch{}, sumScratch{},
      dstScratch{};
  ~ExactProduct();
};

/// Whether a site's runs check that its fused chain is exact.
enum class NaNGuard {
  None,  // the chain keeps NaN as it is
  Check, // it may drop one: every run checks the magnitudes first
  Always // MODELC_EXACT_PRODUCTS=1: every run takes the exact path
};

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
  /// The sum's operand is in the output's own layout: where the compiler
  /// planned the output in the operand's buffer, nothing is to be copied.
  bool sumInDstLayout = false;
  /// The weight in the primitive's layout; shared between the sizes of
  /// a call site with a dynamic dimension (one site each) whose
  /// primitives chose the same layout.
  std::shared_ptr<dnnl_memory> packedWeight;
  dnnl_memory_desc_t packedDesc{};
  /// While the site is made: another size's site of the same call site,
  /// whose packed weight it takes where the layouts agree.
  const PackedProductSite *shareWeightOf = nullptr;
  dnnl_memory_desc_t plainSrc{}, plainDst{}, src{}, dst{}, bias{};
  /// The type every description of the site has: the model's (f32, f16,
  /// bf16) where oneDNN computes in it on this CPU, else f32.
  dnnl_data_type_t type = dnnl_f32;
  /// y's type: `type`, or f32 (MODELC_PRODUCT_Y_F32).
  dnnl_data_type_t dstType = dnnl_f32;
  /// f16 or bf16 data on an f32 site: each run converts x, the bias and
  /// the operands to f32 and y back (`bf16` says which of the two).
  bool convert = false, bf16 = false;
  dnnl_memory_desc_t scratch{}, inScratch{}, outScratch{};
  /// Per post-op: its operand's description (binary post-ops only; empty,
  /// ndims 0, for the others).
  std::vector<dnnl_memory_desc_t> operands;
  bool hasOperand(size_t i) const { return operands[i].ndims > 0; }
  /// Per post-op with an operand: its position among oneDNN's post-ops
  /// (two post-ops of constants may be one of oneDNN's: makeAttr).
  std::vector<int> dnnlIndex;
  bool hasBias = false;
  /// The NaN guard: the weight's magnitudes, how many terms an output
  /// sums, and how many values x and a sum's operand hold as stored (a
  /// kept layout's padding included).
  NaNGuard guard = NaNGuard::None;
  Magnitudes weight;
  int64_t reduction = 0, xValues = 0, sumValues = 0;
  std::unique_ptr<ExactProduct> exact;
  ~PackedProductSite();
};

/// What one run keeps per site: handles, blocked buffers, scratchpads.
struct PackedProductHandles {
  dnnl_memory_t plainSrc = nullptr, plainDst = nullptr, src = nullptr,
                dst = nullptr, bias = nullptr;
  dnnl_memory_t scratch = nullptr, inScratch = nullptr, outScratch = nullptr;
  dnnl_memory_t sumSrc = nullptr, sumScratch = nullptr;
  std::vector<dnnl_memory_t> operands;
  dnnl_stream_t stream = nullptr;
  /// A converting site's f32 copies of x, y, the bias and the operands.
  std::vector<float> xData, yData, biasData;
  std::vector<std::vector<float>> operandData;
  /// Those copies as the operands to pass, kept so a warm run allocates
  /// nothing.
  std::vector<const void *> operandPointers;
  /// A copy of the sum's operand where the output is planned in its buffer
  /// but in another layout.
  std::vector<unsigned char> sumAside;
  /// The exact path's handles, f32 copies and result, made on its first
  /// run.
  std::unique_ptr<PackedProductHandles> exact;
  std::vector<float> exactX, exactBias, exactY;
  std::vector<std::vector<float>> exactOperands;
  std::vector<const float *> exactPointers;
  /// Where this run's y is and what bounds its values (exact_post_ops.hpp):
  /// set by a fused run whose chain was bounded, else null and NaN. A
  /// product that reads this y (its x, or its sum's operand, from this
  /// site) takes the bound instead of scanning it.
  const void *lastY = nullptr;
  double lastBound = std::numeric_limits<double>::quiet_NaN();
  /// Destroys the handles (all null after).
  void release();
  ~PackedProductHandles();
};

/// A kept_pool call site: oneDNN's average pooling over the whole plane,
/// from the layout a convolution kept to NCHW.
struct KeptPool {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t src{}, dst{}, scratch{};
  KeptPool() = default;
  KeptPool(const KeptPool &) = delete;
  KeptPool &operator=(const KeptPool &) = delete;
  ~KeptPool();
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
  /// The exact path of `site` (the product `p` of the weight `w`), made
  /// on first use; null on failure.
  ExactProduct *exact(const modelc_product &p, PackedProductSite &site,
                      const void *w, std::string &error);
  /// The pooling of `p`, made on first use from the layout its source
  /// site kept at this batch; null (with `error`) on failure.
  KeptPool *keptPool(const modelc_kept_pool &p, std::string &error);
  dnnl_engine_t engine() const { return engine_; }

private:
  dnnl_engine_t engine_ = nullptr;
  bool alwaysExact_ = false; // MODELC_EXACT_PRODUCTS=1
  /// MODELC_CONV_IMPLEMENTATION (pick_implementation.hpp), and what was
  /// wrong with it (every site then fails with that).
  ImplementationChoice choice_ = ImplementationChoice::Tuned;
  std::string choiceError_;
  std::mutex mutex_;
  /// The packed weights' memory (huge pages: host_memory.hpp); declared
  /// before the sites, whose memory objects point into it, so it outlives
  /// them.
  detail::HostPool weights_;
  /// Per call site and size (productKey): a model with a dynamic
  /// dimension runs a call site at several sizes, each its own primitive.
  std::unordered_map<uint64_t, std::unique_ptr<PackedProductSite>> sites_;
  std::unordered_map<uint64_t, std::unique_ptr<KeptPool>> pools_;
};

/// Elements of a product's x, weight and y, and of its bias (one per
/// output channel or column).
struct ProductCounts {
  int64_t x = 0, w = 0, y = 0, channels = 0;
  /// Elements of a post-op's operand.
  int64_t operand(const modelc_post_op &post) const;
};
ProductCounts countsOf(const modelc_product &p);

/// A call site at one size: its site number and its rows (a matrix
/// product's m, a convolution's batch), which a dynamic dimension varies.
uint64_t productKey(uint32_t site, const modelc_product &p);
/// The key of call site `site` at `rows` (a convolution's batch, a matrix
/// product's rows): productKey's, and a kept_pool's.
uint64_t siteKey(uint32_t site, int64_t rows);

/// Per run: a stream and the handles of each site.
class PackedProductRun {
public:
  ~PackedProductRun();
  /// Runs `site` (the product `p` of the weight `w`); false (with
  /// `error`) on failure.
  bool execute(PackedProductCache &cache, const modelc_product &p,
               PackedProductSite &site, const void *w, const void *x,
               const void *bias, void *y, const void *const *operands,
               std::string &error);

  /// What bounds the values of `data` as site `producer` left them in this
  /// run (lastY, lastBound), or NaN where that site did not bound them or
  /// `data` is not its y.
  double boundOf(uint64_t producer, const void *data);

  /// Runs the kept_pool `p` on x, into y; false (with `error`) on failure.
  bool pool(PackedProductCache &cache, const modelc_kept_pool &p, const void *x,
            void *y, std::string &error);

private:
  /// Whether the fused chain of `site` is exact on these inputs, and
  /// (*result) what bounds its output. `xBound` and `sumBound` (NaN:
  /// unknown) bound x and the sum's operand; the other inputs are scanned,
  /// those of y's size only where `scanLarge`, else the answer is false.
  bool fusedIsExact(const modelc_product &p, const PackedProductSite &site,
                    const void *x, const void *bias,
                    const void *const *operands, double xBound, double sumBound,
                    bool scanLarge, double *result) const;
  /// The product through the exact path.
  bool runExact(PackedProductHandles &h, PackedProductCache &cache,
                const modelc_product &p, PackedProductSite &site, const void *w,
                const void *x, const void *bias, void *y,
                const void *const *operands, std::string &error);
  /// Runs `site` on data of the site's own type.
  bool runSite(PackedProductHandles &h, const modelc_product &p,
               const PackedProductSite &site, const void *x, const void *bias,
               void *y, const void *const *operands, std::string &error);
  std::mutex mutex_; // tasks of several devices may run at once
  std::unordered_map<uint64_t, PackedProductHandles> handles_;
};

} // namespace modelc

#endif // MODELC_RUNTIME_PACKED_PRODUCT_HPP
