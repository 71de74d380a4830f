// modelc/half.h - f16 (IEEE binary16) and bf16 conversions, header-only.
//
// Shared by the runtime, the compiler (weights) and generated model code
// (compiler/kernels), so that every part rounds the same way: to nearest,
// ties to even; f16 keeps subnormals; NaN stays NaN.
#ifndef MODELC_HALF_H
#define MODELC_HALF_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace modelc {

inline float f16_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  uint32_t bits = exponent == 31
                      ? sign | 0x7f800000u | (mantissa << 13)
                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) // inf, NaN
    return sign | 0x7c00 | (magnitude > 0x7f800000u ? 0x200 : 0);
  if (magnitude >= 0x477ff000u) // rounds to inf
    return sign | 0x7c00;
  if (magnitude < 0x38800000u) { // below the smallest normal: subnormal or 0
    float a;
    std::memcpy(&a, &magnitude, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  uint32_t half = ((magnitude >> 23) - 112) << 10 | ((magnitude >> 13) & 0x3ff);
  uint32_t rest = magnitude & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}

inline float bf16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

} // namespace modelc

#endif // MODELC_HALF_H
