// half_convert.cpp - f16/bf16 arrays to f32 and back.
#include "half_convert.hpp"

#include "modelc/half.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace modelc {

namespace {

#if defined(__x86_64__)
// Built for F16C whatever the rest of the runtime is built for, and called
// only where the CPU has it.
__attribute__((target("avx,f16c"))) size_t
f16ToFloatF16c(const uint16_t *in, float *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(in + i))));
  return i;
}

__attribute__((target("avx,f16c"))) size_t
floatToF16F16c(const float *in, uint16_t *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(
        reinterpret_cast<__m128i *>(out + i),
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  return i;
}

bool hasF16c() {
  static const bool has = __builtin_cpu_supports("f16c");
  return has;
}
#endif

} // namespace

void halfToFloat(const uint16_t *in, float *out, size_t n, bool bf16) {
  size_t i = 0;
  if (bf16) {
    for (; i < n; ++i)
      out[i] = bf16_to_float(in[i]);
    return;
  }
#if defined(__x86_64__)
  if (hasF16c())
    i = f16ToFloatF16c(in, out, n);
#endif
  for (; i < n; ++i)
    out[i] = f16_to_float(in[i]);
}

void floatToHalf(const float *in, uint16_t *out, size_t n, bool bf16) {
  size_t i = 0;
  if (bf16) {
    for (; i < n; ++i)
      out[i] = float_to_bf16(in[i]);
    return;
  }
#if defined(__x86_64__)
  if (hasF16c())
    i = floatToF16F16c(in, out, n);
#endif
  for (; i < n; ++i)
    out[i] = float_to_f16(in[i]);
}

} // namespace modelc
