// dnnl_util.hpp - what the oneDNN-backed kernels (packed_product.cpp)
// use: status checks, reorders with a per-run scratchpad, and packing a
// constant weight into a primitive's layout once.
#ifndef MODELC_RUNTIME_DNNL_UTIL_HPP
#define MODELC_RUNTIME_DNNL_UTIL_HPP

#include <oneapi/dnnl/dnnl.h>

#include <string>

namespace modelc::dnnl {

/// True on success; otherwise sets `error` to "oneDNN WHAT failed (status N)".
bool ok(dnnl_status_t status, const char *what, std::string &error);

/// A reorder primitive from `from` to `to`, with its scratchpad description.
bool createReorder(dnnl_primitive_t *primitive, dnnl_memory_desc_t *scratch,
                   const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                   dnnl_engine_t engine, std::string &error);

/// Copies the weight `w` (laid out as `plain`) into new memory `*packed`
/// laid out as `packedDesc`, once, on `engine`: into the buffer `into`
/// (dnnl_memory_desc_get_size bytes, 64-byte aligned, outliving *packed)
/// where given, else into memory oneDNN allocates.
bool packWeight(const void *w, const dnnl_memory_desc_t *plain,
                const dnnl_memory_desc_t *packedDesc, dnnl_engine_t engine,
                dnnl_memory_t *packed, std::string &error,
                void *into = nullptr);

} // namespace modelc::dnnl

#endif // MODELC_RUNTIME_DNNL_UTIL_HPP
