// kernels_products_test.cpp - linear, matmul (broadcast batches) and gemm
// (transposes, alpha, beta, a broadcast C) of compiler/kernels/cpu/kernels.h
// against double-precision loops. The test context's sgemm is itself a plain
// loop, so these check the kernels' layouts, strides and epilogues.
#include "kernel_test_context.h"

using modelc_test::expectNear;
using modelc_test::KernelTestContext;
using modelc_test::randomFloats;

TEST(CpuKernels, Linear) {
  const int64_t m = 5, n = 3, k = 7;
  std::vector<float> x = randomFloats(m * k, 71), w = randomFloats(n * k, 72),
                     bias = randomFloats(n, 73);
  for (bool withBias : {false, true}) {
    KernelTestContext ctx;
    std::vector<float> y(m * n, NAN);
    modelc_cpu::linear(ctx.get(), x.data(), w.data(),
                       withBias ? bias.data() : nullptr, y.data(), m, n, k);
    std::vector<double> want(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = withBias ? bias[j] : 0.0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(x[i * k + p]) * w[j * k + p];
        want[i * n + j] = sum;
      }
    SCOPED_TRACE(withBias ? "with bias" : "no bias");
    expectNear(y, want);
  }
}

TEST(CpuKernels, MatmulWithBroadcastBatches) {
  // a [2, 1, m, k] times b [3, k, n]: batches [2, 3]; a's second batch
  // dimension and b's first are broadcast (stride 0, in matrices).
  const int64_t m = 3, n = 5, k = 4;
  const int64_t batchDims[] = {2, 3};
  const int64_t aStrides[] = {1, 0}, bStrides[] = {0, 1};
  std::vector<float> a = randomFloats(2 * m * k, 81),
                     b = randomFloats(3 * k * n, 82);
  KernelTestContext ctx;
  std::vector<float> c(6 * m * n, NAN);
  modelc_cpu::matmul(ctx.get(), a.data(), b.data(), c.data(), m, n, k, 2,
                     batchDims, aStrides, bStrides);
  std::vector<double> want(c.size());
  for (int64_t b0 = 0; b0 < 2; ++b0)
    for (int64_t b1 = 0; b1 < 3; ++b1)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += double(a[(b0 * m + i) * k + p]) * b[(b1 * k + p) * n + j];
          want[((b0 * 3 + b1) * m + i) * n + j] = sum;
        }
  expectNear(c, want);
}

TEST(CpuKernels, MatmulWithoutBatch) {
  const int64_t m = 7, n = 2, k = 9;
  std::vector<float> a = randomFloats(m * k, 83), b = randomFloats(k * n, 84);
  KernelTestContext ctx;
  std::vector<float> c(m * n, NAN);
  modelc_cpu::matmul(ctx.get(), a.data(), b.data(), c.data(), m, n, k, 0,
                     nullptr, nullptr, nullptr);
  std::vector<double> want(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        want[i * n + j] += double(a[i * k + p]) * b[p * n + j];
  expectNear(c, want);
}

TEST(CpuKernels, Gemm) {
  const int64_t m = 4, n = 3, k = 5;
  // C shapes: none, [n] (a row), [m, 1] (a column), [m, n], [1, 1].
  struct CShape {
    const char *name;
    int64_t rows, cols;
  } cShapes[] = {{"no C", 0, 0},
                 {"C [n]", 1, n},
                 {"C [m, 1]", m, 1},
                 {"C [m, n]", m, n},
                 {"C [1, 1]", 1, 1}};
  std::vector<float> a = randomFloats(m * k, 91), b = randomFloats(k * n, 92),
                     cValues = randomFloats(m * n, 93);
  for (int transA : {0, 1})
    for (int transB : {0, 1})
      for (const CShape &cs : cShapes)
        for (float beta : {0.0f, 1.0f, -0.5f}) {
          SCOPED_TRACE(testing::Message()
                       << "trans_a " << transA << " trans_b " << transB << ", "
                       << cs.name << ", beta " << beta);
          const float alpha = 0.75f;
          const float *c = cs.rows ? cValues.data() : nullptr;
          KernelTestContext ctx;
          std::vector<float> y(m * n, NAN);
          modelc_cpu::gemm(ctx.get(), a.data(), b.data(), c, y.data(), m, n, k,
                           transA, transB, alpha, beta, cs.rows, cs.cols);
          std::vector<double> want(m * n);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double sum = 0;
              for (int64_t p = 0; p < k; ++p) {
                // a holds op(A) transposed when trans_a: [k, m].
                double av = transA ? a[p * m + i] : a[i * k + p];
                double bv = transB ? b[j * k + p] : b[p * n + j];
                sum += av * bv;
              }
              double cv = 0;
              if (c)
                cv = c[(cs.rows == 1 ? 0 : i) * cs.cols +
                       (cs.cols == 1 ? 0 : j)];
              want[i * n + j] = alpha * sum + beta * cv;
            }
          expectNear(y, want);
        }
}

/// Integer products wrap around modulo 2^bits, computed here in 128 bits
/// (exact) and reduced.
template <typename T> static T wrap(__int128 v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v)));
}

template <typename T> static std::vector<T> bigIntegers(size_t n, T scale) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<T>((static_cast<int64_t>(i * 7919 % 23) - 11) *
                          (scale / 16));
  return v;
}

template <typename T> static void checkIntMatmul() {
  // a [2, 1, m, k] times b [3, k, n] as in MatmulWithBroadcastBatches, with
  // values whose products overflow T.
  const int64_t m = 3, n = 5, k = 4;
  const int64_t batchDims[] = {2, 3};
  const int64_t aStrides[] = {1, 0}, bStrides[] = {0, 1};
  T big = std::numeric_limits<T>::max() / 3;
  std::vector<T> a = bigIntegers<T>(2 * m * k, big),
                 b = bigIntegers<T>(3 * k * n, T(big / 7));
  KernelTestContext ctx;
  std::vector<T> c(6 * m * n, T(-1));
  modelc_cpu::int_matmul(ctx.get(), a.data(), b.data(), c.data(), m, n, k, 2,
                         batchDims, aStrides, bStrides);
  for (int64_t b0 = 0; b0 < 2; ++b0)
    for (int64_t b1 = 0; b1 < 3; ++b1)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          __int128 sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += static_cast<__int128>(a[(b0 * m + i) * k + p]) *
                   b[(b1 * k + p) * n + j];
          EXPECT_EQ(c[((b0 * 3 + b1) * m + i) * n + j], wrap<T>(sum))
              << "batch " << b0 << "," << b1 << " at " << i << "," << j;
        }
}

TEST(CpuKernels, IntMatmulWrapsAround) {
  checkIntMatmul<int32_t>();
  checkIntMatmul<int64_t>();
}

template <typename T> static void checkIntGemm() {
  const int64_t m = 4, n = 3, k = 5;
  T big = std::numeric_limits<T>::max() / 5;
  std::vector<T> a = bigIntegers<T>(m * k, big),
                 b = bigIntegers<T>(k * n, T(big / 3)),
                 cValues = bigIntegers<T>(m * n, big);
  for (int transA : {0, 1})
    for (int transB : {0, 1})
      for (int64_t cCols : {int64_t(0), int64_t(1), n}) {
        SCOPED_TRACE(testing::Message() << "trans_a " << transA << " trans_b "
                                        << transB << ", C cols " << cCols);
        const T alpha = 3, beta = -2;
        const T *c = cCols ? cValues.data() : nullptr;
        KernelTestContext ctx;
        std::vector<T> y(m * n, T(-1));
        modelc_cpu::int_gemm<T>(ctx.get(), a.data(), b.data(), c, y.data(), m,
                                n, k, transA, transB, alpha, beta, m, cCols);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            __int128 sum = 0;
            for (int64_t p = 0; p < k; ++p)
              sum +=
                  static_cast<__int128>(transA ? a[p * m + i] : a[i * k + p]) *
                  (transB ? b[j * k + p] : b[p * n + j]);
            __int128 want = alpha * static_cast<__int128>(wrap<T>(sum));
            if (c)
              want += beta * static_cast<__int128>(
                                 c[i * cCols + (cCols == 1 ? 0 : j)]);
            EXPECT_EQ(y[i * n + j], wrap<T>(want)) << "at " << i << "," << j;
          }
      }
}

TEST(CpuKernels, IntGemmWrapsAround) {
  checkIntGemm<int32_t>();
  checkIntGemm<int64_t>();
}
