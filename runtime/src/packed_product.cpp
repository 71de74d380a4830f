// packed_product.cpp - products of constant weights through oneDNN, with
// the weight packed once and the ops after the product as post-ops.
#include "packed_product.hpp"

#include "dnnl_util.hpp"
#include "half_convert.hpp"
#include "pick_implementation.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace modelc {

using dnnl::createReorder;
using dnnl::ok;

namespace {

/// Most post-ops one product takes (the compiler folds a handful).
constexpr uint32_t kMaxPostOps = 32;

bool eltwiseAlg(uint32_t alg, dnnl_alg_kind_t &out) {
  switch (alg) {
  case MODELC_ELTWISE_RELU:
    out = dnnl_eltwise_relu;
    return true;
  case MODELC_ELTWISE_GELU_ERF:
    out = dnnl_eltwise_gelu_erf;
    return true;
  case MODELC_ELTWISE_GELU_TANH:
    out = dnnl_eltwise_gelu_tanh;
    return true;
  case MODELC_ELTWISE_LOGISTIC:
    out = dnnl_eltwise_logistic;
    return true;
  case MODELC_ELTWISE_TANH:
    out = dnnl_eltwise_tanh;
    return true;
  case MODELC_ELTWISE_SWISH:
    out = dnnl_eltwise_swish;
    return true;
  default:
    return false;
  }
}

bool binaryAlg(uint32_t alg, dnnl_alg_kind_t &out) {
  switch (alg) {
  case MODELC_BINARY_ADD:
    out = dnnl_binary_add;
    return true;
  case MODELC_BINARY_SUB:
    out = dnnl_binary_sub;
    return true;
  case MODELC_BINARY_MUL:
    out = dnnl_binary_mul;
    return true;
  case MODELC_BINARY_DIV:
    out = dnnl_binary_div;
    return true;
  case MODELC_BINARY_MAX:
    out = dnnl_binary_max;
    return true;
  case MODELC_BINARY_MIN:
    out = dnnl_binary_min;
    return true;
  default:
    return false;
  }
}

bool desc(dnnl_memory_desc_t *d, int ndims, const dnnl_dims_t dims,
          dnnl_data_type_t type, dnnl_format_tag_t tag, std::string &error) {
  return ok(dnnl_memory_desc_init_by_tag(d, ndims, dims, type, tag),
            "memory description", error);
}

/// The description of a binary post-op's operand for a destination of
/// `dims` (2-D [m, n] or NCHW), by how it broadcasts.
bool operandDesc(uint32_t broadcast, int ndims, const dnnl_dims_t dims,
                 dnnl_data_type_t type, dnnl_memory_desc_t *out,
                 std::string &error) {
  dnnl_dims_t v;
  for (int i = 0; i < ndims; ++i)
    v[i] = 1;
  switch (broadcast) {
  case MODELC_BROADCAST_FULL:
    for (int i = 0; i < ndims; ++i)
      v[i] = dims[i];
    break;
  case MODELC_BROADCAST_CHANNEL:
    v[1] = dims[1]; // a matmul's columns, a convolution's channels
    break;
  case MODELC_BROADCAST_SCALAR:
  case MODELC_BROADCAST_CONSTANT:
    break;
  default:
    error = "unknown broadcast " + std::to_string(broadcast) +
            " of a post-op (a model.so from a newer modelc?)";
    return false;
  }
  return desc(out, ndims, v, type, ndims == 2 ? dnnl_ab : dnnl_nchw, error);
}

/// The primitive attributes of `p`: a scratchpad per run and the
/// post-ops, whose operand descriptions go into `site`.
bool makeAttr(const modelc_product &p, int ndims, const dnnl_dims_t dstDims,
              const dnnl_memory_desc_t *keptSum, PackedProductSite &site,
              dnnl_primitive_attr_t *attr, std::string &error) {
  if (p.num_post_ops > kMaxPostOps) {
    error = std::to_string(p.num_post_ops) + " post-ops (at most " +
            std::to_string(kMaxPostOps) + ")";
    return false;
  }
  dnnl_post_ops_t postOps;
  if (!ok(dnnl_post_ops_create(&postOps), "post-ops", error))
    return false;
  bool good = true;
  site.operands.assign(p.num_post_ops, dnnl_memory_desc_t{});
  site.dnnlIndex.assign(p.num_post_ops, -1);
  auto constant = [&](uint32_t i, uint32_t alg) {
    const modelc_post_op &post = p.post_ops[i];
    return post.kind == MODELC_POST_BINARY && post.alg == alg &&
           post.broadcast == MODELC_BROADCAST_CONSTANT;
  };
  int appended = 0; // oneDNN's post-ops so far
  for (uint32_t i = 0; good && i < p.num_post_ops; ++i, ++appended) {
    const modelc_post_op &post = p.post_ops[i];
    dnnl_alg_kind_t alg;
    // The maximum with a constant a, then the minimum with a constant
    // b >= a (ReLU6, a clamp): one clip, computed in the kernel without
    // loading operands (3-5% of MobileNetV2's 1x1 expansions, which
    // oneDNN 2.6 otherwise runs with two binary post-ops). The same
    // values: both take y when it is in [a, b], a below, b above, and a for
    // NaN, which the NaN guard sees from the post-ops as written.
    if (i + 1 < p.num_post_ops && constant(i, MODELC_BINARY_MAX) &&
        constant(i + 1, MODELC_BINARY_MIN) &&
        post.alpha <= p.post_ops[i + 1].alpha) {
      good =
          ok(dnnl_post_ops_append_eltwise(postOps, 1.0f, dnnl_eltwise_clip,
                                          post.alpha, p.post_ops[i + 1].alpha),
             "clip post-op", error);
      ++i;
      continue;
    }
    if (post.kind == MODELC_POST_ELTWISE && eltwiseAlg(post.alg, alg)) {
      good =
          ok(dnnl_post_ops_append_eltwise(postOps, 1.0f, alg, post.alpha, 0.0f),
             "eltwise post-op", error);
    } else if (post.kind == MODELC_POST_SUM && ndims == 4 && site.sum < 0) {
      site.sum = static_cast<int>(i);
      // NCHW, or the layout the producer of the operand kept.
      if (keptSum)
        site.sumSrc = *keptSum;
      good = (keptSum ||
              desc(&site.sumSrc, 4, dstDims, site.type, dnnl_nchw, error)) &&
             ok(dnnl_post_ops_append_sum(postOps, post.alpha), "sum post-op",
                error);
    } else if (post.kind == MODELC_POST_BINARY && binaryAlg(post.alg, alg)) {
      site.dnnlIndex[i] = appended;
      good = operandDesc(post.broadcast, ndims, dstDims, site.type,
                         &site.operands[i], error) &&
             ok(dnnl_post_ops_append_binary(postOps, alg, &site.operands[i]),
                "binary post-op", error);
    } else {
      error = "unknown post-op " + std::to_string(post.kind) + "/" +
              std::to_string(post.alg) + " (a model.so from a newer modelc?)";
      good = false;
    }
  }
  good = good && ok(dnnl_primitive_attr_create(attr), "attributes", error);
  if (good) {
    dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
    good =
        ok(dnnl_primitive_attr_set_post_ops(*attr, postOps), "post-ops", error);
    if (!good)
      dnnl_primitive_attr_destroy(*attr);
  }
  dnnl_post_ops_destroy(postOps);
  return good;
}

/// Makes the primitive of `opDesc` with `attr`, packs `w` (laid out as
/// `weightPlain`) into its layout, and adds reorders where a convolution
/// chose blocked layouts for its input and output.
bool finish(PackedProductSite &site, const void *opDesc,
            dnnl_primitive_attr_t attr, const void *w,
            const dnnl_memory_desc_t &weightPlain, dnnl_engine_t engine,
            bool keepLayout, uint64_t yBytes, ImplementationChoice choice,
            detail::HostPool &pool, std::string &error) {
  dnnl_primitive_desc_t pd;
  dnnl_status_t status =
      dnnl_primitive_desc_create(&pd, opDesc, attr, engine, nullptr);
  // Only convolutions take another choice than oneDNN's first.
  if (status == dnnl_success && choice != ImplementationChoice::First) {
    // The operands by oneDNN's post-op positions.
    std::vector<dnnl_memory_desc_t> operands;
    for (size_t i = 0; i < site.operands.size(); ++i)
      if (site.hasOperand(i)) {
        operands.resize(
            std::max<size_t>(operands.size(), site.dnnlIndex[i] + size_t(1)));
        operands[site.dnnlIndex[i]] = site.operands[i];
      }
    pd = pickConvolution(pd,
                         *static_cast<const dnnl_convolution_desc_t *>(opDesc),
                         attr, site.hasBias, operands, engine, choice);
  }
  dnnl_primitive_attr_destroy(attr);
  if (!ok(status, "primitive description", error))
    return false;
  site.src = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  site.dst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  site.scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  site.packedDesc = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  bool good =
      ok(dnnl_primitive_create(&site.primitive, pd), "primitive", error);
  if (good && site.shareWeightOf &&
      dnnl_memory_desc_equal(&site.shareWeightOf->packedDesc,
                             &site.packedDesc)) {
    site.packedWeight = site.shareWeightOf->packedWeight;
  } else if (good) {
    dnnl_memory_t packed = nullptr;
    void *into = pool.allocate(dnnl_memory_desc_get_size(&site.packedDesc));
    if (!into)
      error = "out of host memory for a packed weight";
    good = into && dnnl::packWeight(w, &weightPlain, &site.packedDesc, engine,
                                    &packed, error, into);
    if (good)
      site.packedWeight =
          std::shared_ptr<dnnl_memory>(packed, dnnl_memory_destroy);
  }
  site.shareWeightOf = nullptr;
  dnnl_primitive_desc_destroy(pd);
  if (good && !dnnl_memory_desc_equal(&site.src, &site.plainSrc))
    good = createReorder(&site.reorderIn, &site.inScratch, &site.plainSrc,
                         &site.src, engine, error);
  if (good && keepLayout) {
    // y holds the convolution's own layout; its reader takes it as it is.
    size_t bytes = dnnl_memory_desc_get_size(&site.dst);
    if (bytes > yBytes) {
      error = "the output's layout needs " + std::to_string(bytes) +
              " bytes; the compiler reserved " + std::to_string(yBytes);
      return false;
    }
    site.plainDst = site.dst;
  }
  if (good && site.sum >= 0) {
    site.sumInDstLayout = dnnl_memory_desc_equal(&site.sumSrc, &site.dst);
    good = createReorder(&site.reorderSum, &site.sumScratch, &site.sumSrc,
                         &site.dst, engine, error);
  }
  if (good && !dnnl_memory_desc_equal(&site.dst, &site.plainDst))
    good = createReorder(&site.reorderOut, &site.outScratch, &site.dst,
                         &site.plainDst, engine, error);
  return good;
}

bool matmulSite(const modelc_product &p, const void *w, PackedProductSite &site,
                dnnl_engine_t engine, detail::HostPool &pool,
                std::string &error) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) {
    error = "empty matrix product";
    return false;
  }
  dnnl_dims_t srcDims = {p.m, p.k}, weightDims = {p.k, p.n},
              dstDims = {p.m, p.n}, biasDims = {1, p.n};
  dnnl_memory_desc_t weightAny, weightPlain;
  dnnl_primitive_attr_t attr;
  dnnl_data_type_t t = site.type;
  // w [n, k] row-major is the k x n matrix W^T in layout "ba".
  if (!desc(&site.plainSrc, 2, srcDims, t, dnnl_ab, error) ||
      !desc(&site.plainDst, 2, dstDims, site.dstType, dnnl_ab, error) ||
      !desc(&weightAny, 2, weightDims, t, dnnl_format_tag_any, error) ||
      !desc(&weightPlain, 2, weightDims, t, p.trans_w ? dnnl_ba : dnnl_ab,
            error) ||
      !desc(&site.bias, 2, biasDims, t, dnnl_ab, error) ||
      !makeAttr(p, 2, dstDims, nullptr, site, &attr, error))
    return false;
  dnnl_matmul_desc_t op;
  if (!ok(dnnl_matmul_desc_init(&op, &site.plainSrc, &weightAny,
                                site.hasBias ? &site.bias : nullptr,
                                &site.plainDst),
          "matmul description", error)) {
    dnnl_primitive_attr_destroy(attr);
    return false;
  }
  return finish(site, &op, attr, w, weightPlain, engine, false, 0,
                ImplementationChoice::First, pool, error);
}

/// `keptSrc`, `keptSum`: the layout x and the sum's operand are in (their
/// producers' kept outputs), or null for NCHW.
bool convSite(const modelc_product &p, const void *w, PackedProductSite &site,
              const dnnl_memory_desc_t *keptSrc,
              const dnnl_memory_desc_t *keptSum, dnnl_engine_t engine,
              ImplementationChoice choice, detail::HostPool &pool,
              std::string &error) {
  const int64_t *s = p.conv;
  int64_t n = s[0], c = s[1], h = s[2], wd = s[3], o = s[4], kh = s[5],
          kw = s[6], oh = s[7], ow = s[8], groups = s[17];
  if (groups <= 0 || c % groups || o % groups) {
    error = "bad convolution groups " + std::to_string(groups);
    return false;
  }
  dnnl_dims_t srcDims = {n, c, h, wd}, dstDims = {n, o, oh, ow}, biasDims = {o};
  dnnl_dims_t strides = {s[9], s[10]}, padL = {s[11], s[12]},
              padR = {s[13], s[14]}, dilation = {s[15] - 1, s[16] - 1};
  dnnl_memory_desc_t weightAny, weightPlain, srcAny, dstAny;
  dnnl_data_type_t t = site.type;
  bool good;
  if (groups == 1) {
    dnnl_dims_t weightDims = {o, c, kh, kw};
    good = desc(&weightAny, 4, weightDims, t, dnnl_format_tag_any, error) &&
           desc(&weightPlain, 4, weightDims, t, dnnl_oihw, error);
  } else {
    dnnl_dims_t weightDims = {groups, o / groups, c / groups, kh, kw};
    good = desc(&weightAny, 5, weightDims, t, dnnl_format_tag_any, error) &&
           desc(&weightPlain, 5, weightDims, t, dnnl_goihw, error);
  }
  dnnl_primitive_attr_t attr;
  if (!good || !desc(&site.plainSrc, 4, srcDims, t, dnnl_nchw, error) ||
      !desc(&site.plainDst, 4, dstDims, site.dstType, dnnl_nchw, error) ||
      !desc(&srcAny, 4, srcDims, t, dnnl_format_tag_any, error) ||
      !desc(&dstAny, 4, dstDims, site.dstType, dnnl_format_tag_any, error) ||
      !desc(&site.bias, 1, biasDims, t, dnnl_x, error) ||
      !makeAttr(p, 4, dstDims, keptSum, site, &attr, error))
    return false;
  if (keptSrc)
    site.plainSrc = *keptSrc;
  auto describe = [&](dnnl_convolution_desc_t *op, dnnl_alg_kind_t alg,
                      const dnnl_memory_desc_t *src) {
    return dnnl_dilated_convolution_forward_desc_init(
        op, dnnl_forward_inference, alg, src, &weightAny,
        site.hasBias ? &site.bias : nullptr, &dstAny, strides, dilation, padL,
        padR);
  };
  auto works = [&](dnnl_convolution_desc_t *op, dnnl_alg_kind_t alg,
                   const dnnl_memory_desc_t *src) {
    dnnl_primitive_desc_t probe = nullptr;
    if (!src || describe(op, alg, src) != dnnl_success ||
        dnnl_primitive_desc_create(&probe, op, attr, engine, nullptr) !=
            dnnl_success)
      return false;
    dnnl_primitive_desc_destroy(probe);
    return true;
  };
  // Winograd where asked and oneDNN has it for this CPU and shape, else
  // direct; each reads a kept layout as it is where oneDNN can, else any
  // layout, and a reorder from the kept one.
  bool winograd = p.flags & MODELC_PRODUCT_WINOGRAD;
  dnnl_convolution_desc_t op;
  if (!(winograd && works(&op, dnnl_convolution_winograd, keptSrc)) &&
      !(winograd && works(&op, dnnl_convolution_winograd, &srcAny)) &&
      !works(&op, dnnl_convolution_direct, keptSrc) &&
      !ok(describe(&op, dnnl_convolution_direct, &srcAny),
          "convolution description", error)) {
    dnnl_primitive_attr_destroy(attr);
    return false;
  }
  return finish(site, &op, attr, w, weightPlain, engine,
                p.flags & MODELC_PRODUCT_KEEP_LAYOUT, p.y_bytes, choice, pool,
                error);
}

/// The type the data of `p` has, or nullopt (with `error`) for flags this
/// runtime does not know or that contradict each other.
std::optional<dnnl_data_type_t> checkFlags(const modelc_product &p,
                                           std::string &error) {
  const uint32_t layouts = MODELC_PRODUCT_KEEP_LAYOUT |
                           MODELC_PRODUCT_SRC_OF_SITE |
                           MODELC_PRODUCT_SUM_OF_SITE;
  const uint32_t halves = MODELC_PRODUCT_F16 | MODELC_PRODUCT_BF16;
  const uint32_t known =
      layouts | halves | MODELC_PRODUCT_WINOGRAD | MODELC_PRODUCT_Y_F32;
  if (p.flags & ~known) {
    error = "unknown product flags " + std::to_string(p.flags & ~known) +
            " (a model.so from a newer modelc?)";
    return std::nullopt;
  }
  if (p.kind == MODELC_PRODUCT_MATMUL &&
      (p.flags & (layouts | MODELC_PRODUCT_WINOGRAD))) {
    error = "convolution flags on a matrix product";
    return std::nullopt;
  }
  if ((p.flags & halves) == halves) {
    error = "both f16 and bf16 flags";
    return std::nullopt;
  }
  if ((p.flags & MODELC_PRODUCT_Y_F32) && !(p.flags & halves)) {
    error = "an f32 result flag on an f32 product";
    return std::nullopt;
  }
  if ((p.flags & halves) && (p.flags & layouts)) {
    error = "a kept layout on an f16 or bf16 product (only f32 products "
            "keep oneDNN's layout)";
    return std::nullopt;
  }
  return (p.flags & MODELC_PRODUCT_F16)    ? dnnl_f16
         : (p.flags & MODELC_PRODUCT_BF16) ? dnnl_bf16
                                           : dnnl_f32;
}

Storage storageOf(const modelc_product &p) {
  return (p.flags & MODELC_PRODUCT_F16)    ? Storage::F16
         : (p.flags & MODELC_PRODUCT_BF16) ? Storage::BF16
                                           : Storage::F32;
}

/// How many terms each output of `p` sums.
int64_t reductionOf(const modelc_product &p) {
  if (p.kind != MODELC_PRODUCT_CONV2D)
    return p.k;
  const int64_t *s = p.conv;
  return s[1] / std::max<int64_t>(s[17], 1) * s[5] * s[6];
}

/// How many f32 values a buffer described by `d` holds.
int64_t valuesOf(const dnnl_memory_desc_t &d) {
  return static_cast<int64_t>(dnnl_memory_desc_get_size(&d) / sizeof(float));
}

/// Sets up the NaN guard of a new `site` of `p` (the weight `w`).
void guard(PackedProductSite &site, const modelc_product &p, const void *w,
           bool alwaysExact) {
  site.guard = alwaysExact          ? NaNGuard::Always
               : chainMayDropNaN(p) ? NaNGuard::Check
                                    : NaNGuard::None;
  if (site.guard != NaNGuard::Check)
    return;
  ProductCounts counts = countsOf(p);
  site.weight = magnitudesOf(w, counts.w, storageOf(p));
  site.reduction = reductionOf(p);
  site.xValues = (p.flags & MODELC_PRODUCT_SRC_OF_SITE)
                     ? valuesOf(site.plainSrc)
                     : counts.x;
  site.sumValues =
      (p.flags & MODELC_PRODUCT_SUM_OF_SITE) ? valuesOf(site.sumSrc) : counts.y;
}

} // namespace

ProductCounts countsOf(const modelc_product &p) {
  ProductCounts c;
  if (p.kind == MODELC_PRODUCT_CONV2D) {
    const int64_t *s = p.conv;
    int64_t groups = std::max<int64_t>(s[17], 1);
    c.x = s[0] * s[1] * s[2] * s[3];
    c.w = s[4] * (s[1] / groups) * s[5] * s[6];
    c.y = s[0] * s[4] * s[7] * s[8];
    c.channels = s[4];
  } else {
    c.x = p.m * p.k;
    c.w = p.k * p.n;
    c.y = p.m * p.n;
    c.channels = p.n;
  }
  return c;
}

int64_t ProductCounts::operand(const modelc_post_op &post) const {
  if (post.kind == MODELC_POST_SUM || post.broadcast == MODELC_BROADCAST_FULL)
    return y;
  return post.broadcast == MODELC_BROADCAST_CHANNEL ? channels : 1;
}

ExactProduct::~ExactProduct() {
  for (dnnl_primitive_t p : {srcToPlain, sumToPlain, plainToDst})
    if (p)
      dnnl_primitive_destroy(p);
}

PackedProductSite::~PackedProductSite() {
  for (dnnl_primitive_t p : {primitive, reorderIn, reorderOut, reorderSum})
    if (p)
      dnnl_primitive_destroy(p);
}

PackedProductHandles::~PackedProductHandles() { release(); }

void PackedProductHandles::release() {
  for (dnnl_memory_t *m : {&plainSrc, &plainDst, &src, &dst, &bias, &scratch,
                           &inScratch, &outScratch, &sumSrc, &sumScratch}) {
    if (*m)
      dnnl_memory_destroy(*m);
    *m = nullptr;
  }
  for (dnnl_memory_t m : operands)
    if (m)
      dnnl_memory_destroy(m);
  operands.clear();
  if (stream)
    dnnl_stream_destroy(stream);
  stream = nullptr;
  exact.reset();
}

PackedProductCache::PackedProductCache() {
  if (dnnl_engine_create(&engine_, dnnl_cpu, 0) != dnnl_success)
    engine_ = nullptr;
  const char *exact = std::getenv("MODELC_EXACT_PRODUCTS");
  alwaysExact_ = exact && std::strcmp(exact, "1") == 0;
  choice_ = implementationChoice(choiceError_);
}

PackedProductCache::~PackedProductCache() {
  sites_.clear();
  if (engine_)
    dnnl_engine_destroy(engine_);
}

PackedProductSite *PackedProductCache::site(const modelc_product &p,
                                            const void *w, bool hasBias,
                                            std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = sites_.find(productKey(p.site, p)); it != sites_.end())
    return it->second.get();
  if (!engine_) {
    error = "oneDNN has no CPU engine";
    return nullptr;
  }
  if (!choiceError_.empty()) {
    error = choiceError_;
    return nullptr;
  }
  std::optional<dnnl_data_type_t> storage = checkFlags(p, error);
  if (!storage)
    return nullptr;
  // The producers of kept layouts ran earlier in this run: their sites
  // exist.
  auto kept = [&](uint32_t flag, uint32_t id, const dnnl_memory_desc_t *&out) {
    if (!(p.flags & flag))
      return true;
    // The producer ran at this run's size: the same batch.
    auto producer = sites_.find(productKey(id, p));
    if (producer == sites_.end()) {
      error = "reads the layout of call site " + std::to_string(id) +
              ", which has not run";
      return false;
    }
    out = &producer->second->dst;
    return true;
  };
  const dnnl_memory_desc_t *keptSrc = nullptr, *keptSum = nullptr;
  if (!kept(MODELC_PRODUCT_SRC_OF_SITE, p.src_site, keptSrc) ||
      !kept(MODELC_PRODUCT_SUM_OF_SITE, p.sum_site, keptSum))
    return nullptr;
  // f16 and bf16 compute in that type where oneDNN has it for this CPU,
  // else on an f32 site, with the weight converted once here.
  std::unique_ptr<PackedProductSite> site;
  std::vector<float> converted;
  for (dnnl_data_type_t type : {*storage, dnnl_f32}) {
    site = std::make_unique<PackedProductSite>();
    site->hasBias = hasBias;
    site->type = type;
    site->convert = type != *storage;
    site->bf16 = *storage == dnnl_bf16;
    site->dstType = (p.flags & MODELC_PRODUCT_Y_F32) ? dnnl_f32 : type;
    for (const auto &[key, other] : sites_)
      if (key >> 32 == p.site && other->type == type)
        site->shareWeightOf = other.get();
    const void *weight = w;
    if (site->convert) {
      converted.resize(static_cast<size_t>(countsOf(p).w));
      halfToFloat(static_cast<const uint16_t *>(w), converted.data(),
                  converted.size(), site->bf16);
      weight = converted.data();
    }
    error.clear();
    bool good = false;
    if (p.kind == MODELC_PRODUCT_MATMUL)
      good = matmulSite(p, weight, *site, engine_, weights_, error);
    else if (p.kind == MODELC_PRODUCT_CONV2D)
      good = convSite(p, weight, *site, keptSrc, keptSum, engine_, choice_,
                      weights_, error);
    else
      error = "unknown product kind " + std::to_string(p.kind) +
              " (a model.so from a newer modelc?)";
    if (good)
      break;
    site.reset();
    if (type == dnnl_f32)
      break;
  }
  if (!site)
    return nullptr;
  guard(*site, p, w, alwaysExact_);
  PackedProductSite *result = site.get();
  sites_[productKey(p.site, p)] = std::move(site);
  return result;
}

ExactProduct *PackedProductCache::exact(const modelc_product &p,
                                        PackedProductSite &site, const void *w,
                                        std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (site.exact)
    return site.exact.get();
  // The same product without post-ops, kept layouts, Winograd or halves.
  modelc_product alone = p;
  alone.flags = 0;
  alone.num_post_ops = 0;
  alone.post_ops = nullptr;
  auto exact = std::make_unique<ExactProduct>();
  exact->product = std::make_unique<PackedProductSite>();
  PackedProductSite &product = *exact->product;
  product.hasBias = site.hasBias;
  std::vector<float> converted;
  const void *weight = w;
  if (storageOf(p) != Storage::F32) {
    converted.resize(static_cast<size_t>(countsOf(p).w));
    halfToFloat(static_cast<const uint16_t *>(w), converted.data(),
                converted.size(), storageOf(p) == Storage::BF16);
    weight = converted.data();
  }
  bool good;
  if (p.kind == MODELC_PRODUCT_MATMUL) {
    good = matmulSite(alone, weight, product, engine_, weights_, error);
  } else {
    const int64_t *s = p.conv;
    dnnl_dims_t xDims = {s[0], s[1], s[2], s[3]},
                yDims = {s[0], s[4], s[7], s[8]};
    good = convSite(alone, weight, product, nullptr, nullptr, engine_,
                    ImplementationChoice::First, weights_, error) &&
           desc(&exact->plainX, 4, xDims, dnnl_f32, dnnl_nchw, error) &&
           desc(&exact->plainY, 4, yDims, dnnl_f32, dnnl_nchw, error);
  }
  // From and to the layouts the site keeps.
  if (good && (p.flags & MODELC_PRODUCT_SRC_OF_SITE))
    good = createReorder(&exact->srcToPlain, &exact->srcScratch, &site.plainSrc,
                         &exact->plainX, engine_, error);
  if (good && (p.flags & MODELC_PRODUCT_SUM_OF_SITE))
    good = createReorder(&exact->sumToPlain, &exact->sumScratch, &site.sumSrc,
                         &exact->plainY, engine_, error);
  if (good && (p.flags & MODELC_PRODUCT_KEEP_LAYOUT))
    good = createReorder(&exact->plainToDst, &exact->dstScratch, &exact->plainY,
                         &site.dst, engine_, error);
  if (!good) {
    error = "its exact path (for NaN or large values): " + error;
    return nullptr;
  }
  site.exact = std::move(exact);
  return site.exact.get();
}

PackedProductRun::~PackedProductRun() { handles_.clear(); }

namespace {

/// The run's handles and buffers of `site`, made on its first run.
bool prepare(PackedProductHandles &h, const PackedProductSite &site,
             dnnl_engine_t engine, std::string &error) {
  auto allocate = [&](dnnl_memory_t *m, const dnnl_memory_desc_t *d) {
    return ok(dnnl_memory_create(m, d, engine, DNNL_MEMORY_ALLOCATE),
              "run memory", error);
  };
  auto handle = [&](dnnl_memory_t *m, const dnnl_memory_desc_t *d) {
    return ok(dnnl_memory_create(m, d, engine, DNNL_MEMORY_NONE),
              "memory handle", error);
  };
  bool good =
      ok(dnnl_stream_create(&h.stream, engine, dnnl_stream_default_flags),
         "stream", error) &&
      handle(&h.plainSrc, &site.plainSrc) &&
      handle(&h.plainDst, &site.plainDst) &&
      (!site.reorderIn || (allocate(&h.src, &site.src) &&
                           allocate(&h.inScratch, &site.inScratch))) &&
      (!site.reorderOut || (allocate(&h.dst, &site.dst) &&
                            allocate(&h.outScratch, &site.outScratch))) &&
      allocate(&h.scratch, &site.scratch) &&
      (!site.hasBias || handle(&h.bias, &site.bias));
  if (good && site.reorderSum)
    good = handle(&h.sumSrc, &site.sumSrc) &&
           allocate(&h.sumScratch, &site.sumScratch);
  h.operands.assign(site.operands.size(), nullptr);
  for (size_t i = 0; good && i < site.operands.size(); ++i)
    if (site.hasOperand(i))
      good = handle(&h.operands[i], &site.operands[i]);
  return good;
}

/// Runs the reorder `r` (scratchpad `scratch`) from `src` (laid out as
/// `from`) to `dst` (as `to`) on `stream`, now.
bool reorderNow(dnnl_primitive_t r, const dnnl_memory_desc_t &scratch,
                const dnnl_memory_desc_t &from, const void *src,
                const dnnl_memory_desc_t &to, void *dst, dnnl_engine_t engine,
                dnnl_stream_t stream, std::string &error) {
  dnnl_memory_t in = nullptr, out = nullptr, pad = nullptr;
  bool good =
      ok(dnnl_memory_create(&in, &from, engine, const_cast<void *>(src)),
         "reorder memory", error) &&
      ok(dnnl_memory_create(&out, &to, engine, dst), "reorder memory", error) &&
      ok(dnnl_memory_create(&pad, &scratch, engine, DNNL_MEMORY_ALLOCATE),
         "reorder memory", error);
  if (good) {
    dnnl_exec_arg_t args[] = {
        {DNNL_ARG_FROM, in}, {DNNL_ARG_TO, out}, {DNNL_ARG_SCRATCHPAD, pad}};
    good = ok(dnnl_primitive_execute(r, stream, 3, args), "reorder", error) &&
           ok(dnnl_stream_wait(stream), "stream wait", error);
  }
  for (dnnl_memory_t m : {in, out, pad})
    if (m)
      dnnl_memory_destroy(m);
  return good;
}

} // namespace

uint64_t siteKey(uint32_t site, int64_t rows) {
  return (static_cast<uint64_t>(site) << 32) |
         static_cast<uint32_t>(std::max<int64_t>(rows, 0));
}

uint64_t productKey(uint32_t site, const modelc_product &p) {
  return siteKey(site, p.kind == MODELC_PRODUCT_CONV2D ? p.conv[0] : p.m);
}

double PackedProductRun::boundOf(uint64_t producer, const void *data) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = handles_.find(producer);
  if (it == handles_.end() || it->second.lastY != data)
    return std::numeric_limits<double>::quiet_NaN();
  return it->second.lastBound;
}

bool PackedProductRun::fusedIsExact(const modelc_product &p,
                                    const PackedProductSite &site,
                                    const void *x, const void *bias,
                                    const void *const *operands, double xBound,
                                    double sumBound, bool scanLarge,
                                    double *result) const {
  Storage storage = storageOf(p);
  ProductMagnitudes m;
  // A bound as a float magnitude, rounded up.
  auto above = [](double bound) {
    float f = static_cast<float>(bound);
    return f < bound ? std::nextafter(f, std::numeric_limits<float>::infinity())
                     : f;
  };
  if (xBound >= 0.0) {
    m.x.max = above(xBound);
  } else if (scanLarge) {
    m.x = magnitudesOf(x, site.xValues, storage);
    if (!(m.x.max <= kProductBound)) // a NaN, an infinity, or too large
      return false;
  } else {
    return false;
  }
  m.w = site.weight;
  m.reduction = site.reduction;
  ProductCounts counts = countsOf(p);
  if (bias)
    m.bias = magnitudesOf(bias, counts.channels, storage);
  Magnitudes values[kMaxPostOps];
  for (uint32_t i = 0; i < p.num_post_ops; ++i) {
    const modelc_post_op &post = p.post_ops[i];
    if (post.kind == MODELC_POST_ELTWISE)
      continue;
    bool sum = static_cast<int>(i) == site.sum;
    if (sum && sumBound >= 0.0) {
      values[i].max = above(sumBound);
      continue;
    }
    int64_t n = sum ? site.sumValues : counts.operand(post);
    if (n >= counts.y && !scanLarge)
      return false;
    values[i] = magnitudesOf(operands[i], n, storage);
  }
  m.operands = values;
  return fusedChainIsExact(p, m, result);
}

bool PackedProductRun::runExact(
    PackedProductHandles &h, PackedProductCache &cache, const modelc_product &p,
    PackedProductSite &site, const void *w, const void *x, const void *bias,
    void *y, const void *const *operands, std::string &error) {
  ExactProduct *exact = cache.exact(p, site, w, error);
  if (!exact)
    return false;
  dnnl_engine_t engine = cache.engine();
  if (!h.exact) {
    h.exact = std::make_unique<PackedProductHandles>();
    if (!prepare(*h.exact, *exact->product, engine, error)) {
      h.exact.reset(); // made again by the next run
      return false;
    }
  }
  Storage storage = storageOf(p);
  bool bf16 = storage == Storage::BF16;
  ProductCounts counts = countsOf(p);
  // The inputs in f32 and plain layout: from a kept layout, from halves,
  // or as they are.
  auto plain = [&](const void *from, int64_t n, std::vector<float> &to,
                   dnnl_primitive_t reorder, const dnnl_memory_desc_t &scratch,
                   const dnnl_memory_desc_t &kept,
                   const dnnl_memory_desc_t &plainDesc) -> const float * {
    if (!reorder && storage == Storage::F32)
      return static_cast<const float *>(from);
    to.resize(static_cast<size_t>(n));
    if (reorder) {
      if (!reorderNow(reorder, scratch, kept, from, plainDesc, to.data(),
                      engine, h.stream, error))
        return nullptr;
    } else {
      halfToFloat(static_cast<const uint16_t *>(from), to.data(), to.size(),
                  bf16);
    }
    return to.data();
  };
  const float *xf = plain(x, counts.x, h.exactX, exact->srcToPlain,
                          exact->srcScratch, site.plainSrc, exact->plainX);
  const float *biasf =
      bias ? plain(bias, counts.channels, h.exactBias, nullptr, {}, {}, {})
           : nullptr;
  if (!xf || (bias && !biasf))
    return false;
  h.exactOperands.resize(p.num_post_ops);
  h.exactPointers.assign(p.num_post_ops, nullptr);
  for (uint32_t i = 0; i < p.num_post_ops; ++i) {
    const modelc_post_op &post = p.post_ops[i];
    if (post.kind == MODELC_POST_ELTWISE)
      continue;
    bool kept = static_cast<int>(i) == site.sum && exact->sumToPlain;
    h.exactPointers[i] =
        plain(operands[i], counts.operand(post), h.exactOperands[i],
              kept ? exact->sumToPlain : nullptr, exact->sumScratch,
              site.sumSrc, exact->plainY);
    if (!h.exactPointers[i])
      return false;
  }
  // The product alone, then the chain with NaN kept.
  h.exactY.resize(static_cast<size_t>(counts.y));
  float *z = h.exactY.data();
  if (!runSite(*h.exact, p, *exact->product, xf, biasf, z, nullptr, error))
    return false;
  int64_t plane =
      p.kind == MODELC_PRODUCT_CONV2D ? p.conv[7] * p.conv[8] : int64_t(1);
  applyPostOps(p, z, counts.y, counts.channels, plane, h.exactPointers.data());
  // y in the site's layout and type.
  if (exact->plainToDst)
    return reorderNow(exact->plainToDst, exact->dstScratch, exact->plainY, z,
                      site.dst, y, engine, h.stream, error);
  if (storage == Storage::F32 || (p.flags & MODELC_PRODUCT_Y_F32))
    std::memcpy(y, z, h.exactY.size() * sizeof(float));
  else
    floatToHalf(z, static_cast<uint16_t *>(y), h.exactY.size(), bf16);
  return true;
}

bool PackedProductRun::execute(PackedProductCache &cache,
                               const modelc_product &p, PackedProductSite &site,
                               const void *w, const void *x, const void *bias,
                               void *y, const void *const *operands,
                               std::string &error) {
  PackedProductHandles *handles;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // references stay valid across rehashing
    handles = &handles_[productKey(p.site, p)];
  }
  PackedProductHandles &h = *handles;
  if (!h.stream && !prepare(h, site, cache.engine(), error)) {
    h.release(); // a half-made set is made again by the next run
    return false;
  }
  // What bounds this run's output, where its chain was bounded (NaN
  // otherwise): the consumers of y in this run take it instead of a scan.
  // Only f32 outputs: a half's rounding may overflow what bounded f32.
  const double kUnknown = std::numeric_limits<double>::quiet_NaN();
  h.lastY = nullptr;
  h.lastBound = std::numeric_limits<double>::quiet_NaN();
  if (site.guard == NaNGuard::Always)
    return runExact(h, cache, p, site, w, x, bias, y, operands, error);
  double xBound = (p.flags & MODELC_PRODUCT_SRC_OF_SITE)
                      ? boundOf(productKey(p.src_site, p), x)
                      : std::numeric_limits<double>::quiet_NaN();
  double sumBound = (p.flags & MODELC_PRODUCT_SUM_OF_SITE) && site.sum >= 0
                        ? boundOf(productKey(p.sum_site, p), operands[site.sum])
                        : std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  if (site.guard == NaNGuard::Check) {
    // The producers' bounds first; where they are too loose to decide,
    // the inputs' own magnitudes; where those do not either, the exact
    // path.
    bool known = xBound >= 0.0 || sumBound >= 0.0;
    if (!(known && fusedIsExact(p, site, x, bias, operands, xBound, sumBound,
                                true, &bound)) &&
        !fusedIsExact(p, site, x, bias, operands, kUnknown, kUnknown, true,
                      &bound))
      return runExact(h, cache, p, site, w, x, bias, y, operands, error);
  } else if (xBound >= 0.0 && !fusedIsExact(p, site, x, bias, operands, xBound,
                                            sumBound, false, &bound)) {
    // No guard, and nothing scanned past the bias and small operands:
    // the output is left unbounded.
    bound = std::numeric_limits<double>::quiet_NaN();
  }
  if (!site.convert) {
    if (!runSite(h, p, site, x, bias, y, operands, error))
      return false;
    if (bound >= 0.0 && storageOf(p) == Storage::F32) {
      h.lastY = y;
      h.lastBound = bound;
    }
    return true;
  }
  // f16 or bf16 data on an f32 site: f32 copies in, f32 result out.
  ProductCounts counts = countsOf(p);
  auto toFloat = [&](const void *from, std::vector<float> &to, int64_t n) {
    to.resize(static_cast<size_t>(n));
    halfToFloat(static_cast<const uint16_t *>(from), to.data(), to.size(),
                site.bf16);
    return to.data();
  };
  const float *xf = toFloat(x, h.xData, counts.x);
  const float *biasf =
      bias ? toFloat(bias, h.biasData, counts.channels) : nullptr;
  std::vector<const void *> &operandsf = h.operandPointers;
  operandsf.assign(p.num_post_ops, nullptr);
  h.operandData.resize(p.num_post_ops);
  for (uint32_t i = 0; operands && i < p.num_post_ops; ++i)
    if (operands[i])
      operandsf[i] =
          toFloat(operands[i], h.operandData[i], counts.operand(p.post_ops[i]));
  if (p.flags & MODELC_PRODUCT_Y_F32) // y is f32 already
    return runSite(h, p, site, xf, biasf, y, operandsf.data(), error);
  h.yData.resize(static_cast<size_t>(counts.y));
  if (!runSite(h, p, site, xf, biasf, h.yData.data(), operandsf.data(), error))
    return false;
  // Not bounded: rounding to f16 may overflow what bounded the f32 values.
  floatToHalf(h.yData.data(), static_cast<uint16_t *>(y), h.yData.size(),
              site.bf16);
  return true;
}

bool PackedProductRun::runSite(PackedProductHandles &h, const modelc_product &p,
                               const PackedProductSite &site, const void *x,
                               const void *bias, void *y,
                               const void *const *operands,
                               std::string &error) {
  dnnl_memory_set_data_handle_v2(h.plainSrc, const_cast<void *>(x), h.stream);
  dnnl_memory_set_data_handle_v2(h.plainDst, y, h.stream);
  if (site.hasBias)
    dnnl_memory_set_data_handle_v2(h.bias, const_cast<void *>(bias), h.stream);
  dnnl_memory_t src = site.reorderIn ? h.src : h.plainSrc;
  dnnl_memory_t dst = site.reorderOut ? h.dst : h.plainDst;
  if (site.reorderIn) {
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, h.plainSrc},
                              {DNNL_ARG_TO, h.src},
                              {DNNL_ARG_SCRATCHPAD, h.inScratch}};
    if (!ok(dnnl_primitive_execute(site.reorderIn, h.stream, 3, args),
            "input reorder", error))
      return false;
  }
  if (site.reorderSum) {
    // The sum's operand, in the output's layout, is what the product adds
    // to. Where the compiler planned the output in the operand's buffer
    // (modelc-plan-memory: a residual that dies here) and the layouts
    // agree, it is there already; in another layout it is reordered from a
    // copy, as a reorder cannot write over its own source.
    const void *operand = operands[site.sum];
    bool inPlace = operand == y && dst == h.plainDst;
    if (inPlace && site.sumInDstLayout)
      operand = nullptr;
    else if (inPlace) {
      size_t bytes = dnnl_memory_desc_get_size(&site.sumSrc);
      h.sumAside.resize(bytes);
      std::memcpy(h.sumAside.data(), operand, bytes);
      operand = h.sumAside.data();
    }
    if (operand) {
      dnnl_memory_set_data_handle_v2(h.sumSrc, const_cast<void *>(operand),
                                     h.stream);
      dnnl_exec_arg_t sum[] = {{DNNL_ARG_FROM, h.sumSrc},
                               {DNNL_ARG_TO, dst},
                               {DNNL_ARG_SCRATCHPAD, h.sumScratch}};
      if (!ok(dnnl_primitive_execute(site.reorderSum, h.stream, 3, sum),
              "sum reorder", error))
        return false;
    }
  }
  dnnl_exec_arg_t args[5 + kMaxPostOps] = {
      {DNNL_ARG_SRC, src},
      {DNNL_ARG_WEIGHTS, site.packedWeight.get()},
      {DNNL_ARG_DST, dst},
      {DNNL_ARG_SCRATCHPAD, h.scratch}};
  int count = 4;
  if (site.hasBias)
    args[count++] = {DNNL_ARG_BIAS, h.bias};
  for (size_t i = 0; i < h.operands.size(); ++i) {
    if (!site.hasOperand(i))
      continue;
    dnnl_memory_set_data_handle_v2(h.operands[i],
                                   const_cast<void *>(operands[i]), h.stream);
    args[count++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(site.dnnlIndex[i]) |
                         DNNL_ARG_SRC_1,
                     h.operands[i]};
  }
  if (!ok(dnnl_primitive_execute(site.primitive, h.stream, count, args),
          p.kind == MODELC_PRODUCT_CONV2D ? "convolution" : "matmul", error))
    return false;
  if (site.reorderOut) {
    dnnl_exec_arg_t out[] = {{DNNL_ARG_FROM, h.dst},
                             {DNNL_ARG_TO, h.plainDst},
                             {DNNL_ARG_SCRATCHPAD, h.outScratch}};
    if (!ok(dnnl_primitive_execute(site.reorderOut, h.stream, 3, out),
            "output reorder", error))
      return false;
  }
  return ok(dnnl_stream_wait(h.stream), "stream wait", error);
}

KeptPool::~KeptPool() {
  if (primitive)
    dnnl_primitive_destroy(primitive);
}

KeptPool *PackedProductCache::keptPool(const modelc_kept_pool &p,
                                       std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t key = siteKey(p.site, p.n);
  if (auto it = pools_.find(key); it != pools_.end())
    return it->second.get();
  if (!engine_) {
    error = "oneDNN has no CPU engine";
    return nullptr;
  }
  // The convolution ran earlier in this run, at this batch.
  auto producer = sites_.find(siteKey(p.src_site, p.n));
  if (producer == sites_.end()) {
    error = "reads the layout of call site " + std::to_string(p.src_site) +
            ", which has not run";
    return nullptr;
  }
  auto pool = std::make_unique<KeptPool>();
  pool->src = producer->second->dst;
  dnnl_dims_t dstDims = {p.n, p.c, 1, 1}, kernel = {p.h, p.w},
              strides = {p.h, p.w}, dilation = {0, 0}, padding = {0, 0};
  dnnl_pooling_v2_desc_t op;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  bool good =
      // NHWC, the same bytes as NCHW at one position per plane, and what
      // oneDNN's kernel for an NHWC input writes (with NCHW it takes its
      // reference kernel).
      desc(&pool->dst, 4, dstDims, dnnl_f32, dnnl_nhwc, error) &&
      ok(dnnl_pooling_v2_forward_desc_init(&op, dnnl_forward_inference,
                                           dnnl_pooling_avg_exclude_padding,
                                           &pool->src, &pool->dst, strides,
                                           kernel, dilation, padding, padding),
         "pooling description", error) &&
      ok(dnnl_primitive_attr_create(&attr), "attributes", error) &&
      ok(dnnl_primitive_attr_set_scratchpad_mode(attr,
                                                 dnnl_scratchpad_mode_user),
         "attributes", error) &&
      ok(dnnl_primitive_desc_create(&pd, &op, attr, engine_, nullptr),
         "pooling primitive description", error);
  if (good) {
    pool->scratch =
        *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    good = ok(dnnl_primitive_create(&pool->primitive, pd), "pooling", error);
  }
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  if (!good)
    return nullptr;
  return (pools_[key] = std::move(pool)).get();
}

bool PackedProductRun::pool(PackedProductCache &cache,
                            const modelc_kept_pool &p, const void *x, void *y,
                            std::string &error) {
  KeptPool *pool = cache.keptPool(p, error);
  if (!pool)
    return false;
  PackedProductHandles *handles;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Call sites number products and pools alike: one key space.
    handles = &handles_[siteKey(p.site, p.n)];
  }
  PackedProductHandles &h = *handles;
  dnnl_engine_t engine = cache.engine();
  if (!h.stream) {
    bool good =
        ok(dnnl_stream_create(&h.stream, engine, dnnl_stream_default_flags),
           "stream", error) &&
        ok(dnnl_memory_create(&h.plainSrc, &pool->src, engine,
                              DNNL_MEMORY_NONE),
           "memory handle", error) &&
        ok(dnnl_memory_create(&h.plainDst, &pool->dst, engine,
                              DNNL_MEMORY_NONE),
           "memory handle", error) &&
        ok(dnnl_memory_create(&h.scratch, &pool->scratch, engine,
                              DNNL_MEMORY_ALLOCATE),
           "run memory", error);
    if (!good) {
      h.release(); // made again by the next run
      return false;
    }
  }
  dnnl_memory_set_data_handle_v2(h.plainSrc, const_cast<void *>(x), h.stream);
  dnnl_memory_set_data_handle_v2(h.plainDst, y, h.stream);
  dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, h.plainSrc},
                            {DNNL_ARG_DST, h.plainDst},
                            {DNNL_ARG_SCRATCHPAD, h.scratch}};
  return ok(dnnl_primitive_execute(pool->primitive, h.stream, 3, args),
            "pooling", error) &&
         ok(dnnl_stream_wait(h.stream), "stream wait", error);
}

} // namespace modelc
