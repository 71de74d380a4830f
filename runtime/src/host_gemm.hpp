// host_gemm.hpp - f32 GEMM on the host (modelc_runtime_api::sgemm):
// oneDNN's dnnl_sgemm single-threaded, split across the runtime's threads.
#ifndef MODELC_RUNTIME_HOST_GEMM_HPP
#define MODELC_RUNTIME_HOST_GEMM_HPP

#include <cstdint>

namespace modelc::detail {

/// Row-major C = alpha * op(A) * op(B) + beta * C on `threads` threads
/// (parallelFor): each block is one single-threaded dnnl_sgemm, and the
/// columns of C (or its rows, when C is tall and narrow) are split across
/// the threads. One set of threads for everything: no BLAS workers spinning
/// while other loops run on the same cores. Returns 0, or the status of a
/// block oneDNN refused.
int hostSgemm(int threads, int transA, int transB, int64_t m, int64_t n,
              int64_t k, float alpha, const float *a, int64_t lda,
              const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_HOST_GEMM_HPP
