// kernel_test_context.h - a minimal modelc_run_ctx for testing the CPU kernel
// templates (compiler/kernels/cpu/kernels.h) alone: a plain-loop sgemm, a
// parallel_for that runs uneven chunks in reverse order (a kernel must not
// depend on chunk order or size), and report_error that keeps the message.
#ifndef MODELC_TESTS_UNIT_KERNEL_TEST_CONTEXT_H
#define MODELC_TESTS_UNIT_KERNEL_TEST_CONTEXT_H

#include "cpu/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace modelc_test {

/// What the callbacks saw, reachable from ctx->runtime.
struct KernelTestState {
  std::vector<std::string> errors;
  int64_t parallelCalls = 0;
};

/// A run context whose callbacks are plain loops.
class KernelTestContext {
public:
  KernelTestContext() {
    api.struct_size = sizeof(api);
    api.sgemm = sgemm;
    api.parallel_for = parallelFor;
    api.report_error = reportError;
    ctx.api = &api;
    ctx.runtime = &state;
  }
  KernelTestContext(const KernelTestContext &) = delete;
  KernelTestContext &operator=(const KernelTestContext &) = delete;

  modelc_run_ctx *get() { return &ctx; }
  KernelTestState state;

private:
  /// Row-major C = alpha * op(A) * op(B) + beta * C, accumulated in double.
  static void sgemm(modelc_run_ctx *, int transA, int transB, int64_t m,
                    int64_t n, int64_t k, float alpha, const float *a,
                    int64_t lda, const float *b, int64_t ldb, float beta,
                    float *c, int64_t ldc) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          double av = transA ? a[p * lda + i] : a[i * lda + p];
          double bv = transB ? b[j * ldb + p] : b[p * ldb + j];
          sum += av * bv;
        }
        double prior = beta == 0.0f ? 0.0 : beta * double(c[i * ldc + j]);
        c[i * ldc + j] = static_cast<float>(alpha * sum + prior);
      }
  }

  /// Chunks of `grain`, then a ragged last one, run last to first.
  static void parallelFor(modelc_run_ctx *ctx, int64_t n, int64_t grain,
                          void (*fn)(void *, int64_t, int64_t), void *arg) {
    static_cast<KernelTestState *>(ctx->runtime)->parallelCalls++;
    EXPECT_GE(grain, 1);
    int64_t chunk = grain < 1 ? 1 : grain;
    std::vector<std::pair<int64_t, int64_t>> chunks;
    for (int64_t begin = 0; begin < n; begin += chunk)
      chunks.push_back({begin, std::min(n, begin + chunk)});
    for (auto it = chunks.rbegin(); it != chunks.rend(); ++it)
      fn(arg, it->first, it->second);
  }

  static void reportError(modelc_run_ctx *ctx, const char *message) {
    static_cast<KernelTestState *>(ctx->runtime)->errors.push_back(message);
  }

  modelc_runtime_api api{};
  modelc_run_ctx ctx{};
};

/// `count` floats uniform in [low, high), from `seed`.
inline std::vector<float> randomFloats(size_t count, uint32_t seed,
                                       float low = -1.0f, float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(count);
  for (float &v : values)
    v = dist(rng);
  return values;
}

/// Every element of `got` within atol + rtol * |want| of `want`.
inline void expectNear(const std::vector<float> &got,
                       const std::vector<double> &want, double rtol = 1e-5,
                       double atol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i]))
        << "element " << i;
}

} // namespace modelc_test

#endif // MODELC_TESTS_UNIT_KERNEL_TEST_CONTEXT_H
