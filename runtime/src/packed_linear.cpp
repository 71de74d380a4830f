// packed_linear.cpp - y = x * W^T + b with W pre-packed once (oneDNN matmul).
#include "packed_linear.hpp"

#include "dnnl_util.hpp"

#include <string>

namespace modelc {

using dnnl::ok;

PackedLinearSite::~PackedLinearSite() {
  if (primitive)
    dnnl_primitive_destroy(primitive);
  if (packedWeight)
    dnnl_memory_destroy(packedWeight);
}

PackedLinearHandles::~PackedLinearHandles() {
  for (dnnl_memory_t m : {src, dst, bias, scratchpad})
    if (m)
      dnnl_memory_destroy(m);
  if (stream)
    dnnl_stream_destroy(stream);
}

PackedLinearCache::PackedLinearCache() {
  if (dnnl_engine_create(&engine_, dnnl_cpu, 0) != dnnl_success)
    engine_ = nullptr;
}

PackedLinearCache::~PackedLinearCache() {
  sites_.clear();
  if (engine_)
    dnnl_engine_destroy(engine_);
}

PackedLinearSite *PackedLinearCache::site(uint32_t id, const float *w,
                                          bool hasBias, int64_t m, int64_t n,
                                          int64_t k, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sites_.find(id);
  if (it != sites_.end())
    return it->second.get();
  if (!engine_) {
    error = "oneDNN has no CPU engine";
    return nullptr;
  }
  auto site = std::make_unique<PackedLinearSite>();
  site->hasBias = hasBias;
  dnnl_dims_t srcDims = {m, k}, weightDims = {k, n}, dstDims = {m, n},
              biasDims = {1, n};
  dnnl_memory_desc_t weightAny, weightPlain;
  // W is [n, k] row-major: as a k x n matrix its layout is "ba".
  if (!ok(dnnl_memory_desc_init_by_tag(&site->src, 2, srcDims, dnnl_f32,
                                       dnnl_ab),
          "memory description", error) ||
      !ok(dnnl_memory_desc_init_by_tag(&weightAny, 2, weightDims, dnnl_f32,
                                       dnnl_format_tag_any),
          "memory description", error) ||
      !ok(dnnl_memory_desc_init_by_tag(&weightPlain, 2, weightDims, dnnl_f32,
                                       dnnl_ba),
          "memory description", error) ||
      !ok(dnnl_memory_desc_init_by_tag(&site->dst, 2, dstDims, dnnl_f32,
                                       dnnl_ab),
          "memory description", error) ||
      !ok(dnnl_memory_desc_init_by_tag(&site->bias, 2, biasDims, dnnl_f32,
                                       dnnl_ab),
          "memory description", error))
    return nullptr;
  dnnl_matmul_desc_t desc;
  if (!ok(dnnl_matmul_desc_init(&desc, &site->src, &weightAny,
                                hasBias ? &site->bias : nullptr, &site->dst),
          "matmul description", error))
    return nullptr;
  dnnl_primitive_desc_t pd;
  if (!dnnl::createPd(&pd, &desc, engine_, error))
    return nullptr;
  site->scratchpad =
      *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  bool good = ok(dnnl_primitive_create(&site->primitive, pd),
                 "matmul primitive", error) &&
              dnnl::packWeight(
                  w, &weightPlain,
                  dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                  engine_, &site->packedWeight, error);
  dnnl_primitive_desc_destroy(pd);
  if (!good)
    return nullptr;
  PackedLinearSite *result = site.get();
  sites_[id] = std::move(site);
  return result;
}

PackedLinearRun::~PackedLinearRun() { handles_.clear(); }

bool PackedLinearRun::execute(PackedLinearCache &cache, uint32_t id,
                              PackedLinearSite &site, const float *x,
                              const float *bias, float *y, std::string &error) {
  PackedLinearHandles *handles;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    handles = &handles_[id]; // references stay valid across rehashing
  }
  PackedLinearHandles &h = *handles;
  if (!h.stream && !ok(dnnl_stream_create(&h.stream, cache.engine(),
                                          dnnl_stream_default_flags),
                       "stream", error))
    return false;
  if (!h.src && (!ok(dnnl_memory_create(&h.src, &site.src, cache.engine(),
                                        DNNL_MEMORY_NONE),
                     "memory handle", error) ||
                 !ok(dnnl_memory_create(&h.dst, &site.dst, cache.engine(),
                                        DNNL_MEMORY_NONE),
                     "memory handle", error) ||
                 (site.hasBias &&
                  !ok(dnnl_memory_create(&h.bias, &site.bias, cache.engine(),
                                         DNNL_MEMORY_NONE),
                      "memory handle", error)) ||
                 !ok(dnnl_memory_create(&h.scratchpad, &site.scratchpad,
                                        cache.engine(), DNNL_MEMORY_ALLOCATE),
                     "scratchpad", error)))
    return false;
  dnnl_memory_set_data_handle_v2(h.src, const_cast<float *>(x), h.stream);
  dnnl_memory_set_data_handle_v2(h.dst, y, h.stream);
  dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, h.src},
                             {DNNL_ARG_WEIGHTS, site.packedWeight},
                             {DNNL_ARG_DST, h.dst},
                             {DNNL_ARG_SCRATCHPAD, h.scratchpad},
                             {DNNL_ARG_BIAS, h.bias}};
  int count = 4;
  if (site.hasBias) {
    dnnl_memory_set_data_handle_v2(h.bias, const_cast<float *>(bias), h.stream);
    count = 5;
  }
  return ok(dnnl_primitive_execute(site.primitive, h.stream, count, args),
            "matmul", error) &&
         ok(dnnl_stream_wait(h.stream), "stream wait", error);
}

} // namespace modelc
