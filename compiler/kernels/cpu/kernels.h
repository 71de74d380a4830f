// kernels.h - CPU kernels that generated model code includes and calls.
//
// Header-only, C++17, no dependency beyond the C ABI header: everything the
// runtime provides (GEMM, the thread pool, error reporting) comes through
// modelc_run_ctx. Tensors are dense row-major f32 unless a template says
// otherwise. Each kernel splits its outer loop across the CPU pool.
#ifndef MODELC_KERNELS_CPU_KERNELS_H
#define MODELC_KERNELS_CPU_KERNELS_H

#include "common/philox.h"
#include "modelc/abi.h"
#include "modelc/half.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace modelc_cpu {

/// Runs f(begin, end) over chunks of [0, n) on the runtime's pool.
template <typename F>
inline void parallel_for(modelc_run_ctx *ctx, int64_t n, int64_t grain, F &&f) {
  using Fn = std::remove_reference_t<F>;
  ctx->api->parallel_for(
      ctx, n, grain,
      [](void *arg, int64_t begin, int64_t end) {
        (*static_cast<Fn *>(arg))(begin, end);
      },
      const_cast<void *>(static_cast<const void *>(&f)));
}

/// Elements per chunk so that a chunk has roughly `work` operations.
inline int64_t grain_for(int64_t cost_per_item, int64_t work = 32768) {
  return std::max<int64_t>(1, work / std::max<int64_t>(1, cost_per_item));
}

/// Offset into a broadcast operand for linear index `i` of the output.
/// `strides` has the output's rank; a broadcast dimension has stride 0.
inline int64_t broadcast_offset(int64_t i, int rank, const int64_t *out_dims,
                                const int64_t *strides) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t coord = i % out_dims[d];
    i /= out_dims[d];
    offset += coord * strides[d];
  }
  return offset;
}

/// e^x in f32 within 2 ulp of the rounded result, branch-free so that a
/// loop over it vectorises (std::exp is a call per element unless the
/// model is built with -ffast-math, which would break NaN): Cody and
/// Waite's reduction x = n ln 2 + r, |r| <= ln 2 / 2, Cephes' polynomial for
/// e^r, and 2^n as two exact power-of-two factors so that results in the
/// subnormal range round once. NaN stays NaN, e^x past FLT_MAX is +inf,
/// below half the smallest subnormal 0, e^-inf 0.
inline float exp_f32(float x) {
  // Past these, n reaches 128 (the result overflows to +inf) or -150 (it
  // rounds to 0); a NaN passes both comparisons and is returned below.
  float c = x > 89.0f ? 89.0f : x;
  c = c < -104.0f ? -104.0f : c;
  // n = round(c / ln 2): adding 1.5 * 2^23 rounds to an integer.
  float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = c - n * 0.693359375f; // exact: the constant has 9 bits
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float e = p * (r * r) + r + 1.0f;
  // 2^n = 2^n1 * 2^n2 with n1, n2 in [-75, 64]: both normal floats.
  int32_t ni = static_cast<int32_t>(n);
  int32_t n1 = ni / 2, n2 = ni - n1;
  uint32_t b1 = static_cast<uint32_t>(n1 + 127) << 23,
           b2 = static_cast<uint32_t>(n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  float result = e * s1 * s2;
  return x != x ? x : result;
}

// Float helpers in the type the loop computes in: float for f32/f16/bf16,
// double for f64.
template <typename T> inline T gelu_erf(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
template <typename T> inline T gelu_tanh(T x) {
  return T(0.5) * x *
         (T(1) +
          std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)));
}
template <typename T> inline T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

/// Maximum and minimum that propagate a NaN in either operand, as
/// torch.maximum, numpy.maximum and ONNX Max do (std::max drops one in `b`).
/// `b != b` is false for integers. The two comparisons are combined with a
/// bitwise `|`, not `||`, so there is no branch; still slower than maxss in
/// a hot loop (max_pool2d checks a plane for NaN once instead).
template <typename T> inline T max_(T a, T b) {
  return ((a < b) | (b != b)) ? b : a;
}
template <typename T> inline T min_(T a, T b) {
  return ((b < a) | (b != b)) ? b : a;
}

/// Integer division truncating toward zero; division by zero yields 0
/// (documented in docs/ir.md) instead of trapping, and INT_MIN / -1, which
/// overflows (SIGFPE on x86), wraps to INT_MIN as in PyTorch: dividing by -1
/// is a negation computed unsigned.
template <typename T> inline T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    if (b == T(-1))
      return T(0 - static_cast<uint64_t>(a));
  return b == 0 ? T(0) : T(a / b);
}

/// Integer remainder with the divisor's sign (Python's %, graph.mod); by
/// zero it yields 0, as int_div (docs/ir.md), and by -1 it is 0 without
/// computing INT_MIN % -1, which traps. Unsigned: the plain remainder.
template <typename T> inline T int_mod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == 0 || b == -1)
      return T(0);
    T r = T(a % b);
    return r != 0 && ((r < 0) != (b < 0)) ? T(r + b) : r;
  } else {
    return b == 0 ? T(0) : T(a % b);
  }
}

/// Integer remainder with the dividend's sign (C's %, graph.mod with fmod);
/// 0 by zero and by -1, as int_mod.
template <typename T> inline T int_fmod(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    return b == 0 || b == -1 ? T(0) : T(a % b);
  else
    return b == 0 ? T(0) : T(a % b);
}

/// graph.bit_shift: `a` shifted left or right by `n` bits; amounts of at
/// least T's width shift every bit out (a signed right shift keeps the
/// sign), negative amounts count as 0 (undefined in C++ and numpy).
template <typename T> inline T shift_left(T a, T n) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>)
    if (n < 0)
      return a;
  if (static_cast<uint64_t>(n) >= sizeof(T) * 8)
    return T(0);
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << n));
}
template <typename T> inline T shift_right(T a, T n) {
  if constexpr (std::is_signed_v<T>) {
    if (n < 0)
      return a;
    if (static_cast<uint64_t>(n) >= sizeof(T) * 8)
      return a < 0 ? T(-1) : T(0);
  } else if (static_cast<uint64_t>(n) >= sizeof(T) * 8) {
    return T(0);
  }
  return static_cast<T>(a >> n);
}

/// Integer power by squaring; negative exponents give 0 except for bases 1
/// and -1, as integer arithmetic in numpy. The product is computed unsigned,
/// so an overflow wraps (as numpy and PyTorch) instead of being undefined.
template <typename T> inline T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>)
    if (exp < 0)
      return base == 1 ? 1 : base == -1 ? ((exp & 1) ? -1 : 1) : 0;
  uint64_t result = 1, factor = static_cast<uint64_t>(base);
  while (exp) {
    if (exp & 1)
      result *= factor;
    factor *= factor;
    exp >>= 1;
  }
  return T(result);
}

/// f16/bf16 storage <-> f32 for kernels that compute in f32.
template <bool BF16>
inline void to_f32(modelc_run_ctx *ctx, const uint16_t *x, float *y,
                   int64_t n) {
  parallel_for(ctx, n, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = BF16 ? modelc::bf16_to_float(x[i]) : modelc::f16_to_float(x[i]);
  });
}
template <bool BF16>
inline void from_f32(modelc_run_ctx *ctx, const float *x, uint16_t *y,
                     int64_t n) {
  parallel_for(ctx, n, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = BF16 ? modelc::float_to_bf16(x[i]) : modelc::float_to_f16(x[i]);
  });
}

/// How a float tensor is stored: the row kernels below (softmax, norms,
/// pools) read and write any of them and compute in f32, so an f16 or bf16
/// tensor needs no f32 copy.
enum Storage { kF32 = 0, kF16 = 1, kBF16 = 2 };
template <int S> struct storage {
  using T = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
template <> struct storage<kF16> {
  using T = uint16_t;
  static float load(uint16_t v) { return modelc::f16_to_float(v); }
  static uint16_t store(float v) { return modelc::float_to_f16(v); }
};
template <> struct storage<kBF16> {
  using T = uint16_t;
  static float load(uint16_t v) { return modelc::bf16_to_float(v); }
  static uint16_t store(float v) { return modelc::float_to_bf16(v); }
};

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// Runs `one(i)` for each of `batches` products of `flops` each: many
/// small ones (attention heads) one per thread at a time, large ones one
/// after another, each split across the threads by the runtime's sgemm.
template <typename F>
inline void each_product(modelc_run_ctx *ctx, int64_t batches, double flops,
                         F &&one) {
  if (batches > 1 && flops < 8e6) {
    parallel_for(ctx, batches, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        one(i);
    });
  } else {
    for (int64_t i = 0; i < batches; ++i)
      one(i);
  }
}

/// c[i] = a[i] * b[i] for `batches` products of [M, K] by [K, N], each
/// operand read in place: matrix i at `stride` * i (0: the same one),
/// rows `ld` apart, stored transposed when `trans` (modelc-fold-gemm's
/// strided views; c is contiguous).
inline void strided_matmul(modelc_run_ctx *ctx, const float *a, int trans_a,
                           int64_t lda, int64_t stride_a, const float *b,
                           int trans_b, int64_t ldb, int64_t stride_b, float *c,
                           int64_t m, int64_t n, int64_t k, int64_t batches) {
  each_product(ctx, batches, 2.0 * m * n * k, [&](int64_t i) {
    ctx->api->sgemm(ctx, trans_a, trans_b, m, n, k, 1.0f, a + i * stride_a, lda,
                    b + i * stride_b, ldb, 0.0f, c + i * m * n, n);
  });
}

/// y[M, N] = x[M, K] * w[N, K]^T + bias[N] (bias may be null).
inline void linear(modelc_run_ctx *ctx, const float *x, const float *w,
                   const float *bias, float *y, int64_t m, int64_t n,
                   int64_t k) {
  float beta = 0.0f;
  if (bias) {
    parallel_for(ctx, m, grain_for(n), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        std::memcpy(y + i * n, bias, sizeof(float) * n);
    });
    beta = 1.0f;
  }
  ctx->api->sgemm(ctx, 0, 1, m, n, k, 1.0f, x, k, w, k, beta, y, n);
}

/// Batched c[b] = a[b] * b[b] with broadcast batch dimensions: batch b of the
/// output reads a at a_batch_stride-derived offsets.
inline void matmul(modelc_run_ctx *ctx, const float *a, const float *b,
                   float *c, int64_t m, int64_t n, int64_t k, int batch_rank,
                   const int64_t *batch_dims, const int64_t *a_strides,
                   const int64_t *b_strides) {
  int64_t batches = 1;
  for (int d = 0; d < batch_rank; ++d)
    batches *= batch_dims[d];
  each_product(ctx, batches, 2.0 * m * n * k, [&](int64_t i) {
    const float *ai =
        a + broadcast_offset(i, batch_rank, batch_dims, a_strides) * m * k;
    const float *bi =
        b + broadcast_offset(i, batch_rank, batch_dims, b_strides) * k * n;
    ctx->api->sgemm(ctx, 0, 0, m, n, k, 1.0f, ai, k, bi, n, 0.0f, c + i * m * n,
                    n);
  });
}

/// matmul of f16 or bf16 tensors: one batch at a time, its matrices
/// converted to f32 in `scratch` (m*k + k*n + m*n floats), multiplied by
/// the runtime's sgemm across the threads, the product rounded back.
template <int S>
inline void matmul_half(modelc_run_ctx *ctx, const uint16_t *a,
                        const uint16_t *b, uint16_t *c, int64_t m, int64_t n,
                        int64_t k, int batch_rank, const int64_t *batch_dims,
                        const int64_t *a_strides, const int64_t *b_strides,
                        float *scratch) {
  using D = storage<S>;
  int64_t batches = 1;
  for (int d = 0; d < batch_rank; ++d)
    batches *= batch_dims[d];
  float *af = scratch, *bf = af + m * k, *cf = bf + k * n;
  auto load = [&](const uint16_t *from, float *to, int64_t count) {
    parallel_for(ctx, count, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        to[i] = D::load(from[i]);
    });
  };
  for (int64_t i = 0; i < batches; ++i) {
    load(a + broadcast_offset(i, batch_rank, batch_dims, a_strides) * m * k, af,
         m * k);
    load(b + broadcast_offset(i, batch_rank, batch_dims, b_strides) * k * n, bf,
         k * n);
    ctx->api->sgemm(ctx, 0, 0, m, n, k, 1.0f, af, k, bf, n, 0.0f, cf, n);
    uint16_t *ci = c + i * m * n;
    parallel_for(ctx, m * n, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j)
        ci[j] = D::store(cf[j]);
    });
  }
}

/// y[M, N] = alpha * op(a) * op(b) + beta * c, c broadcast from c_dims
/// (rank <= 2, right-aligned; null when absent).
inline void gemm(modelc_run_ctx *ctx, const float *a, const float *b,
                 const float *c, float *y, int64_t m, int64_t n, int64_t k,
                 int trans_a, int trans_b, float alpha, float beta,
                 int64_t c_rows, int64_t c_cols) {
  float gemm_beta = 0.0f;
  if (c && beta != 0.0f) {
    parallel_for(ctx, m, grain_for(n), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        for (int64_t j = 0; j < n; ++j)
          y[i * n + j] =
              beta * c[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
    });
    gemm_beta = 1.0f;
  }
  ctx->api->sgemm(ctx, trans_a, trans_b, m, n, k, alpha, a, trans_a ? m : k, b,
                  trans_b ? k : n, gemm_beta, y, n);
}

/// Rows [begin, end) of the integer y[M, N] = op(a) * op(b), accumulated in
/// T's unsigned type: overflow wraps around (two's complement) instead of
/// being undefined.
/// What a product of T computes in: integers in their unsigned type
/// (wrapping around on overflow), f64 in double.
template <typename T, bool = std::is_integral_v<T>> struct product_type {
  using type = T;
};
template <typename T> struct product_type<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
inline void int_product_rows(const T *a, const T *b, T *y, int64_t begin,
                             int64_t end, int64_t m, int64_t n, int64_t k,
                             int trans_a, int trans_b) {
  using U = typename product_type<T>::type;
  for (int64_t i = begin; i < end; ++i) {
    // T and its unsigned type may alias each other.
    U *yi = reinterpret_cast<U *>(y + i * n);
    std::fill(yi, yi + n, U(0));
    for (int64_t p = 0; p < k; ++p) {
      const U aip = static_cast<U>(a[trans_a ? p * m + i : i * k + p]);
      for (int64_t j = 0; j < n; ++j)
        yi[j] += aip * static_cast<U>(b[trans_b ? j * k + p : p * n + j]);
    }
  }
}

/// matmul for integers (same arguments), wrapping around on overflow, and
/// for f64 (plain loops in double).
template <typename T>
inline void int_matmul(modelc_run_ctx *ctx, const T *a, const T *b, T *c,
                       int64_t m, int64_t n, int64_t k, int batch_rank,
                       const int64_t *batch_dims, const int64_t *a_strides,
                       const int64_t *b_strides) {
  int64_t batches = 1;
  for (int d = 0; d < batch_rank; ++d)
    batches *= batch_dims[d];
  // One task per output row of every batch.
  parallel_for(
      ctx, batches * m, grain_for(n * k), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end;) {
          int64_t i = r / m, row = r % m;
          int64_t rows = std::min(end - r, m - row);
          const T *ai =
              a +
              broadcast_offset(i, batch_rank, batch_dims, a_strides) * m * k;
          const T *bi =
              b +
              broadcast_offset(i, batch_rank, batch_dims, b_strides) * k * n;
          int_product_rows(ai, bi, c + i * m * n, row, row + rows, m, n, k, 0,
                           0);
          r += rows;
        }
      });
}

/// gemm for integers: y = alpha * op(a) * op(b) + beta * c with whole alpha
/// and beta, wrapping around on overflow; and for f64, in double.
template <typename T>
inline void int_gemm(modelc_run_ctx *ctx, const T *a, const T *b, const T *c,
                     T *y, int64_t m, int64_t n, int64_t k, int trans_a,
                     int trans_b, T alpha, T beta, int64_t c_rows,
                     int64_t c_cols) {
  using U = typename product_type<T>::type;
  parallel_for(ctx, m, grain_for(n * k), [&](int64_t begin, int64_t end) {
    int_product_rows(a, b, y, begin, end, m, n, k, trans_a, trans_b);
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j) {
        U v = static_cast<U>(alpha) * static_cast<U>(y[i * n + j]);
        if (c)
          v += static_cast<U>(beta) *
               static_cast<U>(
                   c[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)]);
        y[i * n + j] = static_cast<T>(v);
      }
  });
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// One contiguous f32 softmax (or log-softmax) row: x to y, computed in
/// vector-friendly passes (the maximum and the sum in 16 partial results,
/// the exps in a loop of their own). Built below for the baseline, AVX2
/// and AVX-512, as a function of each; model.so is built for the baseline
/// x86-64, and the row is what softmax spends its time in.
__attribute__((always_inline)) inline void
softmax_row_f32_body(const float *x, float *y, int64_t len, bool log) {
  constexpr int kLanes = 16;
  float part[kLanes];
  for (int k = 0; k < kLanes; ++k)
    part[k] = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  for (; j + kLanes <= len; j += kLanes)
    for (int k = 0; k < kLanes; ++k)
      part[k] = std::max(part[k], x[j + k]);
  float mx = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < kLanes; ++k)
    mx = std::max(mx, part[k]);
  for (; j < len; ++j)
    mx = std::max(mx, x[j]);
  for (j = 0; j < len; ++j)
    y[j] = exp_f32(x[j] - mx);
  for (int k = 0; k < kLanes; ++k)
    part[k] = 0.0f;
  for (j = 0; j + kLanes <= len; j += kLanes)
    for (int k = 0; k < kLanes; ++k)
      part[k] += y[j + k];
  float sum = 0.0f;
  for (int k = 0; k < kLanes; ++k)
    sum += part[k];
  for (; j < len; ++j)
    sum += y[j];
  if (log) {
    float lse = mx + std::log(sum);
    for (j = 0; j < len; ++j)
      y[j] = x[j] - lse;
  } else {
    float inv = 1.0f / sum;
    for (j = 0; j < len; ++j)
      y[j] *= inv;
  }
}

inline void softmax_row_f32_baseline(const float *x, float *y, int64_t len,
                                     bool log) {
  softmax_row_f32_body(x, y, len, log);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) inline void
softmax_row_f32_avx2(const float *x, float *y, int64_t len, bool log) {
  softmax_row_f32_body(x, y, len, log);
}
__attribute__((target("avx512f"))) inline void
softmax_row_f32_avx512(const float *x, float *y, int64_t len, bool log) {
  softmax_row_f32_body(x, y, len, log);
}
#endif

/// The build of the row for this CPU, chosen once (a function pointer, not
/// an ifunc, which sanitizers' runtimes do not survive).
inline void softmax_row_f32(const float *x, float *y, int64_t len, bool log) {
  using Row = void (*)(const float *, float *, int64_t, bool);
  static const Row row = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      return static_cast<Row>(softmax_row_f32_avx512);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return static_cast<Row>(softmax_row_f32_avx2);
#endif
    return static_cast<Row>(softmax_row_f32_baseline);
  }();
  row(x, y, len, log);
}

/// Softmax (or log-softmax) over the middle dimension of [outer, len, inner].
template <int S = kF32>
inline void softmax(modelc_run_ctx *ctx, const typename storage<S>::T *x,
                    typename storage<S>::T *y, int64_t outer, int64_t len,
                    int64_t inner, bool log) {
  using D = storage<S>;
  parallel_for(
      ctx, outer * inner, grain_for(len * 4), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t o = r / inner, in = r % inner;
          const typename D::T *xr = x + o * len * inner + in;
          typename D::T *yr = y + o * len * inner + in;
          if constexpr (S == kF32) {
            if (inner == 1) {
              softmax_row_f32(xr, yr, len, log);
              continue;
            }
          }
          float mx = -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j < len; ++j)
            mx = std::max(mx, D::load(xr[j * inner]));
          float sum = 0.0f;
          if constexpr (S == kF32) {
            // One exp per element, kept in y, then scaled.
            for (int64_t j = 0; j < len; ++j) {
              float e = exp_f32(xr[j * inner] - mx);
              yr[j * inner] = e;
              sum += e;
            }
          } else {
            // f16/bf16 would round a kept value twice: computed again below.
            for (int64_t j = 0; j < len; ++j)
              sum += exp_f32(D::load(xr[j * inner]) - mx);
          }
          if (log) {
            float lse = mx + std::log(sum);
            for (int64_t j = 0; j < len; ++j)
              yr[j * inner] = D::store(D::load(xr[j * inner]) - lse);
          } else {
            float inv = 1.0f / sum;
            for (int64_t j = 0; j < len; ++j) {
              if constexpr (S == kF32)
                yr[j * inner] *= inv;
              else
                yr[j * inner] =
                    D::store(exp_f32(D::load(xr[j * inner]) - mx) * inv);
            }
          }
        }
      });
}

/// The mean and the (biased) variance of one layer_norm row, in double:
/// each sum in eight partial sums (element j into sum j % 8, added
/// pairwise at the end), a fixed order, the same bits on every run and
/// thread count, that vectorises where one running double sum is a chain
/// of dependent additions (a 512-wide row: 38 us for 128 rows on two
/// threads, 5x the vector loop's).
template <typename D>
__attribute__((always_inline)) inline void
layer_norm_moments(const typename D::T *x, int64_t cols, double &mean,
                   double &var) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= cols; j += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += static_cast<double>(D::load(x[j + l]));
  for (int l = 0; j < cols; ++j, ++l)
    lanes[l] += static_cast<double>(D::load(x[j]));
  mean = (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
          ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))) /
         static_cast<double>(cols);
  for (int l = 0; l < kLanes; ++l)
    lanes[l] = 0.0;
  for (j = 0; j + kLanes <= cols; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      double d = static_cast<double>(D::load(x[j + l])) - mean;
      lanes[l] += d * d;
    }
  for (int l = 0; j < cols; ++j, ++l) {
    double d = static_cast<double>(D::load(x[j])) - mean;
    lanes[l] += d * d;
  }
  var = (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))) /
        static_cast<double>(cols);
}

/// One layer_norm row: x to y, scale and bias optional.
template <typename D>
__attribute__((always_inline)) inline void
layer_norm_row_body(const typename D::T *x, const typename D::T *scale,
                    const typename D::T *bias, typename D::T *y, int64_t cols,
                    float epsilon) {
  double mean, var;
  layer_norm_moments<D>(x, cols, mean, var);
  float inv = static_cast<float>(1.0 / std::sqrt(var + epsilon));
  float m = static_cast<float>(mean);
  for (int64_t j = 0; j < cols; ++j) {
    float v = (D::load(x[j]) - m) * inv;
    if (scale)
      v *= D::load(scale[j]);
    if (bias)
      v += D::load(bias[j]);
    y[j] = D::store(v);
  }
}

using LayerNormRowF32 = void (*)(const float *, const float *, const float *,
                                 float *, int64_t, float);
inline void layer_norm_row_f32_baseline(const float *x, const float *scale,
                                        const float *bias, float *y,
                                        int64_t cols, float epsilon) {
  layer_norm_row_body<storage<kF32>>(x, scale, bias, y, cols, epsilon);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) inline void
layer_norm_row_f32_avx2(const float *x, const float *scale, const float *bias,
                        float *y, int64_t cols, float epsilon) {
  layer_norm_row_body<storage<kF32>>(x, scale, bias, y, cols, epsilon);
}
__attribute__((target("avx512f"))) inline void
layer_norm_row_f32_avx512(const float *x, const float *scale, const float *bias,
                          float *y, int64_t cols, float epsilon) {
  layer_norm_row_body<storage<kF32>>(x, scale, bias, y, cols, epsilon);
}
#endif

/// The build of the f32 row for this CPU, chosen once (as softmax_row_f32).
inline LayerNormRowF32 layer_norm_row_f32() {
  static const LayerNormRowF32 row = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      return static_cast<LayerNormRowF32>(layer_norm_row_f32_avx512);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return static_cast<LayerNormRowF32>(layer_norm_row_f32_avx2);
#endif
    return static_cast<LayerNormRowF32>(layer_norm_row_f32_baseline);
  }();
  return row;
}

/// Normalizes each of `rows` rows of `cols` elements; scale/bias may be null.
template <int S = kF32>
inline void layer_norm(modelc_run_ctx *ctx, const typename storage<S>::T *x,
                       const typename storage<S>::T *scale,
                       const typename storage<S>::T *bias,
                       typename storage<S>::T *y, int64_t rows, int64_t cols,
                       float epsilon) {
  using D = storage<S>;
  parallel_for(ctx, rows, grain_for(cols * 4), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      if constexpr (S == kF32)
        layer_norm_row_f32()(x + r * cols, scale, bias, y + r * cols, cols,
                             epsilon);
      else
        layer_norm_row_body<D>(x + r * cols, scale, bias, y + r * cols, cols,
                               epsilon);
    }
  });
}

/// Inference batch norm of [N, C, spatial].
template <int S = kF32>
inline void batch_norm(modelc_run_ctx *ctx, const typename storage<S>::T *x,
                       const typename storage<S>::T *scale,
                       const typename storage<S>::T *bias,
                       const typename storage<S>::T *mean,
                       const typename storage<S>::T *variance,
                       typename storage<S>::T *y, int64_t n, int64_t c,
                       int64_t spatial, float epsilon) {
  using D = storage<S>;
  parallel_for(ctx, n * c, grain_for(spatial), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t ch = r % c;
      float a = D::load(scale[ch]) / std::sqrt(D::load(variance[ch]) + epsilon);
      float b = D::load(bias[ch]) - D::load(mean[ch]) * a;
      const typename D::T *xr = x + r * spatial;
      typename D::T *yr = y + r * spatial;
      for (int64_t j = 0; j < spatial; ++j)
        yr[j] = D::store(D::load(xr[j]) * a + b);
    }
  });
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW)
//===----------------------------------------------------------------------===//

/// The indices [first, last) of [0, count) whose position i * stride +
/// shift lies in [0, limit): the columns a convolution tap reads or writes
/// inside the image (first == last when there are none).
inline void strided_span(int64_t shift, int64_t stride, int64_t limit,
                         int64_t count, int64_t &first, int64_t &last) {
  first = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  last = limit - shift <= 0 ? 0 : (limit - shift + stride - 1) / stride;
  first = std::min(first, count);
  last = std::max(std::min(last, count), first);
}

struct Conv2dShape {
  int64_t n, c, h, w; // input
  int64_t o, kh, kw;  // weight [o, c/groups, kh, kw]
  int64_t oh, ow;     // output spatial
  int64_t stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
  int64_t groups;
};

/// Floats of scratch conv2d needs (0 for 1x1, stride 1, no padding).
inline int64_t conv2d_scratch_floats(const Conv2dShape &s) {
  bool direct = s.kh == 1 && s.kw == 1 && s.stride_h == 1 && s.stride_w == 1 &&
                s.pad_top == 0 && s.pad_left == 0 && s.oh == s.h && s.ow == s.w;
  return direct ? 0 : (s.c / s.groups) * s.kh * s.kw * s.oh * s.ow;
}

/// im2col + GEMM per image and group; `scratch` holds
/// conv2d_scratch_floats(s) floats.
/// The im2col columns of one image's group `xg` ([C/groups, H, W]) into
/// `cols` ([C/groups * KH * KW, OH * OW]), zeros where a tap reads padding.
inline void im2col(modelc_run_ctx *ctx, const float *xg, const Conv2dShape &s,
                   float *cols) {
  const int64_t cg = s.c / s.groups;
  const int64_t spatial = s.oh * s.ow, patch = cg * s.kh * s.kw;
  parallel_for(ctx, patch, grain_for(spatial), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t ci = row / (s.kh * s.kw);
      int64_t ky = (row / s.kw) % s.kh, kx = row % s.kw;
      float *dst = cols + row * spatial;
      const float *src = xg + ci * s.h * s.w;
      // Output columns whose input column lies inside the image
      // form one span [x0, x1): copied whole when the stride is 1.
      int64_t shift = kx * s.dilation_w - s.pad_left;
      int64_t x0, x1;
      strided_span(shift, s.stride_w, s.w, s.ow, x0, x1);
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        int64_t iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
        float *d = dst + oy * s.ow;
        if (iy < 0 || iy >= s.h) {
          std::fill(d, d + s.ow, 0.0f);
          continue;
        }
        const float *line = src + iy * s.w + shift;
        std::fill(d, d + x0, 0.0f);
        if (s.stride_w == 1)
          std::memcpy(d + x0, line + x0, sizeof(float) * (x1 - x0));
        else
          for (int64_t ox = x0; ox < x1; ++ox)
            d[ox] = line[ox * s.stride_w];
        std::fill(d + x1, d + s.ow, 0.0f);
      }
    }
  });
}

inline void conv2d(modelc_run_ctx *ctx, const float *x, const float *w,
                   const float *bias, float *y, const Conv2dShape &s,
                   float *scratch) {
  const int64_t cg = s.c / s.groups, og = s.o / s.groups;
  const int64_t spatial = s.oh * s.ow, patch = cg * s.kh * s.kw;
  const bool direct = conv2d_scratch_floats(s) == 0;
  for (int64_t img = 0; img < s.n; ++img) {
    for (int64_t g = 0; g < s.groups; ++g) {
      const float *xg = x + (img * s.c + g * cg) * s.h * s.w;
      const float *cols = xg;
      if (!direct) {
        im2col(ctx, xg, s, scratch);
        cols = scratch;
      }
      float *yg = y + (img * s.o + g * og) * spatial;
      const float *wg = w + g * og * patch;
      float beta = 0.0f;
      if (bias) {
        for (int64_t oc = 0; oc < og; ++oc)
          std::fill(yg + oc * spatial, yg + (oc + 1) * spatial,
                    bias[g * og + oc]);
        beta = 1.0f;
      }
      ctx->api->sgemm(ctx, 0, 0, og, spatial, patch, 1.0f, wg, patch, cols,
                      spatial, beta, yg, spatial);
    }
  }
}

/// conv2d's weight gradient: dW_g [O/groups, C/groups * KH * KW] summed
/// over the images of grad_g [O/groups, OH * OW] times the input's im2col
/// columns (transposed), one GEMM per image and group. `s` describes the
/// convolution (its output is the gradient's size); `scratch` holds one
/// group's columns (conv2d_scratch_floats, or none for a pointwise one).
inline void conv2d_weight_grad(modelc_run_ctx *ctx, const float *x,
                               const float *grad, float *dw,
                               const Conv2dShape &s, float *scratch) {
  const int64_t cg = s.c / s.groups, og = s.o / s.groups;
  const int64_t spatial = s.oh * s.ow, patch = cg * s.kh * s.kw;
  const bool direct = conv2d_scratch_floats(s) == 0;
  for (int64_t img = 0; img < s.n; ++img)
    for (int64_t g = 0; g < s.groups; ++g) {
      const float *xg = x + (img * s.c + g * cg) * s.h * s.w;
      const float *cols = xg;
      if (!direct) {
        im2col(ctx, xg, s, scratch);
        cols = scratch;
      }
      ctx->api->sgemm(ctx, 0, 1, og, patch, spatial, 1.0f,
                      grad + (img * s.o + g * og) * spatial, spatial, cols,
                      spatial, img == 0 ? 0.0f : 1.0f, dw + g * og * patch,
                      patch);
    }
}

struct ConvTranspose2dShape {
  int64_t n, c, h, w; // input
  int64_t o, kh, kw, oh, ow;
  int64_t stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
  int64_t groups;
};

/// Floats of scratch conv_transpose2d_gemm needs: one group's columns.
inline int64_t conv_transpose2d_scratch_floats(const ConvTranspose2dShape &s) {
  return (s.o / s.groups) * s.kh * s.kw * s.h * s.w;
}

/// Transposed convolution as a GEMM and col2im (what a convolution's input
/// gradient is): per image and group, the columns W_g^T X_g ([O/groups *
/// KH * KW, H * W]) in `scratch`, then each output plane, owned by one
/// task, adds its kernel taps' rows at their strided places.
inline void conv_transpose2d_gemm(modelc_run_ctx *ctx, const float *x,
                                  const float *w, const float *bias, float *y,
                                  const ConvTranspose2dShape &s,
                                  float *scratch) {
  const int64_t cg = s.c / s.groups, og = s.o / s.groups, plane = s.oh * s.ow;
  const int64_t taps = s.kh * s.kw, spatial = s.h * s.w;
  for (int64_t img = 0; img < s.n; ++img)
    for (int64_t g = 0; g < s.groups; ++g) {
      const float *xg = x + (img * s.c + g * cg) * spatial;
      const float *wg = w + g * cg * og * taps;
      ctx->api->sgemm(ctx, 1, 0, og * taps, spatial, cg, 1.0f, wg, og * taps,
                      xg, spatial, 0.0f, scratch, spatial);
      parallel_for(
          ctx, og, grain_for(taps * spatial), [&](int64_t begin, int64_t end) {
            for (int64_t ocl = begin; ocl < end; ++ocl) {
              const int64_t oc = g * og + ocl;
              float *yp = y + (img * s.o + oc) * plane;
              std::fill(yp, yp + plane, bias ? bias[oc] : 0.0f);
              for (int64_t ky = 0; ky < s.kh; ++ky)
                for (int64_t kx = 0; kx < s.kw; ++kx) {
                  const float *src =
                      scratch + ((ocl * s.kh + ky) * s.kw + kx) * spatial;
                  const int64_t shift = kx * s.dilation_w - s.pad_left;
                  int64_t x0, x1;
                  strided_span(shift, s.stride_w, s.ow, s.w, x0, x1);
                  if (x1 == x0)
                    continue;
                  for (int64_t iy = 0; iy < s.h; ++iy) {
                    const int64_t oy =
                        iy * s.stride_h - s.pad_top + ky * s.dilation_h;
                    if (oy < 0 || oy >= s.oh)
                      continue;
                    float *row = yp + oy * s.ow + shift;
                    const float *in = src + iy * s.w;
                    if (s.stride_w == 1)
                      for (int64_t ix = x0; ix < x1; ++ix)
                        row[ix] += in[ix];
                    else
                      for (int64_t ix = x0; ix < x1; ++ix)
                        row[ix * s.stride_w] += in[ix];
                  }
                }
            }
          });
    }
}

/// Transposed convolution, NCHW, weight [C, O/groups, KH, KW] (as
/// graph.conv_transpose2d). Each output plane (image, output channel) is
/// owned by one task, which adds every input plane of its group into it,
/// one kernel tap at a time: no scratch, no atomics. The direct kernel,
/// for small transposed convolutions; conv_transpose2d_gemm otherwise.
inline void conv_transpose2d(modelc_run_ctx *ctx, const float *x,
                             const float *w, const float *bias, float *y,
                             const ConvTranspose2dShape &s) {
  const int64_t cg = s.c / s.groups, og = s.o / s.groups, plane = s.oh * s.ow;
  parallel_for(ctx, s.n * s.o, grain_for(cg * s.kh * s.kw * s.h * s.w),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   const int64_t img = p / s.o, oc = p % s.o;
                   const int64_t g = oc / og, ocl = oc % og;
                   float *yp = y + p * plane;
                   std::fill(yp, yp + plane, bias ? bias[oc] : 0.0f);
                   for (int64_t ci = g * cg; ci < (g + 1) * cg; ++ci) {
                     const float *xp = x + (img * s.c + ci) * s.h * s.w;
                     const float *wp = w + (ci * og + ocl) * s.kh * s.kw;
                     for (int64_t ky = 0; ky < s.kh; ++ky)
                       for (int64_t kx = 0; kx < s.kw; ++kx) {
                         const float wv = wp[ky * s.kw + kx];
                         // Input columns [x0, x1) land inside the output row.
                         const int64_t shift = kx * s.dilation_w - s.pad_left;
                         int64_t x0, x1;
                         strided_span(shift, s.stride_w, s.ow, s.w, x0, x1);
                         if (x1 == x0)
                           continue;
                         for (int64_t iy = 0; iy < s.h; ++iy) {
                           const int64_t oy =
                               iy * s.stride_h - s.pad_top + ky * s.dilation_h;
                           if (oy < 0 || oy >= s.oh)
                             continue;
                           float *row = yp + oy * s.ow;
                           const float *in = xp + iy * s.w;
                           for (int64_t ix = x0; ix < x1; ++ix)
                             row[ix * s.stride_w + shift] += wv * in[ix];
                         }
                       }
                   }
                 }
               });
}

struct Pool2dShape {
  int64_t n, c, h, w, oh, ow;
  int64_t kh, kw, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right;
};

/// One cell of each of the windows lo..hi of a row (window ox's at
/// xp[at + ox * step]; at + lo * step >= 0) into the windows' maxima `m`,
/// ignoring NaN (maxss's choice); nonzero when a cell was NaN, so that the
/// caller redoes the plane NaN-propagating. Pointer parameters:
/// `__restrict` lets GCC vectorise the loop.
template <typename T, typename Load>
__attribute__((always_inline)) inline unsigned
max_pool_row_body(const T *__restrict xp, int64_t at, float *__restrict m,
                  int64_t lo, int64_t hi, int64_t step, Load load) {
  unsigned nan = 0;
  for (int64_t ox = lo; ox < hi; ++ox) {
    float v = load(xp[at + ox * step]);
    nan |= v != v;
    m[ox] = m[ox] < v ? v : m[ox];
  }
  return nan;
}

inline unsigned max_pool_row_f32_baseline(const float *xp, int64_t at, float *m,
                                          int64_t lo, int64_t hi,
                                          int64_t step) {
  return max_pool_row_body(xp, at, m, lo, hi, step, [](float v) { return v; });
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) inline unsigned
max_pool_row_f32_avx2(const float *xp, int64_t at, float *m, int64_t lo,
                      int64_t hi, int64_t step) {
  return max_pool_row_body(xp, at, m, lo, hi, step, [](float v) { return v; });
}
__attribute__((target("avx512f"))) inline unsigned
max_pool_row_f32_avx512(const float *xp, int64_t at, float *m, int64_t lo,
                        int64_t hi, int64_t step) {
  return max_pool_row_body(xp, at, m, lo, hi, step, [](float v) { return v; });
}
#endif

/// max_pool_row_body for this CPU (f32), chosen once as softmax_row_f32.
inline unsigned max_pool_row_f32(const float *xp, int64_t at, float *m,
                                 int64_t lo, int64_t hi, int64_t step) {
  using Row =
      unsigned (*)(const float *, int64_t, float *, int64_t, int64_t, int64_t);
  static const Row row = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      return static_cast<Row>(max_pool_row_f32_avx512);
    if (__builtin_cpu_supports("avx2"))
      return static_cast<Row>(max_pool_row_f32_avx2);
#endif
    return static_cast<Row>(max_pool_row_f32_baseline);
  }();
  return row(xp, at, m, lo, hi, step);
}

template <int S>
inline unsigned max_pool_row(const typename storage<S>::T *xp, int64_t at,
                             float *m, int64_t lo, int64_t hi, int64_t step) {
  if constexpr (S == kF32)
    return max_pool_row_f32(xp, at, m, lo, hi, step);
  else
    return max_pool_row_body(
        xp, at, m, lo, hi, step,
        [](typename storage<S>::T v) { return storage<S>::load(v); });
}

template <int S = kF32>
inline void max_pool2d(modelc_run_ctx *ctx, const typename storage<S>::T *x,
                       typename storage<S>::T *y, const Pool2dShape &s) {
  using D = storage<S>;
  // One plane: the maximum as maxss computes it (rows, below) or, when a
  // window read a NaN, again NaN-propagating (this). max_ in the hot loop
  // itself cost ResNet-18 1.7 ms.
  auto pool = [&](const typename D::T *xp, typename D::T *yp, auto pick) {
    for (int64_t oy = 0; oy < s.oh; ++oy)
      for (int64_t ox = 0; ox < s.ow; ++ox) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t ky = 0; ky < s.kh; ++ky) {
          int64_t iy = oy * s.stride_h - s.pad_top + ky;
          if (iy < 0 || iy >= s.h)
            continue;
          for (int64_t kx = 0; kx < s.kw; ++kx) {
            int64_t ix = ox * s.stride_w - s.pad_left + kx;
            if (ix >= 0 && ix < s.w)
              m = pick(m, D::load(xp[iy * s.w + ix]));
          }
        }
        yp[oy * s.ow + ox] = D::store(m);
      }
  };
  // Without NaN, a row's windows that lie inside the plane are found side
  // by side, cell by cell, in a loop that vectorises (as max_pool2d_grad).
  const int64_t lo = std::min(s.ow, (s.pad_left + s.stride_w - 1) / s.stride_w);
  const int64_t hi = std::max(
      lo, std::min(s.ow, s.w - s.kw + s.pad_left >= 0
                             ? (s.w - s.kw + s.pad_left) / s.stride_w + 1
                             : 0));
  // Whether a cell a window read was NaN: the plane is then done again,
  // NaN-propagating (a NaN no window reads changes nothing).
  auto rows = [&](const typename D::T *xp, typename D::T *yp,
                  float *m) -> unsigned {
    unsigned nan = 0;
    auto pick = [&](float a, float v) {
      nan |= v != v;
      return a < v ? v : a;
    };
    for (int64_t oy = 0; oy < s.oh; ++oy) {
      int64_t y0 = std::max<int64_t>(oy * s.stride_h - s.pad_top, 0);
      int64_t y1 = std::min(oy * s.stride_h - s.pad_top + s.kh, s.h);
      for (int64_t ox = 0; ox < s.ow; ++ox) {
        if (ox == lo)
          ox = hi;
        if (ox >= s.ow)
          break;
        int64_t x0 = std::max<int64_t>(ox * s.stride_w - s.pad_left, 0);
        int64_t x1 = std::min(ox * s.stride_w - s.pad_left + s.kw, s.w);
        float b = -std::numeric_limits<float>::infinity();
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix)
            b = pick(b, D::load(xp[iy * s.w + ix]));
        m[ox] = b;
      }
      std::fill(m + lo, m + hi, -std::numeric_limits<float>::infinity());
      for (int64_t iy = y0; iy < y1 && lo < hi; ++iy)
        for (int64_t kx = 0; kx < s.kw; ++kx)
          nan |= max_pool_row<S>(xp, iy * s.w + kx - s.pad_left, m, lo, hi,
                                 s.stride_w);
      for (int64_t ox = 0; ox < s.ow; ++ox)
        yp[oy * s.ow + ox] = D::store(m[ox]);
    }
    return nan;
  };
  parallel_for(ctx, s.n * s.c, grain_for(s.oh * s.ow * s.kh * s.kw),
               [&](int64_t begin, int64_t end) {
                 std::vector<float> row(s.ow);
                 for (int64_t p = begin; p < end; ++p) {
                   const typename D::T *xp = x + p * s.h * s.w;
                   typename D::T *yp = y + p * s.oh * s.ow;
                   if (rows(xp, yp, row.data()))
                     pool(xp, yp, [](float m, float v) { return max_(m, v); });
                 }
               });
}

/// One cell of each of the windows lo..hi of a row (the cell of the first
/// window at `row`, the others `step` apart): where it is larger than the
/// window's best so far, or NaN, it becomes the best. The pointers are
/// parameters so that `__restrict` lets GCC vectorise the loop.
template <int S>
inline void max_pool_cells(const typename storage<S>::T *__restrict xp,
                           float *__restrict best, int32_t *__restrict inner,
                           int64_t lo, int64_t hi, int32_t row, int32_t step) {
  using D = storage<S>;
  for (int64_t ox = lo; ox < hi; ++ox) {
    const int32_t cell = row + static_cast<int32_t>(ox) * step;
    float v = D::load(xp[cell]);
    bool take = (v > best[ox]) | (v != v);
    best[ox] = take ? v : best[ox];
    inner[ox] = take ? cell : inner[ox];
  }
}

/// max_pool2d's input gradient: per plane, each window's gradient added to
/// its maximum (the first largest cell, or the last NaN, as PyTorch); `s`
/// describes the pooling (oh, ow: the gradient's size).
template <int S = kF32>
inline void max_pool2d_grad(modelc_run_ctx *ctx,
                            const typename storage<S>::T *x,
                            const typename storage<S>::T *g,
                            typename storage<S>::T *dx, const Pool2dShape &s) {
  using D = storage<S>;
  // Each plane is zeroed, then every window's gradient added at its
  // maximum, in window order. A row of windows finds its maxima first: the
  // windows that lie inside the plane side by side, cell by cell in window
  // order, so that the loop over them vectorises (one window's cells are a
  // chain of dependent selects); the ones at the edges one at a time.
  // Positions within a plane are int32 in the vectorised loop (as wide as
  // the floats compared); planes of 2^31 cells or more take the edge path.
  const bool narrow = s.h * s.w < (int64_t{1} << 31);
  const int64_t lo =
      narrow ? std::min(s.ow, (s.pad_left + s.stride_w - 1) / s.stride_w) : 0;
  const int64_t hi =
      narrow ? std::max(
                   lo, std::min(s.ow,
                                s.w - s.kw + s.pad_left >= 0
                                    ? (s.w - s.kw + s.pad_left) / s.stride_w + 1
                                    : 0))
             : 0;
  parallel_for(ctx, s.n * s.c, grain_for(s.oh * s.ow * s.kh * s.kw),
               [&](int64_t begin, int64_t end) {
                 std::vector<float> bestRow(s.ow);
                 std::vector<int32_t> innerRow(s.ow);
                 std::vector<int64_t> atRow(s.ow);
                 float *best = bestRow.data();
                 int32_t *inner = innerRow.data();
                 int64_t *at = atRow.data();
                 for (int64_t p = begin; p < end; ++p) {
                   const typename D::T *xp = x + p * s.h * s.w;
                   const typename D::T *gp = g + p * s.oh * s.ow;
                   typename D::T *dp = dx + p * s.h * s.w;
                   std::fill(dp, dp + s.h * s.w, D::store(0.0f));
                   for (int64_t oy = 0; oy < s.oh; ++oy) {
                     int64_t y0 = oy * s.stride_h - s.pad_top;
                     int64_t y1 = std::min(y0 + s.kh, s.h);
                     y0 = std::max<int64_t>(y0, 0);
                     for (int64_t ox = 0; ox < s.ow; ++ox) {
                       if (ox == lo)
                         ox = hi;
                       if (ox >= s.ow)
                         break;
                       int64_t x0 = ox * s.stride_w - s.pad_left;
                       int64_t x1 = std::min(x0 + s.kw, s.w);
                       x0 = std::max<int64_t>(x0, 0);
                       float b = -std::numeric_limits<float>::infinity();
                       int64_t a = y0 * s.w + x0;
                       for (int64_t iy = y0; iy < y1; ++iy)
                         for (int64_t ix = x0; ix < x1; ++ix) {
                           float v = D::load(xp[iy * s.w + ix]);
                           bool take = (v > b) | (v != v);
                           b = take ? v : b;
                           a = take ? iy * s.w + ix : a;
                         }
                       at[ox] = a;
                     }
                     for (int64_t ox = lo; ox < hi; ++ox) {
                       best[ox] = -std::numeric_limits<float>::infinity();
                       inner[ox] = static_cast<int32_t>(
                           y0 * s.w + ox * s.stride_w - s.pad_left);
                     }
                     for (int64_t iy = y0; iy < y1; ++iy)
                       for (int64_t kx = 0; kx < s.kw; ++kx) {
                         const int32_t row =
                             static_cast<int32_t>(iy * s.w + kx - s.pad_left);
                         max_pool_cells<S>(xp, best, inner, lo, hi, row,
                                           static_cast<int32_t>(s.stride_w));
                       }
                     for (int64_t ox = lo; ox < hi; ++ox)
                       at[ox] = inner[ox];
                     for (int64_t ox = 0; ox < s.ow; ++ox)
                       dp[at[ox]] = D::store(D::load(dp[at[ox]]) +
                                             D::load(gp[oy * s.ow + ox]));
                   }
                 }
               });
}

template <int S = kF32>
inline void avg_pool2d(modelc_run_ctx *ctx, const typename storage<S>::T *x,
                       typename storage<S>::T *y, const Pool2dShape &s,
                       bool count_include_pad) {
  using D = storage<S>;
  parallel_for(ctx, s.n * s.c, grain_for(s.oh * s.ow * s.kh * s.kw),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   const typename D::T *xp = x + p * s.h * s.w;
                   typename D::T *yp = y + p * s.oh * s.ow;
                   for (int64_t oy = 0; oy < s.oh; ++oy)
                     for (int64_t ox = 0; ox < s.ow; ++ox) {
                       int64_t y0 = oy * s.stride_h - s.pad_top;
                       int64_t x0 = ox * s.stride_w - s.pad_left;
                       // As PyTorch: the padded window is clipped to input +
                       // padding.
                       int64_t y1 = std::min(y0 + s.kh, s.h + s.pad_bottom);
                       int64_t x1 = std::min(x0 + s.kw, s.w + s.pad_right);
                       int64_t padded = (y1 - y0) * (x1 - x0);
                       double sum = 0.0;
                       int64_t count = 0;
                       for (int64_t iy = std::max<int64_t>(y0, 0);
                            iy < std::min(y1, s.h); ++iy)
                         for (int64_t ix = std::max<int64_t>(x0, 0);
                              ix < std::min(x1, s.w); ++ix) {
                           sum += D::load(xp[iy * s.w + ix]);
                           ++count;
                         }
                       int64_t divisor = count_include_pad ? padded : count;
                       yp[oy * s.ow + ox] = D::store(
                           divisor ? static_cast<float>(sum / divisor) : 0.0f);
                     }
                 }
               });
}

template <int S = kF32>
inline void
global_avg_pool(modelc_run_ctx *ctx, const typename storage<S>::T *x,
                typename storage<S>::T *y, int64_t planes, int64_t spatial) {
  using D = storage<S>;
  parallel_for(
      ctx, planes, grain_for(spatial), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          double sum = 0.0;
          for (int64_t j = 0; j < spatial; ++j)
            sum += D::load(x[p * spatial + j]);
          y[p] =
              D::store(static_cast<float>(sum / static_cast<double>(spatial)));
        }
      });
}

//===----------------------------------------------------------------------===//
// Data movement (any element type: T is the storage type)
//===----------------------------------------------------------------------===//

/// y = transpose(x, perm); in_strides[d] is the input stride of output dim d.
template <typename T>
inline void transpose(modelc_run_ctx *ctx, const T *x, T *y, int rank,
                      const int64_t *out_dims, const int64_t *in_strides) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d)
    total *= out_dims[d];
  int64_t inner = rank ? out_dims[rank - 1] : 1;
  int64_t inner_stride = rank ? in_strides[rank - 1] : 1;
  int64_t rows = inner ? total / inner : 0;
  parallel_for(ctx, rows, grain_for(inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t base = broadcast_offset(r, rank - 1, out_dims, in_strides);
      T *dst = y + r * inner;
      for (int64_t j = 0; j < inner; ++j)
        dst[j] = x[base + j * inner_stride];
    }
  });
}

/// Copies x [outer, x_inner] into columns [offset, offset + x_inner) of y
/// [outer, y_inner]: one input of a concat.
template <typename T>
inline void copy_columns(modelc_run_ctx *ctx, const T *x, T *y, int64_t outer,
                         int64_t x_inner, int64_t y_inner, int64_t offset) {
  parallel_for(ctx, outer, grain_for(x_inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      std::memcpy(y + r * y_inner + offset, x + r * x_inner,
                  sizeof(T) * x_inner);
  });
}

/// y = x[start_d + i * step_d] per dimension; one row (the innermost
/// dimension) at a time, copied whole when its step is 1.
template <typename T>
inline void slice(modelc_run_ctx *ctx, const T *x, T *y, int rank,
                  const int64_t *out_dims, const int64_t *in_strides,
                  const int64_t *starts, const int64_t *steps) {
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  int64_t inner = out_dims[rank - 1];
  int64_t rows = 1;
  for (int d = 0; d < rank - 1; ++d)
    rows *= out_dims[d];
  int64_t base = 0;
  for (int d = 0; d < rank; ++d)
    base += starts[d] * in_strides[d];
  int64_t step_strides[16];
  for (int d = 0; d < rank && d < 16; ++d)
    step_strides[d] = in_strides[d] * steps[d];
  int64_t inner_step = step_strides[rank - 1];
  parallel_for(ctx, rows, grain_for(inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T *src =
          x + base + broadcast_offset(r, rank - 1, out_dims, step_strides);
      T *dst = y + r * inner;
      if (inner_step == 1)
        std::memcpy(dst, src, sizeof(T) * inner);
      else
        for (int64_t j = 0; j < inner; ++j)
          dst[j] = src[j * inner_step];
    }
  });
}

/// graph.scatter_nd: y = data, then each of `rows` index tuples (`k`
/// numbers, addressing the first `k` of `dims`, row-major strides
/// `strides`) in order writes (R = 0) or combines (1 add, 2 mul, 3 max, 4
/// min; max and min keep a NaN of either side) its slice of `slice`
/// elements of `updates`. Rows run in order (a later row addressing the
/// same slice wins): the result does not depend on threads. Every index is
/// checked before anything is written.
template <int R, typename T, typename I>
inline int scatter_nd(modelc_run_ctx *ctx, const T *data, const I *indices,
                      const T *updates, T *y, const int64_t *dims,
                      const int64_t *strides, int64_t k, int64_t rows,
                      int64_t slice, int64_t total, const char *what) {
  for (int64_t i = 0; i < rows * k; ++i) {
    int64_t bound = dims[i % k];
    if (indices[i] < -bound || indices[i] >= bound) {
      ctx->api->report_error(
          ctx, (std::string(what) + ": an index is out of range").c_str());
      return 1;
    }
  }
  if (y != data)
    parallel_for(ctx, total, grain_for(1), [&](int64_t begin, int64_t end) {
      std::memcpy(y + begin, data + begin, sizeof(T) * (end - begin));
    });
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t index = static_cast<int64_t>(indices[r * k + d]);
      offset += (index < 0 ? index + dims[d] : index) * strides[d];
    }
    T *to = y + offset;
    const T *from = updates + r * slice;
    for (int64_t j = 0; j < slice; ++j) {
      T a = to[j], b = from[j];
      if constexpr (R == 0)
        to[j] = b;
      else if constexpr (R == 1)
        to[j] = static_cast<T>(a + b);
      else if constexpr (R == 2)
        to[j] = static_cast<T>(a * b);
      else if constexpr (R == 3)
        to[j] = (a < b || b != b) ? b : a;
      else
        to[j] = (b < a || b != b) ? b : a;
    }
  }
  return 0;
}

/// y[o, i, in] = data[o, index[i], in] for data [outer, axis_dim, inner].
template <typename T, typename I>
inline int gather(modelc_run_ctx *ctx, const T *data, const I *indices, T *y,
                  int64_t outer, int64_t axis_dim, int64_t inner,
                  int64_t num_indices, const char *what = "graph.gather") {
  for (int64_t i = 0; i < num_indices; ++i)
    if (indices[i] < -axis_dim || indices[i] >= axis_dim) {
      ctx->api->report_error(
          ctx, (std::string(what) + ": an index is out of range").c_str());
      return 1;
    }
  parallel_for(ctx, outer * num_indices, grain_for(inner),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   int64_t o = r / num_indices, i = r % num_indices;
                   int64_t idx = static_cast<int64_t>(indices[i]);
                   if (idx < 0)
                     idx += axis_dim;
                   std::memcpy(y + r * inner,
                               data + (o * axis_dim + idx) * inner,
                               sizeof(T) * inner);
                 }
               });
  return 0;
}

/// gather's data gradient: dx [outer, axis_dim, inner] zeroed, then each
/// index's slice of g [outer, num_indices, inner] added at its row. A task
/// owns a block of one outer index's columns and adds the indices in order:
/// no atomics, the same sums on any thread count. Indices out of range
/// (which the forward gather reported) are skipped.
template <int S = kF32, typename I>
inline void gather_grad(modelc_run_ctx *ctx, const typename storage<S>::T *g,
                        const I *indices, typename storage<S>::T *dx,
                        int64_t outer, int64_t axis_dim, int64_t inner,
                        int64_t num_indices) {
  using D = storage<S>;
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  parallel_for(ctx, outer * blocks, grain_for(num_indices * kBlock),
               [&](int64_t begin, int64_t end) {
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t o = t / blocks, j0 = (t % blocks) * kBlock;
                   const int64_t width = std::min(kBlock, inner - j0);
                   typename D::T *block = dx + o * axis_dim * inner + j0;
                   for (int64_t v = 0; v < axis_dim; ++v)
                     std::fill(block + v * inner, block + v * inner + width,
                               D::store(0.0f));
                   for (int64_t i = 0; i < num_indices; ++i) {
                     int64_t idx = static_cast<int64_t>(indices[i]);
                     if (idx < 0)
                       idx += axis_dim;
                     if (idx < 0 || idx >= axis_dim)
                       continue;
                     const typename D::T *row =
                         g + (o * num_indices + i) * inner + j0;
                     typename D::T *to = block + idx * inner;
                     for (int64_t j = 0; j < width; ++j)
                       to[j] = D::store(D::load(to[j]) + D::load(row[j]));
                   }
                 }
               });
}

/// graph.dropout with its step (training): y[i] = x[i] * (keep ? 1 / (1 -
/// ratio) : 0), keep drawn by Philox (common/philox.h) from (seed, *step,
/// site, offset + i): the same mask in any thread split (and, with a
/// replica's offset, the whole batch's mask in each replica).
template <int S>
inline void dropout(modelc_run_ctx *ctx, const typename storage<S>::T *x,
                    const int64_t *step, typename storage<S>::T *y, int64_t n,
                    float ratio, uint64_t seed, uint32_t site,
                    int64_t offset = 0) {
  using D = storage<S>;
  const int64_t count = *step;
  const float scale = modelc_philox::dropout_scale(ratio);
  parallel_for(ctx, n, grain_for(64), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = D::store(D::load(x[i]) * (modelc_philox::dropout_keep(
                                           seed, count, site, offset + i, ratio)
                                           ? scale
                                           : 0.0f));
  });
}

/// What a sum or product of T accumulates in: double for floats, the
/// unsigned type for integers (overflow wraps around instead of being
/// undefined).
template <typename T, bool = std::is_integral_v<T>> struct accumulator {
  using type = double;
};
template <typename T> struct accumulator<T, true> {
  using type = std::make_unsigned_t<T>;
};

/// A sum computed in double stored as T: integers wrap around to T's width
/// (as an integer sum would) instead of the undefined conversion of an
/// out-of-range double.
template <typename T> inline T from_sum(double v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(v)));
  else
    return static_cast<T>(v);
}

/// Reduction over some axes (kind: 0 sum, 1 mean, 2 max, 3 product). Output
/// element r
/// reads the input at kept_strides-derived base offset plus every offset of
/// the reduced dimensions.
template <typename T>
inline void reduce(modelc_run_ctx *ctx, const T *x, T *y, int kept_rank,
                   const int64_t *kept_dims, const int64_t *kept_strides,
                   int reduced_rank, const int64_t *reduced_dims,
                   const int64_t *reduced_strides, int kind) {
  int64_t outputs = 1, len = 1;
  for (int d = 0; d < kept_rank; ++d)
    outputs *= kept_dims[d];
  for (int d = 0; d < reduced_rank; ++d)
    len *= reduced_dims[d];
  // Leading dimensions reduced, trailing ones kept (a bias's gradient, a
  // sum over the batch): output r is column r of a [len, outputs] matrix.
  // Rows are added into a block of columns at a time, reading memory in
  // order; each output still sums its rows first to last.
  bool columns = kind <= 1;
  int64_t stride = 1;
  for (int d = kept_rank - 1; d >= 0 && columns; --d) {
    columns = kept_strides[d] == stride || kept_dims[d] == 1;
    stride *= kept_dims[d];
  }
  for (int d = reduced_rank - 1; d >= 0 && columns; --d) {
    columns = reduced_strides[d] == stride || reduced_dims[d] == 1;
    stride *= reduced_dims[d];
  }
  if (columns && outputs > 1) {
    parallel_for(ctx, outputs, grain_for(len), [&](int64_t begin, int64_t end) {
      constexpr int64_t kBlock = 256;
      double acc[kBlock];
      for (int64_t c0 = begin; c0 < end; c0 += kBlock) {
        const int64_t width = std::min(kBlock, end - c0);
        std::fill(acc, acc + width, 0.0);
        for (int64_t j = 0; j < len; ++j) {
          const T *row = x + j * outputs + c0;
          for (int64_t c = 0; c < width; ++c)
            acc[c] += static_cast<double>(row[c]);
        }
        for (int64_t c = 0; c < width; ++c)
          y[c0 + c] = from_sum<T>(kind == 1 ? acc[c] / static_cast<double>(len)
                                            : acc[c]);
      }
    });
    return;
  }
  parallel_for(ctx, outputs, grain_for(len), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T *xr = x + broadcast_offset(r, kept_rank, kept_dims, kept_strides);
      if (kind == 2) {
        T m = xr[0];
        for (int64_t j = 1; j < len; ++j)
          m = max_(m, xr[broadcast_offset(j, reduced_rank, reduced_dims,
                                          reduced_strides)]);
        y[r] = m;
      } else if (kind == 3) {
        using A = typename accumulator<T>::type;
        A p = 1;
        for (int64_t j = 0; j < len; ++j)
          p *= static_cast<A>(xr[broadcast_offset(j, reduced_rank, reduced_dims,
                                                  reduced_strides)]);
        y[r] = static_cast<T>(p);
      } else {
        // The trailing reduced dimensions that are contiguous in memory
        // are one run read in a plain loop (BatchNorm's gradient sums over
        // N, H, W: runs of H * W); the same order as element by element.
        int lead = reduced_rank;
        int64_t run = 1;
        while (lead > 0 && reduced_strides[lead - 1] == run) {
          run *= reduced_dims[lead - 1];
          --lead;
        }
        // Eight partial sums, element k of a run into sum k % 8, added
        // pairwise at the end: a fixed order (the same bits on every run
        // and thread count) that vectorises, where one running sum is a
        // chain of dependent additions.
        constexpr int kLanes = 8;
        double lanes[kLanes] = {};
        for (int64_t j = 0; j < len; j += run) {
          const T *xs = xr + broadcast_offset(j / run, lead, reduced_dims,
                                              reduced_strides);
          int64_t k = 0;
          for (; k + kLanes <= run; k += kLanes)
            for (int l = 0; l < kLanes; ++l)
              lanes[l] += static_cast<double>(xs[k + l]);
          for (int l = 0; k < run; ++k, ++l)
            lanes[l] += static_cast<double>(xs[k]);
        }
        double sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                     ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
        if (kind == 1)
          sum /= static_cast<double>(len);
        y[r] = from_sum<T>(sum);
      }
    }
  });
}

/// Cumulative sum along the middle dimension of [outer, len, inner]:
/// `exclusive` leaves each element out of its own sum, `reverse` sums from
/// the end. Floats add in double, integers wrap around.
template <typename T>
inline void cumsum(modelc_run_ctx *ctx, const T *x, T *y, int64_t outer,
                   int64_t len, int64_t inner, bool exclusive, bool reverse) {
  using A = typename accumulator<T>::type;
  parallel_for(ctx, outer * inner, grain_for(len),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const int64_t o = r / inner, in = r % inner;
                   A sum = 0;
                   for (int64_t step = 0; step < len; ++step) {
                     const int64_t j = reverse ? len - 1 - step : step;
                     const int64_t at = (o * len + j) * inner + in;
                     const A v = static_cast<A>(x[at]);
                     if (!exclusive)
                       sum += v;
                     y[at] = static_cast<T>(sum);
                     if (exclusive)
                       sum += v;
                   }
                 }
               });
}

/// Cross-entropy of logits [n, c] against class indices (reduction: 0 none,
/// 1 mean, 2 sum).
template <typename I>
inline int cross_entropy(modelc_run_ctx *ctx, const float *logits,
                         const I *targets, const float *weight, float *y,
                         int64_t n, int64_t c, int reduction,
                         int64_t ignore_index,
                         const char *what = "graph.cross_entropy") {
  double total = 0.0, weight_sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t t = static_cast<int64_t>(targets[i]);
    if (t == ignore_index) {
      if (reduction == 0)
        y[i] = 0.0f;
      continue;
    }
    if (t < 0 || t >= c) {
      ctx->api->report_error(
          ctx, (std::string(what) + ": a target is out of range").c_str());
      return 1;
    }
    const float *row = logits + i * c;
    float mx = *std::max_element(row, row + c);
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(static_cast<double>(row[j] - mx));
    double loss = -(row[t] - mx - std::log(sum));
    double w = weight ? weight[t] : 1.0;
    if (reduction == 0)
      y[i] = static_cast<float>(w * loss);
    total += w * loss;
    weight_sum += w;
  }
  if (reduction == 1)
    y[0] =
        static_cast<float>(weight_sum != 0 ? total / weight_sum : std::nan(""));
  else if (reduction == 2)
    y[0] = static_cast<float>(total);
  return 0;
}

} // namespace modelc_cpu

#endif // MODELC_KERNELS_CPU_KERNELS_H
