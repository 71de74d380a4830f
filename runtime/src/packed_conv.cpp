// packed_conv.cpp - 2-D convolutions through oneDNN with weights packed once.
#include "packed_conv.hpp"

#include "dnnl_util.hpp"

namespace modelc {

using dnnl::createPd;
using dnnl::createReorder;
using dnnl::ok;

PackedConvSite::~PackedConvSite() {
  for (dnnl_primitive_t p : {conv, reorderIn, reorderOut})
    if (p)
      dnnl_primitive_destroy(p);
  if (packedWeight)
    dnnl_memory_destroy(packedWeight);
}

PackedConvHandles::~PackedConvHandles() {
  for (dnnl_memory_t m :
       {plainSrc, plainDst, src, dst, bias, convScratch, inScratch, outScratch})
    if (m)
      dnnl_memory_destroy(m);
  if (stream)
    dnnl_stream_destroy(stream);
}

PackedConvCache::PackedConvCache() {
  if (dnnl_engine_create(&engine_, dnnl_cpu, 0) != dnnl_success)
    engine_ = nullptr;
}

PackedConvCache::~PackedConvCache() {
  sites_.clear();
  if (engine_)
    dnnl_engine_destroy(engine_);
}

PackedConvSite *PackedConvCache::site(uint32_t id, const float *w, bool hasBias,
                                      const int64_t *shape,
                                      std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = sites_.find(id); it != sites_.end())
    return it->second.get();
  if (!engine_) {
    error = "oneDNN has no CPU engine";
    return nullptr;
  }
  int64_t n = shape[0], c = shape[1], h = shape[2], wd = shape[3], o = shape[4],
          kh = shape[5], kw = shape[6], oh = shape[7], ow = shape[8],
          groups = shape[17];
  auto site = std::make_unique<PackedConvSite>();
  site->hasBias = hasBias;
  dnnl_dims_t srcDims = {n, c, h, wd}, dstDims = {n, o, oh, ow}, biasDims = {o};
  dnnl_dims_t strides = {shape[9], shape[10]}, padL = {shape[11], shape[12]},
              padR = {shape[13], shape[14]},
              dilation = {shape[15] - 1, shape[16] - 1};
  dnnl_memory_desc_t weightAny, weightPlain, srcAny, dstAny;
  bool good;
  if (groups == 1) {
    dnnl_dims_t weightDims = {o, c, kh, kw};
    good = ok(dnnl_memory_desc_init_by_tag(&weightAny, 4, weightDims, dnnl_f32,
                                           dnnl_format_tag_any),
              "memory description", error) &&
           ok(dnnl_memory_desc_init_by_tag(&weightPlain, 4, weightDims,
                                           dnnl_f32, dnnl_oihw),
              "memory description", error);
  } else {
    dnnl_dims_t weightDims = {groups, o / groups, c / groups, kh, kw};
    good = ok(dnnl_memory_desc_init_by_tag(&weightAny, 5, weightDims, dnnl_f32,
                                           dnnl_format_tag_any),
              "memory description", error) &&
           ok(dnnl_memory_desc_init_by_tag(&weightPlain, 5, weightDims,
                                           dnnl_f32, dnnl_goihw),
              "memory description", error);
  }
  good = good &&
         ok(dnnl_memory_desc_init_by_tag(&site->plainSrc, 4, srcDims, dnnl_f32,
                                         dnnl_nchw),
            "memory description", error) &&
         ok(dnnl_memory_desc_init_by_tag(&site->plainDst, 4, dstDims, dnnl_f32,
                                         dnnl_nchw),
            "memory description", error) &&
         ok(dnnl_memory_desc_init_by_tag(&srcAny, 4, srcDims, dnnl_f32,
                                         dnnl_format_tag_any),
            "memory description", error) &&
         ok(dnnl_memory_desc_init_by_tag(&dstAny, 4, dstDims, dnnl_f32,
                                         dnnl_format_tag_any),
            "memory description", error) &&
         ok(dnnl_memory_desc_init_by_tag(&site->bias, 1, biasDims, dnnl_f32,
                                         dnnl_x),
            "memory description", error);
  if (!good)
    return nullptr;
  dnnl_convolution_desc_t desc;
  if (!ok(dnnl_dilated_convolution_forward_desc_init(
              &desc, dnnl_forward_inference, dnnl_convolution_direct, &srcAny,
              &weightAny, hasBias ? &site->bias : nullptr, &dstAny, strides,
              dilation, padL, padR),
          "convolution description", error))
    return nullptr;
  dnnl_primitive_desc_t pd;
  if (!createPd(&pd, &desc, engine_, error))
    return nullptr;
  site->src = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  site->dst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  site->convScratch =
      *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  good = ok(dnnl_primitive_create(&site->conv, pd), "convolution", error) &&
         dnnl::packWeight(
             w, &weightPlain,
             dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
             engine_, &site->packedWeight, error);
  // Input and output reorders, when the convolution chose blocked layouts.
  if (good && !dnnl_memory_desc_equal(&site->src, &site->plainSrc))
    good = createReorder(&site->reorderIn, &site->inScratch, &site->plainSrc,
                         &site->src, engine_, error);
  if (good && !dnnl_memory_desc_equal(&site->dst, &site->plainDst))
    good = createReorder(&site->reorderOut, &site->outScratch, &site->dst,
                         &site->plainDst, engine_, error);
  dnnl_primitive_desc_destroy(pd);
  if (!good)
    return nullptr;
  PackedConvSite *result = site.get();
  sites_[id] = std::move(site);
  return result;
}

bool PackedConvRun::execute(PackedConvCache &cache, uint32_t id,
                            PackedConvSite &site, const float *x,
                            const float *bias, float *y, std::string &error) {
  PackedConvHandles *handles;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    handles = &handles_[id];
  }
  PackedConvHandles &h = *handles;
  dnnl_engine_t engine = cache.engine();
  if (!h.stream) {
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
        (site.reorderIn ? allocate(&h.src, &site.src) &&
                              allocate(&h.inScratch, &site.inScratch)
                        : true) &&
        (site.reorderOut ? allocate(&h.dst, &site.dst) &&
                               allocate(&h.outScratch, &site.outScratch)
                         : true) &&
        allocate(&h.convScratch, &site.convScratch) &&
        (site.hasBias ? handle(&h.bias, &site.bias) : true);
    if (!good)
      return false;
  }
  dnnl_memory_set_data_handle_v2(h.plainSrc, const_cast<float *>(x), h.stream);
  dnnl_memory_set_data_handle_v2(h.plainDst, y, h.stream);
  if (site.hasBias)
    dnnl_memory_set_data_handle_v2(h.bias, const_cast<float *>(bias), h.stream);
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
  dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, src},
                            {DNNL_ARG_WEIGHTS, site.packedWeight},
                            {DNNL_ARG_DST, dst},
                            {DNNL_ARG_SCRATCHPAD, h.convScratch},
                            {DNNL_ARG_BIAS, h.bias}};
  if (!ok(dnnl_primitive_execute(site.conv, h.stream, site.hasBias ? 5 : 4,
                                 args),
          "convolution", error))
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

} // namespace modelc
