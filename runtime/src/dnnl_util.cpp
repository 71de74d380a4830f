// dnnl_util.cpp - shared oneDNN helpers of the packed kernels.
#include "dnnl_util.hpp"

namespace modelc::dnnl {

bool ok(dnnl_status_t status, const char *what, std::string &error) {
  if (status == dnnl_success)
    return true;
  error = std::string("oneDNN ") + what + " failed (status " +
          std::to_string(static_cast<int>(status)) + ")";
  return false;
}

bool createReorder(dnnl_primitive_t *primitive, dnnl_memory_desc_t *scratch,
                   const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                   dnnl_engine_t engine, std::string &error) {
  dnnl_primitive_attr_t attr;
  if (!ok(dnnl_primitive_attr_create(&attr), "primitive attributes", error))
    return false;
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_primitive_desc_t pd;
  dnnl_status_t status =
      dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, attr);
  dnnl_primitive_attr_destroy(attr);
  if (!ok(status, "reorder description", error))
    return false;
  *scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  status = dnnl_primitive_create(primitive, pd);
  dnnl_primitive_desc_destroy(pd);
  return ok(status, "reorder", error);
}

bool packWeight(const void *w, const dnnl_memory_desc_t *plain,
                const dnnl_memory_desc_t *packedDesc, dnnl_engine_t engine,
                dnnl_memory_t *packed, std::string &error, void *into) {
  dnnl_memory_t plainMem = nullptr, scratchMem = nullptr;
  dnnl_primitive_t reorder = nullptr;
  dnnl_memory_desc_t scratch;
  dnnl_stream_t stream = nullptr;
  bool good =
      ok(dnnl_memory_create(packed, packedDesc, engine,
                            into ? into : DNNL_MEMORY_ALLOCATE),
         "packed weight", error) &&
      ok(dnnl_memory_create(&plainMem, plain, engine, const_cast<void *>(w)),
         "weight memory", error) &&
      createReorder(&reorder, &scratch, plain, packedDesc, engine, error) &&
      ok(dnnl_memory_create(&scratchMem, &scratch, engine,
                            DNNL_MEMORY_ALLOCATE),
         "scratchpad", error) &&
      ok(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags),
         "stream", error);
  if (good) {
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, plainMem},
                              {DNNL_ARG_TO, *packed},
                              {DNNL_ARG_SCRATCHPAD, scratchMem}};
    good = ok(dnnl_primitive_execute(reorder, stream, 3, args),
              "weight reorder", error) &&
           ok(dnnl_stream_wait(stream), "stream wait", error);
  }
  if (stream)
    dnnl_stream_destroy(stream);
  if (reorder)
    dnnl_primitive_destroy(reorder);
  for (dnnl_memory_t m : {plainMem, scratchMem})
    if (m)
      dnnl_memory_destroy(m);
  return good;
}

} // namespace modelc::dnnl
