// half_convert.hpp - f16/bf16 arrays to f32 and back, as fast as the CPU
// allows (F16C where it has it): the packed products of f16 or bf16 models
// on CPUs where oneDNN computes only in f32.
#ifndef MODELC_RUNTIME_HALF_CONVERT_HPP
#define MODELC_RUNTIME_HALF_CONVERT_HPP

#include <cstddef>
#include <cstdint>

namespace modelc {

/// out[i] = in[i] as f32, for n bf16 (`bf16`) or f16 values.
void halfToFloat(const uint16_t *in, float *out, size_t n, bool bf16);

/// out[i] = in[i] rounded to nearest even bf16 (`bf16`) or f16.
void floatToHalf(const float *in, uint16_t *out, size_t n, bool bf16);

} // namespace modelc

#endif // MODELC_RUNTIME_HALF_CONVERT_HPP
