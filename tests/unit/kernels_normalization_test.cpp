// kernels_normalization_test.cpp - softmax, log_softmax, layer_norm,
// batch_norm and cross_entropy of compiler/kernels/cpu/kernels.h against
// double-precision loops.
#include "kernel_test_context.h"

#include <limits>

using modelc_test::expectNear;
using modelc_test::KernelTestContext;
using modelc_test::randomFloats;

namespace {

std::vector<double> referenceSoftmax(const std::vector<float> &x, int64_t outer,
                                     int64_t len, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + in; };
      double mx = -INFINITY;
      for (int64_t j = 0; j < len; ++j)
        mx = std::max(mx, double(x[at(j)]));
      double sum = 0.0;
      for (int64_t j = 0; j < len; ++j)
        sum += std::exp(double(x[at(j)]) - mx);
      for (int64_t j = 0; j < len; ++j)
        y[at(j)] = log ? double(x[at(j)]) - mx - std::log(sum)
                       : std::exp(double(x[at(j)]) - mx) / sum;
    }
  return y;
}

} // namespace

TEST(CpuKernels, SoftmaxOverEachAxis) {
  // [3, 5, 7]: the last axis (inner 1), the middle one, the first one.
  struct Case {
    int64_t outer, len, inner;
  } cases[] = {{15, 7, 1}, {3, 5, 7},   {1, 3, 35}, {1, 1, 1},
               {2, 1, 3},  {9, 128, 1}, // the vector row: 16-lane blocks
               {4, 37, 1}, {2, 16, 1},  // and a tail, or none
               {2, 33, 3}};
  for (const Case &c : cases)
    for (bool log : {false, true}) {
      KernelTestContext ctx;
      std::vector<float> x =
          randomFloats(c.outer * c.len * c.inner, 7, -8.0f, 8.0f);
      std::vector<float> y(x.size(), NAN);
      modelc_cpu::softmax(ctx.get(), x.data(), y.data(), c.outer, c.len,
                          c.inner, log);
      SCOPED_TRACE(testing::Message()
                   << "outer " << c.outer << " len " << c.len << " inner "
                   << c.inner << (log ? " log" : ""));
      expectNear(y, referenceSoftmax(x, c.outer, c.len, c.inner, log), 1e-5,
                 1e-6);
    }
}

TEST(CpuKernels, SoftmaxOfLargeValuesDoesNotOverflow) {
  KernelTestContext ctx;
  std::vector<float> x = {1000.0f, 999.0f, -1000.0f, 88.0f, 89.0f, 90.0f};
  std::vector<float> y(6), logY(6);
  modelc_cpu::softmax(ctx.get(), x.data(), y.data(), 2, 3, 1, false);
  modelc_cpu::softmax(ctx.get(), x.data(), logY.data(), 2, 3, 1, true);
  expectNear(y, referenceSoftmax(x, 2, 3, 1, false));
  // log_softmax computes x - (max + log(sum)) in float, so its error is about
  // half an ulp of the largest logit (3e-5 at 1000), not of the result.
  expectNear(logY, referenceSoftmax(x, 2, 3, 1, true), 1e-5, 4e-5);
}

TEST(CpuKernels, SoftmaxKeepsNaNAndMaskedEntries) {
  // Rows of 40 (the vector row's blocks and tail): one with a NaN, one
  // masked to -inf but for two entries, one all -inf (NaN, as in PyTorch).
  const int64_t len = 40;
  std::vector<float> x = randomFloats(3 * len, 5, -4.0f, 4.0f);
  x[23] = NAN;
  for (int64_t j = 0; j < len; ++j)
    x[len + j] = j == 3 || j == 38 ? 0.5f : -INFINITY;
  for (int64_t j = 0; j < len; ++j)
    x[2 * len + j] = -INFINITY;
  for (bool log : {false, true}) {
    KernelTestContext ctx;
    std::vector<float> y(x.size(), 0.0f);
    modelc_cpu::softmax(ctx.get(), x.data(), y.data(), 3, len, 1, log);
    SCOPED_TRACE(log ? "log_softmax" : "softmax");
    for (int64_t j = 0; j < len; ++j) {
      EXPECT_TRUE(std::isnan(y[j])) << "row 0, " << j;
      float masked = j == 3 || j == 38 ? (log ? std::log(0.5f) : 0.5f)
                                       : (log ? -INFINITY : 0.0f);
      EXPECT_FLOAT_EQ(y[len + j], masked) << "row 1, " << j;
      EXPECT_TRUE(std::isnan(y[2 * len + j])) << "row 2, " << j;
    }
  }
}

TEST(CpuKernels, SoftmaxRowOfEachBuild) {
  // Each build of the vector row this CPU runs, not only the one chosen.
  using Row = void (*)(const float *, float *, int64_t, bool);
  std::vector<std::pair<const char *, Row>> builds = {
      {"baseline", modelc_cpu::softmax_row_f32_baseline}};
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    builds.push_back({"avx2", modelc_cpu::softmax_row_f32_avx2});
  if (__builtin_cpu_supports("avx512f"))
    builds.push_back({"avx512", modelc_cpu::softmax_row_f32_avx512});
#endif
  for (int64_t len : {1, 15, 16, 37, 128})
    for (bool log : {false, true})
      for (auto &[name, row] : builds) {
        std::vector<float> x = randomFloats(len, 17, -30.0f, 30.0f);
        std::vector<float> y(len, NAN);
        row(x.data(), y.data(), len, log);
        SCOPED_TRACE(testing::Message()
                     << name << " len " << len << (log ? " log" : ""));
        expectNear(y, referenceSoftmax(x, 1, len, 1, log), 1e-5, 1e-6);
      }
}

TEST(CpuKernels, LayerNorm) {
  const int64_t rows = 5, cols = 13;
  const float epsilon = 1e-3f;
  std::vector<float> x = randomFloats(rows * cols, 11, -3.0f, 5.0f);
  std::vector<float> scale = randomFloats(cols, 12),
                     bias = randomFloats(cols, 13);
  for (bool affine : {false, true}) {
    KernelTestContext ctx;
    std::vector<float> y(x.size(), NAN);
    modelc_cpu::layer_norm(ctx.get(), x.data(), affine ? scale.data() : nullptr,
                           affine ? bias.data() : nullptr, y.data(), rows, cols,
                           epsilon);
    std::vector<double> want(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < cols; ++j)
        mean += x[r * cols + j];
      mean /= cols;
      for (int64_t j = 0; j < cols; ++j)
        var += (x[r * cols + j] - mean) * (x[r * cols + j] - mean);
      var /= cols;
      for (int64_t j = 0; j < cols; ++j) {
        double v = (x[r * cols + j] - mean) / std::sqrt(var + epsilon);
        want[r * cols + j] = affine ? v * scale[j] + bias[j] : v;
      }
    }
    SCOPED_TRACE(affine ? "with scale and bias" : "plain");
    expectNear(y, want, 1e-5, 1e-5);
  }
}

TEST(CpuKernels, LayerNormOfAConstantRowIsBias) {
  KernelTestContext ctx;
  std::vector<float> x(7, 3.25f), scale(7, 2.0f), bias = randomFloats(7, 3);
  std::vector<float> y(7, NAN);
  modelc_cpu::layer_norm(ctx.get(), x.data(), scale.data(), bias.data(),
                         y.data(), 1, 7, 1e-5f);
  expectNear(y, std::vector<double>(bias.begin(), bias.end()));
}

TEST(CpuKernels, BatchNorm) {
  const int64_t n = 3, c = 5, spatial = 7;
  const float epsilon = 1e-5f;
  std::vector<float> x = randomFloats(n * c * spatial, 21, -2.0f, 2.0f);
  std::vector<float> scale = randomFloats(c, 22), bias = randomFloats(c, 23),
                     mean = randomFloats(c, 24),
                     variance = randomFloats(c, 25, 0.1f, 3.0f);
  KernelTestContext ctx;
  std::vector<float> y(x.size(), NAN);
  modelc_cpu::batch_norm(ctx.get(), x.data(), scale.data(), bias.data(),
                         mean.data(), variance.data(), y.data(), n, c, spatial,
                         epsilon);
  std::vector<double> want(x.size());
  for (int64_t img = 0; img < n; ++img)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s) {
        int64_t i = (img * c + ch) * spatial + s;
        want[i] = (x[i] - double(mean[ch])) /
                      std::sqrt(double(variance[ch]) + epsilon) * scale[ch] +
                  bias[ch];
      }
  expectNear(y, want, 1e-5, 1e-5);
}

namespace {

/// PyTorch's cross_entropy with class-index targets, in double.
std::vector<double> referenceCrossEntropy(const std::vector<float> &logits,
                                          const std::vector<int64_t> &targets,
                                          const float *weight, int64_t c,
                                          int reduction, int64_t ignore) {
  int64_t n = static_cast<int64_t>(targets.size());
  std::vector<double> losses(n, 0.0);
  double total = 0, weights = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (targets[i] == ignore)
      continue;
    double sum = 0;
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(double(logits[i * c + j]));
    double w = weight ? weight[targets[i]] : 1.0;
    losses[i] = w * (std::log(sum) - logits[i * c + targets[i]]);
    total += losses[i];
    weights += w;
  }
  if (reduction == 0)
    return losses;
  return {reduction == 1 ? total / weights : total};
}

} // namespace

TEST(CpuKernels, CrossEntropy) {
  const int64_t n = 6, c = 5;
  std::vector<float> logits = randomFloats(n * c, 31, -4.0f, 4.0f);
  std::vector<float> weight = randomFloats(c, 32, 0.5f, 2.0f);
  std::vector<int64_t> targets = {0, 4, 2, -100, 1, 4};
  std::vector<int32_t> targets32(targets.begin(), targets.end());
  for (int reduction : {0, 1, 2})
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(testing::Message() << "reduction " << reduction
                                      << (weighted ? ", weighted" : ""));
      const float *w = weighted ? weight.data() : nullptr;
      std::vector<double> want =
          referenceCrossEntropy(logits, targets, w, c, reduction, -100);
      KernelTestContext ctx;
      std::vector<float> y(want.size(), NAN), y32(want.size(), NAN);
      EXPECT_EQ(modelc_cpu::cross_entropy<int64_t>(ctx.get(), logits.data(),
                                                   targets.data(), w, y.data(),
                                                   n, c, reduction, -100),
                0);
      EXPECT_EQ(modelc_cpu::cross_entropy<int32_t>(
                    ctx.get(), logits.data(), targets32.data(), w, y32.data(),
                    n, c, reduction, -100),
                0);
      expectNear(y, want, 1e-5, 1e-6);
      expectNear(y32, want, 1e-5, 1e-6);
      EXPECT_TRUE(ctx.state.errors.empty());
    }
}

TEST(CpuKernels, CrossEntropyAllIgnoredMeanIsNaN) {
  KernelTestContext ctx;
  std::vector<float> logits = randomFloats(2 * 3, 33);
  std::vector<int64_t> targets = {1, 1};
  float y = 0.0f;
  EXPECT_EQ(modelc_cpu::cross_entropy<int64_t>(ctx.get(), logits.data(),
                                               targets.data(), nullptr, &y, 2,
                                               3, 1, 1),
            0);
  EXPECT_TRUE(std::isnan(y));
}

TEST(CpuKernels, CrossEntropyTargetOutOfRange) {
  for (int64_t bad : {5, -1}) {
    KernelTestContext ctx;
    std::vector<float> logits = randomFloats(2 * 5, 34);
    std::vector<int64_t> targets = {1, bad};
    std::vector<float> y(2);
    EXPECT_EQ(modelc_cpu::cross_entropy<int64_t>(ctx.get(), logits.data(),
                                                 targets.data(), nullptr,
                                                 y.data(), 2, 5, 0, -100),
              1);
    ASSERT_EQ(ctx.state.errors.size(), 1u);
    EXPECT_EQ(ctx.state.errors[0],
              "graph.cross_entropy: a target is out of range");
  }
}
