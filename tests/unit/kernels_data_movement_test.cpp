// kernels_data_movement_test.cpp - transpose, slice, copy_columns, gather
// and scatter_nd (with index errors), reduce and cumsum of
// compiler/kernels/cpu/kernels.h
// against plain loops, for float and integer element types.
#include "kernel_test_context.h"

#include <numeric>

using modelc_test::expectNear;
using modelc_test::KernelTestContext;
using modelc_test::randomFloats;

namespace {

/// 0, 1, 2, ... as T: every element tells where it came from.
template <typename T> std::vector<T> iota(size_t count) {
  std::vector<T> values(count);
  std::iota(values.begin(), values.end(), T(0));
  return values;
}

} // namespace

TEST(CpuKernels, Transpose) {
  // x [2, 3, 5] -> perm [2, 0, 1] -> [5, 2, 3]; in_strides[d] is the input
  // stride of output dimension d.
  const int64_t inDims[] = {2, 3, 5}, inStrides[] = {15, 5, 1};
  const int perm[] = {2, 0, 1};
  int64_t outDims[3], strides[3];
  for (int d = 0; d < 3; ++d) {
    outDims[d] = inDims[perm[d]];
    strides[d] = inStrides[perm[d]];
  }
  std::vector<int32_t> x = iota<int32_t>(30), y(30, -1);
  KernelTestContext ctx;
  modelc_cpu::transpose<int32_t>(ctx.get(), x.data(), y.data(), 3, outDims,
                                 strides);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_EQ(y[(i * 2 + j) * 3 + k], x[j * 15 + k * 5 + i])
            << i << "," << j << "," << k;
}

TEST(CpuKernels, TransposeOfAMatrixAndOfAScalar) {
  const int64_t outDims[] = {3, 7}, strides[] = {1, 3};
  std::vector<uint16_t> x = iota<uint16_t>(21), y(21);
  KernelTestContext ctx;
  modelc_cpu::transpose<uint16_t>(ctx.get(), x.data(), y.data(), 2, outDims,
                                  strides);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 7; ++j)
      EXPECT_EQ(y[i * 7 + j], x[j * 3 + i]);
  float scalar = 2.5f, out = 0.0f;
  modelc_cpu::transpose<float>(ctx.get(), &scalar, &out, 0, nullptr, nullptr);
  EXPECT_EQ(out, 2.5f);
}

TEST(CpuKernels, Slice) {
  // x [4, 6, 7]: rows 1, 2, 3; columns 1, 3, 5 (start 1, step 2); depth 2, 5
  // (start 2, step 3).
  const int64_t inStrides[] = {42, 7, 1};
  const int64_t outDims[] = {3, 3, 2}, starts[] = {1, 1, 2},
                steps[] = {1, 2, 3};
  std::vector<int64_t> x = iota<int64_t>(4 * 42), y(18, -1);
  KernelTestContext ctx;
  modelc_cpu::slice<int64_t>(ctx.get(), x.data(), y.data(), 3, outDims,
                             inStrides, starts, steps);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 2; ++k)
        EXPECT_EQ(y[(i * 3 + j) * 2 + k],
                  x[(1 + i) * 42 + (1 + 2 * j) * 7 + (2 + 3 * k)]);
}

TEST(CpuKernels, SliceWithUnitInnerStepAndRankZero) {
  // The innermost step 1 is a whole-row copy.
  const int64_t inStrides[] = {5, 1}, outDims[] = {2, 3}, starts[] = {1, 2},
                steps[] = {2, 1};
  std::vector<float> x = randomFloats(20, 101), y(6, NAN);
  KernelTestContext ctx;
  modelc_cpu::slice<float>(ctx.get(), x.data(), y.data(), 2, outDims, inStrides,
                           starts, steps);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(y[i * 3 + j], x[(1 + 2 * i) * 5 + 2 + j]);
  float scalar = -1.5f, out = 0.0f;
  modelc_cpu::slice<float>(ctx.get(), &scalar, &out, 0, nullptr, nullptr,
                           nullptr, nullptr);
  EXPECT_EQ(out, -1.5f);
}

TEST(CpuKernels, CopyColumnsBuildsAConcat) {
  // concat([3, 2], [3, 5], [3, 1]) along axis 1 = [3, 8].
  std::vector<int32_t> a = iota<int32_t>(6), b = iota<int32_t>(15),
                       c = {100, 200, 300}, y(24, -1);
  for (int32_t &v : b)
    v += 1000;
  KernelTestContext ctx;
  modelc_cpu::copy_columns<int32_t>(ctx.get(), a.data(), y.data(), 3, 2, 8, 0);
  modelc_cpu::copy_columns<int32_t>(ctx.get(), b.data(), y.data(), 3, 5, 8, 2);
  modelc_cpu::copy_columns<int32_t>(ctx.get(), c.data(), y.data(), 3, 1, 8, 7);
  std::vector<int32_t> want;
  for (int r = 0; r < 3; ++r) {
    want.insert(want.end(), a.begin() + r * 2, a.begin() + r * 2 + 2);
    want.insert(want.end(), b.begin() + r * 5, b.begin() + r * 5 + 5);
    want.push_back(c[r]);
  }
  EXPECT_EQ(y, want);
}

TEST(CpuKernels, Gather) {
  // data [2, 5, 3] along axis 1, with negative indices counted from the end.
  std::vector<float> data = randomFloats(2 * 5 * 3, 111);
  std::vector<int64_t> indices = {4, 0, -1, -5, 2};
  std::vector<int32_t> indices32(indices.begin(), indices.end());
  KernelTestContext ctx;
  std::vector<float> y(2 * 5 * 3, NAN), y32(y.size(), NAN);
  EXPECT_EQ((modelc_cpu::gather<float, int64_t>(
                ctx.get(), data.data(), indices.data(), y.data(), 2, 5, 3, 5)),
            0);
  EXPECT_EQ((modelc_cpu::gather<float, int32_t>(ctx.get(), data.data(),
                                                indices32.data(), y32.data(), 2,
                                                5, 3, 5)),
            0);
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t in = 0; in < 3; ++in) {
        int64_t index = indices[i] < 0 ? indices[i] + 5 : indices[i];
        float want = data[(o * 5 + index) * 3 + in];
        EXPECT_EQ(y[(o * 5 + i) * 3 + in], want);
        EXPECT_EQ(y32[(o * 5 + i) * 3 + in], want);
      }
  EXPECT_TRUE(ctx.state.errors.empty());
}

TEST(CpuKernels, ScatterNdAppliesRowsInOrder) {
  // data [3, 2]; rows 1, -2 (= 1) and 0: row 1 is written twice, the later
  // update wins (reduction none) or both combine in order (add, max).
  const int64_t dims[] = {3, 2}, strides[] = {2, 1};
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> rows = {1, -2, 0};
  std::vector<float> updates = {10, 20, 30, NAN, 50, 60};
  KernelTestContext ctx;
  std::vector<float> y(6, -1);
  ASSERT_EQ((modelc_cpu::scatter_nd<0, float, int64_t>(
                ctx.get(), data.data(), rows.data(), updates.data(), y.data(),
                dims, strides, 1, 3, 2, 6, "graph.scatter_nd")),
            0);
  EXPECT_EQ(y[0], 50);
  EXPECT_EQ(y[1], 60);
  EXPECT_EQ(y[2], 30);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], 5);
  EXPECT_EQ(y[5], 6);
  ASSERT_EQ((modelc_cpu::scatter_nd<1, float, int64_t>(
                ctx.get(), data.data(), rows.data(), updates.data(), y.data(),
                dims, strides, 1, 3, 2, 6, "graph.scatter_nd")),
            0);
  EXPECT_EQ(y[0], 51);
  EXPECT_EQ(y[2], 43);
  // max keeps a NaN of either side; in place (y is data) works too.
  std::vector<float> z = data;
  ASSERT_EQ((modelc_cpu::scatter_nd<3, float, int64_t>(
                ctx.get(), z.data(), rows.data(), updates.data(), z.data(),
                dims, strides, 1, 3, 2, 6, "graph.scatter_nd")),
            0);
  EXPECT_EQ(z[0], 50);
  EXPECT_EQ(z[2], 30);
  EXPECT_TRUE(std::isnan(z[3]));
  // Element tuples (k = 2) on integers: 2 * 3 at [2, 1], then * 4.
  std::vector<int32_t> ints = {1, 1, 1, 1, 1, 2}, out(6);
  std::vector<int32_t> tuples = {2, 1, -1, -1};
  std::vector<int32_t> factors = {3, 4};
  ASSERT_EQ((modelc_cpu::scatter_nd<2, int32_t, int32_t>(
                ctx.get(), ints.data(), tuples.data(), factors.data(),
                out.data(), dims, strides, 2, 2, 1, 6, "graph.scatter_nd")),
            0);
  EXPECT_EQ(out[5], 24);
  EXPECT_EQ(out[0], 1);
  EXPECT_TRUE(ctx.state.errors.empty());
}

TEST(CpuKernels, ScatterNdIndexOutOfRangeWritesNothing) {
  const int64_t dims[] = {3, 2}, strides[] = {2, 1};
  std::vector<float> data = {1, 2, 3, 4, 5, 6}, updates = {7, 8, 9, 10};
  for (int64_t bad : {int64_t(3), int64_t(-4), int64_t(1) << 40}) {
    KernelTestContext ctx;
    std::vector<int64_t> rows = {0, bad};
    std::vector<float> y(6, -1);
    EXPECT_EQ((modelc_cpu::scatter_nd<0, float, int64_t>(
                  ctx.get(), data.data(), rows.data(), updates.data(), y.data(),
                  dims, strides, 1, 2, 2, 6, "graph.scatter_nd")),
              1)
        << bad;
    ASSERT_EQ(ctx.state.errors.size(), 1u) << bad;
    EXPECT_EQ(ctx.state.errors[0],
              "graph.scatter_nd: an index is out of range");
    EXPECT_EQ(y[0], -1) << "nothing is written before every index is checked";
  }
}

TEST(CpuKernels, GatherIndexOutOfRange) {
  std::vector<float> data = randomFloats(4 * 2, 112);
  for (int64_t bad : {int64_t(4), int64_t(-5), int64_t(1) << 40}) {
    KernelTestContext ctx;
    std::vector<int64_t> indices = {0, bad};
    std::vector<float> y(4, NAN);
    EXPECT_EQ((modelc_cpu::gather<float, int64_t>(ctx.get(), data.data(),
                                                  indices.data(), y.data(), 1,
                                                  4, 2, 2)),
              1)
        << bad;
    ASSERT_EQ(ctx.state.errors.size(), 1u) << bad;
    EXPECT_EQ(ctx.state.errors[0], "graph.gather: an index is out of range");
  }
}

namespace {

/// Reduces x [2, 3, 4, 5] over `axes` (kind 0 sum, 1 mean, 2 max).
std::vector<double> referenceReduce(const std::vector<float> &x,
                                    const std::vector<int> &axes, int kind) {
  const int64_t dims[] = {2, 3, 4, 5};
  std::vector<double> out;
  std::vector<int64_t> keptIndex;
  std::vector<int> kept;
  for (int d = 0; d < 4; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end())
      kept.push_back(d);
  int64_t outputs = 1;
  for (int d : kept)
    outputs *= dims[d];
  for (int64_t r = 0; r < outputs; ++r) {
    int64_t coord[4] = {0, 0, 0, 0}, rest = r;
    for (int i = static_cast<int>(kept.size()) - 1; i >= 0; --i) {
      coord[kept[i]] = rest % dims[kept[i]];
      rest /= dims[kept[i]];
    }
    double sum = 0, best = -INFINITY;
    int64_t count = 0;
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t c = 0; c < 4; ++c)
          for (int64_t d = 0; d < 5; ++d) {
            int64_t at[4] = {a, b, c, d};
            bool match = true;
            for (int k : kept)
              match = match && at[k] == coord[k];
            if (!match)
              continue;
            double v = x[((a * 3 + b) * 4 + c) * 5 + d];
            sum += v;
            best = std::max(best, v);
            ++count;
          }
    out.push_back(kind == 2 ? best : kind == 1 ? sum / count : sum);
  }
  return out;
}

} // namespace

TEST(CpuKernels, Reduce) {
  const int64_t dims[] = {2, 3, 4, 5}, strides[] = {60, 20, 5, 1};
  std::vector<float> x = randomFloats(120, 121, -2.0f, 2.0f);
  std::vector<std::vector<int>> axesCases = {
      {3}, {0}, {1, 2}, {0, 2}, {0, 1, 2, 3}, {0, 3}, {0, 1}, {0, 1, 2}};
  for (const std::vector<int> &axes : axesCases)
    for (int kind : {0, 1, 2}) {
      std::vector<int64_t> keptDims, keptStrides, reducedDims, reducedStrides;
      for (int d = 0; d < 4; ++d) {
        bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
        (reduced ? reducedDims : keptDims).push_back(dims[d]);
        (reduced ? reducedStrides : keptStrides).push_back(strides[d]);
      }
      std::vector<double> want = referenceReduce(x, axes, kind);
      std::vector<float> y(want.size(), NAN);
      KernelTestContext ctx;
      modelc_cpu::reduce<float>(
          ctx.get(), x.data(), y.data(), static_cast<int>(keptDims.size()),
          keptDims.data(), keptStrides.data(),
          static_cast<int>(reducedDims.size()), reducedDims.data(),
          reducedStrides.data(), kind);
      SCOPED_TRACE(testing::Message() << "kind " << kind << ", " << axes.size()
                                      << " axes from " << axes[0]);
      expectNear(y, want, 1e-6, 1e-6);
    }
}

TEST(CpuKernels, ReduceIntegers) {
  // Sum and max of int32 rows.
  const int64_t keptDims[] = {2}, keptStrides[] = {3}, reducedDims[] = {3},
                reducedStrides[] = {1};
  std::vector<int32_t> x = {1, -7, 4, 10, 20, 31}, y(2);
  KernelTestContext ctx;
  modelc_cpu::reduce<int32_t>(ctx.get(), x.data(), y.data(), 1, keptDims,
                              keptStrides, 1, reducedDims, reducedStrides, 0);
  EXPECT_EQ(y, (std::vector<int32_t>{-2, 61}));
  modelc_cpu::reduce<int32_t>(ctx.get(), x.data(), y.data(), 1, keptDims,
                              keptStrides, 1, reducedDims, reducedStrides, 2);
  EXPECT_EQ(y, (std::vector<int32_t>{4, 31}));
}

TEST(CpuKernels, ReduceProductWrapsAround) {
  // Products of int32 rows: the second overflows and wraps around.
  const int64_t keptDims[] = {2}, keptStrides[] = {3}, reducedDims[] = {3},
                reducedStrides[] = {1};
  std::vector<int32_t> x = {-3, 5, 7, 65536, 65536, 3}, y(2);
  KernelTestContext ctx;
  modelc_cpu::reduce<int32_t>(ctx.get(), x.data(), y.data(), 1, keptDims,
                              keptStrides, 1, reducedDims, reducedStrides, 3);
  EXPECT_EQ(y, (std::vector<int32_t>{-105, 0}));
  std::vector<float> f = {0.5f, -2.0f, 3.0f, 1.5f, 2.0f, -1.0f}, g(2);
  modelc_cpu::reduce<float>(ctx.get(), f.data(), g.data(), 1, keptDims,
                            keptStrides, 1, reducedDims, reducedStrides, 3);
  EXPECT_EQ(g, (std::vector<float>{-3.0f, -3.0f}));
}

TEST(CpuKernels, Cumsum) {
  // [outer 2, len 3, inner 2]: every form along the middle dimension.
  std::vector<int64_t> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  struct Case {
    bool exclusive, reverse;
    std::vector<int64_t> want;
  } cases[] = {
      {false, false, {1, 2, 4, 6, 9, 12, 7, 8, 16, 18, 27, 30}},
      {true, false, {0, 0, 1, 2, 4, 6, 0, 0, 7, 8, 16, 18}},
      {false, true, {9, 12, 8, 10, 5, 6, 27, 30, 20, 22, 11, 12}},
      {true, true, {8, 10, 5, 6, 0, 0, 20, 22, 11, 12, 0, 0}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(testing::Message()
                 << "exclusive " << c.exclusive << ", reverse " << c.reverse);
    std::vector<int64_t> y(x.size(), -1);
    KernelTestContext ctx;
    modelc_cpu::cumsum<int64_t>(ctx.get(), x.data(), y.data(), 2, 3, 2,
                                c.exclusive, c.reverse);
    EXPECT_EQ(y, c.want);
  }
  // int32 sums wrap around; floats add in double.
  std::vector<int32_t> i = {INT32_MAX, 1, 1}, j(3);
  KernelTestContext ctx;
  modelc_cpu::cumsum<int32_t>(ctx.get(), i.data(), j.data(), 1, 3, 1, false,
                              false);
  EXPECT_EQ(j, (std::vector<int32_t>{INT32_MAX, INT32_MIN, INT32_MIN + 1}));
  std::vector<float> f = {1e8f, 1.0f, -1e8f}, g(3);
  modelc_cpu::cumsum<float>(ctx.get(), f.data(), g.data(), 1, 3, 1, false,
                            false);
  EXPECT_EQ(g[2], 1.0f);
}
