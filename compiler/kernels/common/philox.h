//===- philox.h - the counter-based generator of graph.dropout -*- C++ -*-===//
//
// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011): a block of four 32-bit words from a
// 128-bit counter and a 64-bit key, by ten rounds of multiplications and
// key additions. Any element's number is computed from its own counter, so
// every plan and device (the CPU kernels, the CUDA kernels, the reference
// interpreter) draws the same numbers in any order and thread split.
//
// graph.dropout's mask is defined here, in one place: element i of a
// dropout at `site`, in the step `step`, keyed by `seed`, is kept when the
// uniform number of word i % 4 of the block at counter (i / 4, step, site)
// is at least `ratio`.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_KERNELS_COMMON_PHILOX_H
#define MODELC_KERNELS_COMMON_PHILOX_H

#include <cstdint>

#if defined(__CUDACC__)
#define MODELC_PHILOX_FN __host__ __device__ __forceinline__
#else
#define MODELC_PHILOX_FN inline
#endif

namespace modelc_philox {

/// Word `word` (0-3) of Philox4x32-10's block at counter (c0, c1, c2, c3)
/// with key (k0, k1).
MODELC_PHILOX_FN uint32_t philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2,
                                        uint32_t c3, uint32_t k0, uint32_t k1,
                                        unsigned word) {
  const uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  const uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(m0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(m1) * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32);
    const uint32_t lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32);
    const uint32_t lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += w0;
    k1 += w1;
  }
  return word == 0 ? c0 : word == 1 ? c1 : word == 2 ? c2 : c3;
}

/// A uniform float in [0, 1) from 32 random bits (the top 24: every value
/// a multiple of 2^-24, exact in f32).
MODELC_PHILOX_FN float uniform(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

/// Whether graph.dropout keeps element `i` (see the top of this file).
MODELC_PHILOX_FN bool dropout_keep(uint64_t seed, int64_t step, uint32_t site,
                                   int64_t i, float ratio) {
  const uint64_t block = static_cast<uint64_t>(i) >> 2;
  const uint64_t s = static_cast<uint64_t>(step);
  const uint32_t bits = philox4x32_10(
      static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
      static_cast<uint32_t>(s), site ^ static_cast<uint32_t>(s >> 32),
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
      static_cast<unsigned>(i & 3));
  return uniform(bits) >= ratio;
}

/// What a kept element is multiplied by: 1 / (1 - ratio) (0 when every
/// element is dropped), in f32, as torch's dropout scales its mask.
MODELC_PHILOX_FN float dropout_scale(float ratio) {
  return ratio < 1.0f ? 1.0f / (1.0f - ratio) : 0.0f;
}

} // namespace modelc_philox

#endif // MODELC_KERNELS_COMMON_PHILOX_H
