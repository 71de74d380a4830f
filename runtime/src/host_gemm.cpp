// host_gemm.cpp - f32 GEMM on the host (modelc_runtime_api::sgemm):
// oneDNN's dnnl_sgemm single-threaded, split across the runtime's threads.
#include "host_gemm.hpp"

#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

namespace modelc::detail {

namespace {

/// One block on the calling thread (oneDNN's OpenMP team held to one
/// thread); 0 or oneDNN's status.
int sgemmBlock(int transA, int transB, int64_t m, int64_t n, int64_t k,
               float alpha, const float *a, int64_t lda, const float *b,
               int64_t ldb, float beta, float *c, int64_t ldc) {
  int previous = omp_get_max_threads();
  omp_set_num_threads(1);
  dnnl_status_t status = dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m,
                                    n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  omp_set_num_threads(previous);
  return status == dnnl_success ? 0 : static_cast<int>(status);
}

} // namespace

int hostSgemm(int threads, int transA, int transB, int64_t m, int64_t n,
              int64_t k, float alpha, const float *a, int64_t lda,
              const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return 0;
  double flops = 2.0 * m * n * k;
  if (threads == 1 || flops < 4e6)
    return sgemmBlock(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c,
                      ldc);
  struct Args {
    int transA, transB;
    int64_t m, n, k;
    float alpha, beta;
    const float *a, *b;
    float *c;
    int64_t lda, ldb, ldc;
    bool byRows;
    int64_t parts;
    std::atomic<int> status{0};
  } args{transA, transB, m, n,   k,   alpha, beta,
         a,      b,      c, lda, ldb, ldc,   n < 2 * threads * 16 && m >= n,
         threads};
  parallelFor(
      threads, args.parts, 1,
      [](void *p, int64_t begin, int64_t end) {
        auto &g = *static_cast<Args *>(p);
        for (int64_t part = begin; part < end; ++part) {
          int64_t total = g.byRows ? g.m : g.n;
          // Block boundaries on multiples of 16 keep the kernels' panels whole.
          int64_t step = ((total + g.parts - 1) / g.parts + 15) / 16 * 16;
          int64_t from = std::min(total, part * step);
          int64_t to = std::min(total, from + step);
          if (from >= to)
            continue;
          int status =
              g.byRows
                  ? sgemmBlock(g.transA, g.transB, to - from, g.n, g.k, g.alpha,
                               g.transA ? g.a + from : g.a + from * g.lda,
                               g.lda, g.b, g.ldb, g.beta, g.c + from * g.ldc,
                               g.ldc)
                  : sgemmBlock(g.transA, g.transB, g.m, to - from, g.k, g.alpha,
                               g.a, g.lda,
                               g.transB ? g.b + from * g.ldb : g.b + from,
                               g.ldb, g.beta, g.c + from, g.ldc);
          if (status)
            g.status.store(status);
        }
      },
      &args);
  return args.status.load();
}

} // namespace modelc::detail
