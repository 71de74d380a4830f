// exact_post_ops.cpp - the magnitudes that decide whether a fused chain is
// exact, and the chain computed with NaN kept.
#include "exact_post_ops.hpp"

#include "modelc/half.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace modelc {

namespace {

/// The largest and smallest magnitude's bit pattern: the sign bit cleared,
/// the patterns order as the magnitudes do, and a NaN's lies above the
/// infinity's, so integer max and min (which vectorise, and know no NaN)
/// find them.
template <typename Bits>
__attribute__((always_inline)) inline void
magnitudeBits(const Bits *bits, int64_t n, Bits mask, Bits &maxBits,
              Bits &minBits) {
  Bits hi = 0, lo = static_cast<Bits>(~Bits(0));
#pragma omp simd reduction(max : hi) reduction(min : lo)
  for (int64_t i = 0; i < n; ++i) {
    Bits a = static_cast<Bits>(bits[i] & mask);
    hi = a > hi ? a : hi;
    lo = a < lo ? a : lo;
  }
  maxBits = hi;
  minBits = lo;
}

// The scan built for AVX-512 and AVX2 as well as the baseline (whose SSE2
// has no 32-bit max), the best chosen once (as half_convert.cpp chooses
// F16C; not an ifunc, which sanitizers' runtimes do not survive): 800 KB
// from L2 in 10 us (78 GB/s) on AVX-512 where the baseline takes 68 us.
#define MODELC_MAGNITUDE_SCANS(suffix, attributes)                             \
  attributes void scan32##suffix(const uint32_t *bits, int64_t n,              \
                                 uint32_t &hi, uint32_t &lo) {                 \
    magnitudeBits<uint32_t>(bits, n, 0x7fffffffu, hi, lo);                     \
  }                                                                            \
  attributes void scan16##suffix(const uint16_t *bits, int64_t n,              \
                                 uint16_t &hi, uint16_t &lo) {                 \
    magnitudeBits<uint16_t>(bits, n, 0x7fffu, hi, lo);                         \
  }
MODELC_MAGNITUDE_SCANS(Baseline, )
#if defined(__x86_64__) && defined(__GNUC__)
MODELC_MAGNITUDE_SCANS(Avx2, __attribute__((target("avx2"))))
MODELC_MAGNITUDE_SCANS(Avx512, __attribute__((target("avx512f,avx512bw"))))
#endif

using Scan32 = void (*)(const uint32_t *, int64_t, uint32_t &, uint32_t &);
using Scan16 = void (*)(const uint16_t *, int64_t, uint16_t &, uint16_t &);

template <typename Scan> Scan bestScan(Scan baseline, Scan avx2, Scan avx512) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
    return avx512;
  if (__builtin_cpu_supports("avx2"))
    return avx2;
#endif
  (void)avx2;
  (void)avx512;
  return baseline;
}

void magnitudeBits32(const uint32_t *bits, int64_t n, uint32_t &hi,
                     uint32_t &lo) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Scan32 scan =
      bestScan<Scan32>(scan32Baseline, scan32Avx2, scan32Avx512);
#else
  static const Scan32 scan = scan32Baseline;
#endif
  scan(bits, n, hi, lo);
}

void magnitudeBits16(const uint16_t *bits, int64_t n, uint16_t &hi,
                     uint16_t &lo) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Scan16 scan =
      bestScan<Scan16>(scan16Baseline, scan16Avx2, scan16Avx512);
#else
  static const Scan16 scan = scan16Baseline;
#endif
  scan(bits, n, hi, lo);
}

float f32OfBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float halfOfBits(uint16_t bits, Storage storage) {
  return storage == Storage::BF16 ? bf16_to_float(bits) : f16_to_float(bits);
}

bool finite(const Magnitudes &m) { return m.max <= FLT_MAX; }

float relu(float v, float alpha) {
  if (v > 0.0f || v != v)
    return v;
  return alpha == 0.0f ? 0.0f : alpha * v;
}

float eltwise(uint32_t alg, float alpha, float v) {
  switch (alg) {
  case MODELC_ELTWISE_RELU:
    return relu(v, alpha);
  case MODELC_ELTWISE_GELU_ERF:
    return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
  case MODELC_ELTWISE_GELU_TANH: {
    const float k = 0.79788456080286536f; // sqrt(2 / pi)
    return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
  case MODELC_ELTWISE_LOGISTIC:
    return 1.0f / (1.0f + std::exp(-v));
  case MODELC_ELTWISE_TANH:
    return std::tanh(v);
  case MODELC_ELTWISE_SWISH:
    return v / (1.0f + std::exp(-alpha * v));
  default:
    return NAN; // site creation refused unknown post-ops
  }
}

float binary(uint32_t alg, float a, float b) {
  switch (alg) {
  case MODELC_BINARY_ADD:
    return a + b;
  case MODELC_BINARY_SUB:
    return a - b;
  case MODELC_BINARY_MUL:
    return a * b;
  case MODELC_BINARY_DIV:
    return a / b;
  case MODELC_BINARY_MAX:
    return a != a ? a : b != b ? b : std::max(a, b);
  case MODELC_BINARY_MIN:
    return a != a ? a : b != b ? b : std::min(a, b);
  default:
    return NAN;
  }
}

} // namespace

Magnitudes magnitudesOf(const void *data, int64_t n, Storage storage) {
  Magnitudes m;
  if (n <= 0)
    return m;
  if (storage == Storage::F32) {
    uint32_t hi, lo;
    magnitudeBits32(static_cast<const uint32_t *>(data), n, hi, lo);
    m.max = f32OfBits(hi);
    m.min = f32OfBits(lo);
  } else {
    uint16_t hi, lo;
    magnitudeBits16(static_cast<const uint16_t *>(data), n, hi, lo);
    m.max = halfOfBits(hi, storage);
    m.min = halfOfBits(lo, storage);
  }
  return m;
}

bool chainMayDropNaN(const modelc_product &p) {
  for (uint32_t i = 0; i < p.num_post_ops; ++i) {
    const modelc_post_op &post = p.post_ops[i];
    if (post.kind == MODELC_POST_ELTWISE && post.alg == MODELC_ELTWISE_RELU &&
        post.alpha == 0.0f)
      return true;
    if (post.kind == MODELC_POST_BINARY &&
        (post.alg == MODELC_BINARY_MAX || post.alg == MODELC_BINARY_MIN))
      return true;
  }
  return false;
}

bool fusedChainIsExact(const modelc_product &p, const ProductMagnitudes &m,
                       double *result) {
  if (!finite(m.x) || !finite(m.w) || !finite(m.bias))
    return false;
  // Each output is a sum of `reduction` products, plus the bias: in
  // [lo, hi] = [-b, b]; each step maps the interval.
  double b = static_cast<double>(std::max<int64_t>(m.reduction, 1)) * m.x.max *
                 m.w.max +
             m.bias.max;
  double lo = -b, hi = b;
  auto magnitude = [&] { return std::max(std::fabs(lo), std::fabs(hi)); };
  if (!(magnitude() <= kProductBound))
    return false;
  for (uint32_t i = 0; i < p.num_post_ops; ++i) {
    const modelc_post_op &post = p.post_ops[i];
    double alpha = static_cast<double>(post.alpha);
    if (post.kind == MODELC_POST_ELTWISE) {
      if (post.alg == MODELC_ELTWISE_RELU && alpha >= 0.0) {
        // Nondecreasing: v for v > 0, alpha * v below.
        lo = lo > 0.0 ? lo : alpha * lo;
        hi = hi > 0.0 ? hi : alpha * hi;
      } else if (post.alg == MODELC_ELTWISE_RELU) {
        double bound = magnitude() * std::max(1.0, std::fabs(alpha));
        lo = -bound;
        hi = bound;
      } else if (post.alg == MODELC_ELTWISE_LOGISTIC) {
        lo = 0.0;
        hi = 1.0;
      } else if (post.alg == MODELC_ELTWISE_TANH) {
        lo = -1.0;
        hi = 1.0;
      } else { // GELU and swish: |f(v)| <= |v|
        double bound = magnitude();
        lo = -bound;
        hi = bound;
      }
    } else {
      // The operand's values lie in [-v.max, v.max].
      const Magnitudes &v = m.operands[i];
      if (!finite(v))
        return false;
      double vmax = v.max;
      if (post.kind == MODELC_POST_SUM) {
        lo -= std::fabs(alpha) * vmax;
        hi += std::fabs(alpha) * vmax;
      } else if (post.alg == MODELC_BINARY_ADD ||
                 post.alg == MODELC_BINARY_SUB) {
        lo -= vmax;
        hi += vmax;
      } else if (post.alg == MODELC_BINARY_MUL ||
                 post.alg == MODELC_BINARY_DIV) {
        double bound = post.alg == MODELC_BINARY_MUL ? magnitude() * vmax
                       : v.min > 0.0f                ? magnitude() / v.min
                                                     : INFINITY;
        lo = -bound;
        hi = bound;
      } else if (post.alg == MODELC_BINARY_MAX) {
        lo = std::max(lo, -vmax);
        hi = std::max(hi, vmax);
      } else { // min
        lo = std::min(lo, -vmax);
        hi = std::min(hi, vmax);
      }
    }
    if (!(magnitude() <= kProductBound))
      return false;
  }
  if (result)
    *result = magnitude();
  return true;
}

void applyPostOps(const modelc_product &p, float *z, int64_t n,
                  int64_t channels, int64_t plane,
                  const float *const *operands) {
  for (uint32_t i = 0; i < p.num_post_ops; ++i) {
    const modelc_post_op &post = p.post_ops[i];
    const float *v = operands ? operands[i] : nullptr;
    if (post.kind == MODELC_POST_ELTWISE) {
      for (int64_t e = 0; e < n; ++e)
        z[e] = eltwise(post.alg, post.alpha, z[e]);
    } else if (post.kind == MODELC_POST_SUM) {
      for (int64_t e = 0; e < n; ++e)
        z[e] += post.alpha * v[e];
    } else if (post.broadcast == MODELC_BROADCAST_FULL) {
      for (int64_t e = 0; e < n; ++e)
        z[e] = binary(post.alg, z[e], v[e]);
    } else if (post.broadcast == MODELC_BROADCAST_CHANNEL) {
      for (int64_t e = 0; e < n; ++e)
        z[e] = binary(post.alg, z[e], v[(e / plane) % channels]);
    } else {
      for (int64_t e = 0; e < n; ++e)
        z[e] = binary(post.alg, z[e], v[0]);
    }
  }
}

} // namespace modelc
