// host_gemm.cpp - f32 GEMM on the host (modelc_runtime_api::sgemm):
// OpenBLAS single-threaded, split across the runtime's threads.
#include "host_gemm.hpp"

#include "parallel.hpp"

#include <algorithm>
#include <cblas.h>

namespace modelc::detail {

namespace {

void sgemmBlock(int transA, int transB, int64_t m, int64_t n, int64_t k,
                float alpha, const float *a, int64_t lda, const float *b,
                int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

} // namespace

void hostSgemm(int threads, int transA, int transB, int64_t m, int64_t n,
               int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  double flops = 2.0 * m * n * k;
  if (threads == 1 || flops < 4e6) {
    sgemmBlock(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  struct Args {
    int transA, transB;
    int64_t m, n, k;
    float alpha, beta;
    const float *a, *b;
    float *c;
    int64_t lda, ldb, ldc;
    bool byRows;
    int64_t parts;
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
          if (g.byRows)
            sgemmBlock(g.transA, g.transB, to - from, g.n, g.k, g.alpha,
                       g.transA ? g.a + from : g.a + from * g.lda, g.lda, g.b,
                       g.ldb, g.beta, g.c + from * g.ldc, g.ldc);
          else
            sgemmBlock(g.transA, g.transB, g.m, to - from, g.k, g.alpha, g.a,
                       g.lda, g.transB ? g.b + from * g.ldb : g.b + from, g.ldb,
                       g.beta, g.c + from, g.ldc);
        }
      },
      &args);
}

} // namespace modelc::detail
