// cuda/kernels.cuh - device code shared by the CUDA kernels modelc generates
// (compiler/Codegen/CudaPrinter.cpp). Every kernel is generated per op with
// its shapes as constants; this header holds what they have in common:
// element loads and stores (f16/bf16 stored as uint16_t, computed in f32),
// the math the elementwise expressions call, block reductions and the
// row-wise kernels (softmax, layer norm, pooling of a plane).
//
// The same text builds with nvcc (sm_80/sm_90 + PTX) and, for tests without
// a GPU, as host C++ with MODELC_GPU_EMULATION (cuda/emulation.h).
#ifndef MODELC_KERNELS_CUDA_KERNELS_CUH
#define MODELC_KERNELS_CUDA_KERNELS_CUH

#ifdef MODELC_GPU_EMULATION
#include "cuda/emulation.h"
#include "modelc/half.h"
#include <math.h>
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif
#include <math.h>

#include <stdint.h>

#include "common/philox.h"

// A kernel of the model: exported by its name, at most `threads` threads
// per block. In emulation, the generated wrapper (MODELC_EMULATED) is the
// exported function and the body is static; NAME__nparams tells the
// stand-in driver how many (pointer) arguments to keep when a launch is
// captured into a CUDA graph.
#ifdef MODELC_GPU_EMULATION
#define MODELC_KERNEL(name, threads) static void name##_body
#define MODELC_EMULATED(name, barriers, nparams, call)                         \
  extern "C" __attribute__((visibility("default")))                            \
  const int name##__nparams = nparams;                                         \
  extern "C" __attribute__((visibility("default"))) void name(                 \
      void **args, const unsigned *grid, const unsigned *block) {              \
    modelc_emu::run(grid, block, barriers, [&] { name##_body call; });         \
  }
#else
#define MODELC_KERNEL(name, threads)                                           \
  extern "C" __global__ void __launch_bounds__(threads) name
#endif

namespace modelc_gpu {

//===----------------------------------------------------------------------===//
// Storage types: f32 as float; f16 and bf16 as their bits (uint16_t),
// converted to f32 to compute, rounded to nearest even to store.
//===----------------------------------------------------------------------===//

#ifdef MODELC_GPU_EMULATION
inline float f16_to_float(uint16_t h) { return modelc::f16_to_float(h); }
inline uint16_t float_to_f16(float f) { return modelc::float_to_f16(f); }
inline float bf16_to_float(uint16_t h) { return modelc::bf16_to_float(h); }
inline uint16_t float_to_bf16(float f) { return modelc::float_to_bf16(f); }
#else
__device__ __forceinline__ float f16_to_float(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ uint16_t float_to_f16(float f) {
  return __half_as_ushort(__float2half_rn(f));
}
__device__ __forceinline__ float bf16_to_float(uint16_t h) {
  return __bfloat162float(__ushort_as_bfloat16(h));
}
__device__ __forceinline__ uint16_t float_to_bf16(float f) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}
#endif

struct F32 {
  using T = float;
  static __device__ __forceinline__ float load(float v) { return v; }
  static __device__ __forceinline__ float store(float v) { return v; }
};
struct F16 {
  using T = uint16_t;
  static __device__ __forceinline__ float load(uint16_t v) {
    return f16_to_float(v);
  }
  static __device__ __forceinline__ uint16_t store(float v) {
    return float_to_f16(v);
  }
};
struct BF16 {
  using T = uint16_t;
  static __device__ __forceinline__ float load(uint16_t v) {
    return bf16_to_float(v);
  }
  static __device__ __forceinline__ uint16_t store(float v) {
    return float_to_bf16(v);
  }
};

//===----------------------------------------------------------------------===//
// Math of the elementwise ops (the same definitions as the CPU kernels).
//===----------------------------------------------------------------------===//

// A NaN in either operand propagates, as in kernels/cpu/kernels.h (and
// torch.maximum); fmaxf would drop it.
template <typename T> __device__ __forceinline__ T max_(T a, T b) {
  return (a < b || b != b) ? b : a;
}
template <typename T> __device__ __forceinline__ T min_(T a, T b) {
  return (b < a || b != b) ? b : a;
}
__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}
__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
__device__ __forceinline__ float gelu_tanh(float x) {
  return 0.5f * x *
         (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}
// int_div and int_pow as in kernels/cpu/kernels.h: INT_MIN / -1 and
// overflowing powers wrap (computed unsigned).
template <typename T> __device__ __forceinline__ T int_div(T a, T b) {
  if (b == T(-1))
    return T(0ull - static_cast<unsigned long long>(a));
  return b == 0 ? T(0) : a / b;
}
// int_mod and int_fmod as in kernels/cpu/kernels.h (0 by zero and by -1).
template <typename T> __device__ __forceinline__ T int_mod(T a, T b) {
  if (b == 0 || b == -1)
    return T(0);
  T r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? T(r + b) : r;
}
template <typename T> __device__ __forceinline__ T int_fmod(T a, T b) {
  return b == 0 || b == -1 ? T(0) : T(a % b);
}
template <typename T> __device__ __forceinline__ T int_pow(T base, T exp) {
  if (exp < 0)
    return base == 1 ? T(1) : base == -1 ? ((exp & 1) ? T(-1) : T(1)) : T(0);
  unsigned long long result = 1, factor = static_cast<unsigned long long>(base);
  while (exp) {
    if (exp & 1)
      result *= factor;
    factor *= factor;
    exp >>= 1;
  }
  return T(result);
}
__device__ __forceinline__ float infinity() {
#ifdef __CUDA_ARCH__
  return __int_as_float(0x7f800000);
#else
  return INFINITY;
#endif
}
__device__ __forceinline__ float quiet_nan() {
#ifdef __CUDA_ARCH__
  return __int_as_float(0x7fc00000);
#else
  return NAN;
#endif
}

//===----------------------------------------------------------------------===//
// Block reductions. blockDim.x is a power of two from 32 to 256; every
// thread of the block calls them and gets the result.
//===----------------------------------------------------------------------===//

struct Sum {
  __device__ __forceinline__ float operator()(float a, float b) const {
    return a + b;
  }
};
struct Prod {
  __device__ __forceinline__ float operator()(float a, float b) const {
    return a * b;
  }
};
struct Max {
  __device__ __forceinline__ float operator()(float a, float b) const {
    return max_(a, b);
  }
};

template <typename Op>
__device__ __forceinline__ float block_reduce(float v, Op op) {
  // Within each warp by shuffles (every lane ends with the warp's result),
  // then across the warps through shared memory. The emulation runs the
  // same steps (its __shfl_xor_sync exchanges through memory at barriers).
  __shared__ float partial[8];
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  unsigned warps = blockDim.x / 32;
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = v;
  __syncthreads();
  float r = partial[0];
  for (unsigned w = 1; w < warps; ++w)
    r = op(r, partial[w]);
  __syncthreads(); // `partial` is reused by the next reduction
  return r;
}

//===----------------------------------------------------------------------===//
// Row-wise kernels: one block per row.
//===----------------------------------------------------------------------===//

/// Softmax (or log-softmax) over the middle dimension of [outer, len, inner];
/// block b computes row b (outer index b / inner, inner index b % inner).
template <typename D>
__device__ __forceinline__ void softmax_row(const typename D::T *x,
                                            typename D::T *y, int64_t len,
                                            int64_t inner, bool log) {
  int64_t r = blockIdx.x;
  int64_t base = (r / inner) * len * inner + r % inner;
  const typename D::T *xr = x + base;
  typename D::T *yr = y + base;
  float m = -infinity();
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
    m = Max()(m, D::load(xr[j * inner]));
  m = block_reduce(m, Max());
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
    s += expf(D::load(xr[j * inner]) - m);
  s = block_reduce(s, Sum());
  if (log) {
    float lse = m + logf(s);
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
      yr[j * inner] = D::store(D::load(xr[j * inner]) - lse);
  } else {
    float inv = 1.0f / s;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
      yr[j * inner] = D::store(expf(D::load(xr[j * inner]) - m) * inv);
  }
}

/// Softmax (or log-softmax) over the middle dimension of [outer, len, inner]
/// when inner is 32 or more: a block of 256 threads takes 32 neighbouring
/// inner indices of one outer index (threadIdx.x % 32 along inner, so that
/// a warp reads 32 consecutive elements; threadIdx.x / 32 takes every 8th
/// element of the line), and the 8 partial results of each line meet in
/// shared memory. softmax_row would read each line with a stride of inner.
template <typename D>
__device__ __forceinline__ void softmax_columns(const typename D::T *x,
                                                typename D::T *y, int64_t len,
                                                int64_t inner, bool log) {
  __shared__ float part[8][33];
  const int64_t tiles = (inner + 31) / 32;
  const int64_t tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const int64_t o = blockIdx.x / tiles, i = blockIdx.x % tiles * 32 + tx;
  const bool live = i < inner;
  const typename D::T *xr = x + o * len * inner + i;
  typename D::T *yr = y + o * len * inner + i;
  float m = -infinity();
  if (live)
    for (int64_t j = ty; j < len; j += 8)
      m = Max()(m, D::load(xr[j * inner]));
  part[ty][tx] = m;
  __syncthreads();
  if (ty == 0) {
    for (int k = 1; k < 8; ++k)
      m = Max()(m, part[k][tx]);
    part[0][tx] = m;
  }
  __syncthreads();
  m = part[0][tx];
  __syncthreads(); // part is written again below
  float s = 0.0f;
  if (live)
    for (int64_t j = ty; j < len; j += 8)
      s += expf(D::load(xr[j * inner]) - m);
  part[ty][tx] = s;
  __syncthreads();
  if (ty == 0) {
    for (int k = 1; k < 8; ++k)
      s += part[k][tx];
    part[0][tx] = s;
  }
  __syncthreads();
  s = part[0][tx];
  if (!live)
    return;
  if (log) {
    float lse = m + logf(s);
    for (int64_t j = ty; j < len; j += 8)
      yr[j * inner] = D::store(D::load(xr[j * inner]) - lse);
  } else {
    float inv = 1.0f / s;
    for (int64_t j = ty; j < len; j += 8)
      yr[j * inner] = D::store(expf(D::load(xr[j * inner]) - m) * inv);
  }
}

/// Layer norm of row blockIdx.x of [rows, cols]; scale and bias may be null.
template <typename D>
__device__ __forceinline__ void
layer_norm_row(const typename D::T *x, const typename D::T *scale,
               const typename D::T *bias, typename D::T *y, int64_t cols,
               float epsilon) {
  const typename D::T *xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  typename D::T *yr = y + static_cast<int64_t>(blockIdx.x) * cols;
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    s += D::load(xr[j]);
  float mean = block_reduce(s, Sum()) / static_cast<float>(cols);
  float q = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float d = D::load(xr[j]) - mean;
    q += d * d;
  }
  float var = block_reduce(q, Sum()) / static_cast<float>(cols);
  float inv = 1.0f / sqrtf(var + epsilon);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float v = (D::load(xr[j]) - mean) * inv;
    if (scale)
      v *= D::load(scale[j]);
    if (bias)
      v += D::load(bias[j]);
    yr[j] = D::store(v);
  }
}

/// Mean of plane blockIdx.x of [planes, spatial].
template <typename D>
__device__ __forceinline__ void global_avg_pool_plane(const typename D::T *x,
                                                      typename D::T *y,
                                                      int64_t spatial) {
  const typename D::T *xp = x + static_cast<int64_t>(blockIdx.x) * spatial;
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < spatial; j += blockDim.x)
    s += D::load(xp[j]);
  s = block_reduce(s, Sum());
  if (threadIdx.x == 0)
    y[blockIdx.x] = D::store(s / static_cast<float>(spatial));
}

/// An error found by a kernel (an index out of range): the largest code
/// wins; the host reads the word after the run (0: none).
__device__ __forceinline__ void report_error(int *flag, int code) {
  atomicMax(flag, code);
}

} // namespace modelc_gpu

#endif // MODELC_KERNELS_CUDA_KERNELS_CUH
