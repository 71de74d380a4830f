// exact_post_ops_test.cpp - the NaN guard of packed products
// (runtime/src/exact_post_ops.hpp): the magnitudes a run's check reads,
// when a fused chain is trusted and what bounds its result, the chain
// computed with NaN kept, packed products with NaNs run through the cache
// in f32, f16 and bf16, and a chain of convolutions that passes bounds
// from one product to the next instead of scanning (and scans where the
// producer left no bound: a NaN still reaches the exact path).
#include "exact_post_ops.hpp"
#include "packed_product.hpp"

#include "modelc/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

using namespace modelc;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(Magnitudes, OfFloats) {
  std::vector<float> v = {0.5f, -3.0f, 2.0f, -0.25f};
  Magnitudes m = magnitudesOf(v.data(), v.size(), Storage::F32);
  EXPECT_EQ(m.max, 3.0f);
  EXPECT_EQ(m.min, 0.25f);
  v[2] = -kInf;
  EXPECT_EQ(magnitudesOf(v.data(), v.size(), Storage::F32).max, kInf);
  v[1] = -kNaN; // the sign bit set: still a NaN
  EXPECT_TRUE(std::isnan(magnitudesOf(v.data(), v.size(), Storage::F32).max));
  // Long enough for the vector loop and its remainder.
  std::vector<float> many(1037, 1.0f);
  many[1036] = 7.0f;
  EXPECT_EQ(magnitudesOf(many.data(), many.size(), Storage::F32).max, 7.0f);
  many[3] = kNaN;
  EXPECT_TRUE(
      std::isnan(magnitudesOf(many.data(), many.size(), Storage::F32).max));
  Magnitudes none = magnitudesOf(nullptr, 0, Storage::F32);
  EXPECT_EQ(none.max, 0.0f);
}

TEST(Magnitudes, OfHalves) {
  for (Storage s : {Storage::F16, Storage::BF16}) {
    auto half = [&](float f) {
      return s == Storage::BF16 ? float_to_bf16(f) : float_to_f16(f);
    };
    std::vector<uint16_t> v = {half(1.5f), half(-4.0f), half(0.125f)};
    Magnitudes m = magnitudesOf(v.data(), v.size(), s);
    EXPECT_EQ(m.max, 4.0f);
    EXPECT_EQ(m.min, 0.125f);
    v[0] = half(-kInf);
    EXPECT_EQ(magnitudesOf(v.data(), v.size(), s).max, kInf);
    v[2] = half(kNaN);
    EXPECT_TRUE(std::isnan(magnitudesOf(v.data(), v.size(), s).max));
  }
}

modelc_post_op eltwise(uint32_t alg, float alpha = 0.0f) {
  return {MODELC_POST_ELTWISE, alg, alpha, 0};
}
modelc_post_op binary(uint32_t alg, uint32_t broadcast) {
  return {MODELC_POST_BINARY, alg, 0.0f, broadcast};
}
modelc_product chain(const std::vector<modelc_post_op> &posts) {
  modelc_product p{};
  p.kind = MODELC_PRODUCT_MATMUL;
  p.num_post_ops = static_cast<uint32_t>(posts.size());
  p.post_ops = posts.data();
  return p;
}

TEST(Chain, WhatMayDropNaN) {
  std::vector<modelc_post_op> relu = {eltwise(MODELC_ELTWISE_RELU)};
  std::vector<modelc_post_op> leaky = {eltwise(MODELC_ELTWISE_RELU, 0.1f)};
  std::vector<modelc_post_op> tanhMax = {
      eltwise(MODELC_ELTWISE_TANH),
      binary(MODELC_BINARY_MAX, MODELC_BROADCAST_SCALAR)};
  std::vector<modelc_post_op> others = {
      eltwise(MODELC_ELTWISE_GELU_ERF), eltwise(MODELC_ELTWISE_SWISH, 1.0f),
      binary(MODELC_BINARY_ADD, MODELC_BROADCAST_FULL)};
  EXPECT_TRUE(chainMayDropNaN(chain(relu)));
  EXPECT_FALSE(chainMayDropNaN(chain(leaky)));
  EXPECT_TRUE(chainMayDropNaN(chain(tanhMax)));
  EXPECT_FALSE(chainMayDropNaN(chain(others)));
  EXPECT_FALSE(chainMayDropNaN(chain({})));
}

TEST(Chain, TrustedOnlyBelowTheBound) {
  std::vector<modelc_post_op> posts = {
      eltwise(MODELC_ELTWISE_RELU),
      binary(MODELC_BINARY_DIV, MODELC_BROADCAST_CHANNEL),
      binary(MODELC_BINARY_MIN, MODELC_BROADCAST_SCALAR)};
  modelc_product p = chain(posts);
  Magnitudes operands[3] = {{}, {2.0f, 0.5f}, {6.0f, 6.0f}};
  ProductMagnitudes m;
  m.x = {10.0f, 0.0f};
  m.w = {1.0f, 0.0f};
  m.bias = {1.0f, 0.0f};
  m.operands = operands;
  m.reduction = 512;
  EXPECT_TRUE(fusedChainIsExact(p, m));
  // A NaN or an infinity anywhere, a divisor that may be 0, or values
  // whose product may overflow: the exact path.
  ProductMagnitudes bad = m;
  bad.x.max = kNaN;
  EXPECT_FALSE(fusedChainIsExact(p, bad));
  bad = m;
  bad.w.max = kInf;
  EXPECT_FALSE(fusedChainIsExact(p, bad));
  bad = m;
  Magnitudes nanOperand[3] = {{}, {2.0f, 0.5f}, {kNaN, 6.0f}};
  bad.operands = nanOperand;
  EXPECT_FALSE(fusedChainIsExact(p, bad));
  Magnitudes zeroDivisor[3] = {{}, {2.0f, 0.0f}, {6.0f, 6.0f}};
  bad.operands = zeroDivisor;
  EXPECT_FALSE(fusedChainIsExact(p, bad));
  bad = m;
  bad.x.max = 1e10f; // 512 * 1e10 * 1 is above 2^40
  EXPECT_FALSE(fusedChainIsExact(p, bad));
  // A divisor of 1e-9 takes 5121 past it after the product.
  Magnitudes tiny[3] = {{}, {2.0f, 1e-9f}, {6.0f, 6.0f}};
  bad = m;
  bad.operands = tiny;
  EXPECT_FALSE(fusedChainIsExact(p, bad));
  // tanh bounds what follows it by 1.
  std::vector<modelc_post_op> tanhMul = {
      eltwise(MODELC_ELTWISE_TANH),
      binary(MODELC_BINARY_MUL, MODELC_BROADCAST_FULL),
      eltwise(MODELC_ELTWISE_RELU)};
  Magnitudes scale[3] = {{}, {1e12f, 1.0f}, {}};
  bad = m;
  bad.x.max = 1e6f; // the product itself is 5e8, below
  bad.operands = scale;
  EXPECT_TRUE(fusedChainIsExact(chain(tanhMul), bad));
  scale[1].max = 2e12f; // 1 * 2e12 is not
  EXPECT_FALSE(fusedChainIsExact(chain(tanhMul), bad));
}

TEST(Chain, BoundOfTheResult) {
  ProductMagnitudes m;
  m.x = {2.0f, 0.0f};
  m.w = {0.5f, 0.0f};
  m.bias = {1.0f, 0.0f};
  m.reduction = 10; // the product: |v| <= 10 * 2 * 0.5 + 1 = 11
  auto bound = [&](std::vector<modelc_post_op> posts,
                   std::vector<Magnitudes> operands) {
    operands.resize(posts.size());
    m.operands = operands.data();
    double b = -1.0;
    EXPECT_TRUE(fusedChainIsExact(chain(posts), m, &b));
    return b;
  };
  EXPECT_DOUBLE_EQ(bound({}, {}), 11.0);
  // ReLU6 as the export has it: max with 0, min with 6.
  EXPECT_DOUBLE_EQ(bound({binary(MODELC_BINARY_MAX, MODELC_BROADCAST_SCALAR),
                          binary(MODELC_BINARY_MIN, MODELC_BROADCAST_SCALAR)},
                         {{0.0f, 0.0f}, {6.0f, 6.0f}}),
                   6.0);
  // A min alone bounds nothing below; a max alone nothing above.
  EXPECT_DOUBLE_EQ(bound({binary(MODELC_BINARY_MIN, MODELC_BROADCAST_SCALAR)},
                         {{6.0f, 6.0f}}),
                   11.0);
  EXPECT_DOUBLE_EQ(bound({binary(MODELC_BINARY_MAX, MODELC_BROADCAST_SCALAR)},
                         {{20.0f, 20.0f}}),
                   20.0);
  EXPECT_DOUBLE_EQ(bound({eltwise(MODELC_ELTWISE_RELU)}, {}), 11.0);
  EXPECT_DOUBLE_EQ(bound({eltwise(MODELC_ELTWISE_RELU, -2.0f)}, {}), 22.0);
  EXPECT_DOUBLE_EQ(bound({eltwise(MODELC_ELTWISE_RELU, 0.1f),
                          binary(MODELC_BINARY_ADD, MODELC_BROADCAST_FULL)},
                         {{}, {3.0f, 0.0f}}),
                   14.0);
  EXPECT_DOUBLE_EQ(bound({eltwise(MODELC_ELTWISE_TANH),
                          binary(MODELC_BINARY_MUL, MODELC_BROADCAST_CHANNEL)},
                         {{}, {4.0f, 1.0f}}),
                   4.0);
  modelc_post_op sum{MODELC_POST_SUM, 0, -0.5f, 0};
  EXPECT_DOUBLE_EQ(
      bound({eltwise(MODELC_ELTWISE_LOGISTIC), sum}, {{}, {8.0f, 0.0f}}), 5.0);
  EXPECT_DOUBLE_EQ(bound({eltwise(MODELC_ELTWISE_GELU_ERF),
                          binary(MODELC_BINARY_DIV, MODELC_BROADCAST_SCALAR)},
                         {{}, {2.0f, 0.5f}}),
                   22.0);
}

TEST(Chain, AppliedWithNaNKept) {
  std::vector<modelc_post_op> posts = {
      eltwise(MODELC_ELTWISE_RELU),
      binary(MODELC_BINARY_MAX, MODELC_BROADCAST_CHANNEL),
      binary(MODELC_BINARY_MIN, MODELC_BROADCAST_FULL)};
  modelc_product p = chain(posts);
  // 2 rows x 3 columns; the max's operand is one value per column.
  std::vector<float> z = {kNaN, -kInf, 2.0f, -1.0f, kInf, 0.5f};
  std::vector<float> column = {0.25f, kNaN, -1.0f};
  std::vector<float> full = {1.0f, 1.0f, kNaN, 1.0f, 7.0f, 0.1f};
  const float *operands[3] = {nullptr, column.data(), full.data()};
  applyPostOps(p, z.data(), 6, 3, 1, operands);
  EXPECT_TRUE(std::isnan(z[0])); // relu(NaN)
  EXPECT_TRUE(std::isnan(z[1])); // max(0, NaN)
  EXPECT_TRUE(std::isnan(z[2])); // min(2, NaN)
  EXPECT_EQ(z[3], 0.25f);        // min(max(relu(-1), 0.25), 1)
  EXPECT_TRUE(std::isnan(z[4])); // max(inf, NaN)
  EXPECT_EQ(z[5], 0.1f);         // min(max(0.5, -1), 0.1)
  // A channel of an NCHW value: element e is in channel (e / plane) % c.
  std::vector<modelc_post_op> add = {
      binary(MODELC_BINARY_ADD, MODELC_BROADCAST_CHANNEL),
      eltwise(MODELC_ELTWISE_RELU)};
  std::vector<float> y(2 * 3 * 4, 0.0f), bias = {1.0f, -2.0f, kNaN};
  const float *biasOperand[2] = {bias.data(), nullptr};
  applyPostOps(chain(add), y.data(), y.size(), 3, 4, biasOperand);
  for (size_t e = 0; e < y.size(); ++e) {
    size_t c = (e / 4) % 3;
    if (c == 2)
      EXPECT_TRUE(std::isnan(y[e])) << e;
    else
      EXPECT_EQ(y[e], c == 0 ? 1.0f : 0.0f) << e;
  }
}

/// y = relu(x w^T + bias) for x [m, k], w [n, k], the reference of the
/// packed products below.
std::vector<float> linearRelu(const std::vector<float> &x,
                              const std::vector<float> &w,
                              const std::vector<float> &bias, int64_t m,
                              int64_t n, int64_t k) {
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias[j];
      for (int64_t l = 0; l < k; ++l)
        s += static_cast<double>(x[i * k + l]) * w[j * k + l];
      y[i * n + j] = std::isnan(s) ? static_cast<float>(s)
                                   : static_cast<float>(s > 0 ? s : 0);
    }
  return y;
}

/// Runs a linear + relu packed product on data stored as `storage`, with
/// (`nan`) or without a NaN and an infinity in x, and checks it against
/// linearRelu: NaN where it is NaN, else within `tolerance`.
void checkLinearRelu(Storage storage, bool nan, double tolerance) {
  const int64_t m = 4, n = 5, k = 24;
  std::vector<float> x(m * k), w(n * k), bias(n);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>(i * 37 % 17) - 8) / 8.0f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(static_cast<int>(i * 11 % 13) - 6) / 6.0f;
  for (size_t i = 0; i < bias.size(); ++i)
    bias[i] = 0.25f * static_cast<float>(i) - 0.5f;
  if (nan) {
    x[1 * k + 5] = kNaN;
    x[2 * k + 0] = -kInf; // w[j][0] < 0 for some j: +inf, else -inf
  }
  // Stored as the product's type, and the reference of those values.
  auto stored = [&](std::vector<float> &v, std::vector<uint16_t> &halves) {
    if (storage == Storage::F32)
      return static_cast<const void *>(v.data());
    bool bf16 = storage == Storage::BF16;
    halves.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      halves[i] = bf16 ? float_to_bf16(v[i]) : float_to_f16(v[i]);
      v[i] = bf16 ? bf16_to_float(halves[i]) : f16_to_float(halves[i]);
    }
    return static_cast<const void *>(halves.data());
  };
  std::vector<uint16_t> xh, wh, biash;
  const void *xs = stored(x, xh), *ws = stored(w, wh),
             *biass = stored(bias, biash);
  std::vector<float> want = linearRelu(x, w, bias, m, n, k);

  modelc_post_op relu = eltwise(MODELC_ELTWISE_RELU);
  modelc_product p{};
  p.site = 1;
  p.kind = MODELC_PRODUCT_MATMUL;
  p.trans_w = 1;
  p.m = m;
  p.n = n;
  p.k = k;
  p.flags = storage == Storage::F16    ? MODELC_PRODUCT_F16
            : storage == Storage::BF16 ? MODELC_PRODUCT_BF16
                                       : 0u;
  p.num_post_ops = 1;
  p.post_ops = &relu;
  p.what = "linear";
  PackedProductCache cache;
  PackedProductRun run;
  std::string error;
  PackedProductSite *site = cache.site(p, ws, true, error);
  ASSERT_NE(site, nullptr) << error;
  EXPECT_EQ(site->guard, NaNGuard::Check);
  std::vector<float> got(m * n);
  std::vector<uint16_t> goth(m * n);
  void *y = storage == Storage::F32 ? static_cast<void *>(got.data())
                                    : static_cast<void *>(goth.data());
  // Twice: the exact path's handles are made on its first run.
  for (int repeat = 0; repeat < 2; ++repeat) {
    ASSERT_TRUE(run.execute(cache, p, *site, ws, xs, biass, y, nullptr, error))
        << error;
    if (storage != Storage::F32)
      for (size_t i = 0; i < got.size(); ++i)
        got[i] = storage == Storage::BF16 ? bf16_to_float(goth[i])
                                          : f16_to_float(goth[i]);
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << i << ": " << got[i];
      } else if (std::isinf(want[i])) {
        EXPECT_EQ(got[i], want[i]) << i;
      } else {
        EXPECT_NEAR(got[i], want[i], tolerance * (1 + std::fabs(want[i]))) << i;
      }
    }
  }
  EXPECT_EQ(site->exact != nullptr, nan);
}

TEST(PackedProduct, ReluKeepsNaNInEveryType) {
  checkLinearRelu(Storage::F32, true, 1e-5);
  checkLinearRelu(Storage::F16, true, 1e-2);
  checkLinearRelu(Storage::BF16, true, 5e-2);
}

TEST(PackedProduct, FiniteInputsStayOnTheFusedPath) {
  checkLinearRelu(Storage::F32, false, 1e-5);
  checkLinearRelu(Storage::F16, false, 1e-2);
  checkLinearRelu(Storage::BF16, false, 5e-2);
}

TEST(PackedProduct, AlwaysExactWhenAsked) {
  setenv("MODELC_EXACT_PRODUCTS", "1", 1);
  PackedProductCache cache;
  unsetenv("MODELC_EXACT_PRODUCTS");
  std::vector<float> w(6, 0.5f), x(6, 1.0f), y(4);
  modelc_post_op tanh = eltwise(MODELC_ELTWISE_TANH);
  modelc_product p{};
  p.site = 3;
  p.kind = MODELC_PRODUCT_MATMUL;
  p.trans_w = 1;
  p.m = 2;
  p.n = 2;
  p.k = 3;
  p.num_post_ops = 1;
  p.post_ops = &tanh;
  std::string error;
  PackedProductSite *site = cache.site(p, w.data(), false, error);
  ASSERT_NE(site, nullptr) << error;
  EXPECT_EQ(site->guard, NaNGuard::Always);
  PackedProductRun run;
  ASSERT_TRUE(run.execute(cache, p, *site, w.data(), x.data(), nullptr,
                          y.data(), nullptr, error))
      << error;
  EXPECT_NE(site->exact, nullptr);
  for (float v : y)
    EXPECT_NEAR(v, std::tanh(1.5f), 1e-6);
}

/// conv2d of x [1, c, h, w] and w [o, c, kh, kw] (stride 1, padding
/// `pad`), plus bias, in double; then ReLU6 where `relu6`, else ReLU:
/// NaN kept.
std::vector<float> convReference(const std::vector<float> &x,
                                 const std::vector<float> &w,
                                 const std::vector<float> &bias, int64_t c,
                                 int64_t h, int64_t wd, int64_t o, int64_t k,
                                 int64_t pad, bool relu6) {
  int64_t oh = h + 2 * pad - k + 1, ow = wd + 2 * pad - k + 1;
  std::vector<float> y(o * oh * ow);
  for (int64_t oc = 0; oc < o; ++oc)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double s = bias[oc];
        for (int64_t ic = 0; ic < c; ++ic)
          for (int64_t a = 0; a < k; ++a)
            for (int64_t b = 0; b < k; ++b) {
              int64_t r = i + a - pad, q = j + b - pad;
              if (r >= 0 && r < h && q >= 0 && q < wd)
                s += static_cast<double>(x[(ic * h + r) * wd + q]) *
                     w[((oc * c + ic) * k + a) * k + b];
            }
        if (!std::isnan(s))
          s = relu6 ? std::min(std::max(s, 0.0), 6.0) : std::max(s, 0.0);
        y[(oc * oh + i) * ow + j] = static_cast<float>(s);
      }
  return y;
}

/// Two convolutions, the second reading the first's kept layout: the
/// first (ReLU6 as max and min) bounds its output by 6, and the second
/// (ReLU) takes that bound instead of scanning x. With a NaN in the input
/// the first runs exact and leaves no bound: the second scans, finds the
/// NaN the first kept, and runs exact too.
TEST(PackedProduct, ConvolutionsPassTheirBoundOn) {
  const int64_t c = 3, h = 5, wd = 6, mid = 8, o = 4;
  std::vector<float> w1(mid * c), b1(mid), w2(o * mid * 9), b2(o);
  for (size_t i = 0; i < w1.size(); ++i)
    w1[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5) / 2.0f;
  for (size_t i = 0; i < w2.size(); ++i)
    w2[i] = static_cast<float>(static_cast<int>(i * 5 % 9) - 4) / 8.0f;
  for (size_t i = 0; i < b1.size(); ++i)
    b1[i] = 0.5f * static_cast<float>(i) - 1.0f;
  for (size_t i = 0; i < b2.size(); ++i)
    b2[i] = 0.25f - 0.125f * static_cast<float>(i);
  float zero = 0.0f, six = 6.0f;
  modelc_post_op relu6[] = {binary(MODELC_BINARY_MAX, MODELC_BROADCAST_SCALAR),
                            binary(MODELC_BINARY_MIN, MODELC_BROADCAST_SCALAR)};
  const void *relu6Operands[] = {&zero, &six};
  modelc_post_op relu = eltwise(MODELC_ELTWISE_RELU);
  auto conv = [](uint32_t site, int64_t c, int64_t o, int64_t k, int64_t pad,
                 int64_t h, int64_t wd) {
    modelc_product p{};
    p.site = site;
    p.kind = MODELC_PRODUCT_CONV2D;
    int64_t s[18] = {1, c, h,   wd,  o,   k,   k, h, wd,
                     1, 1, pad, pad, pad, pad, 1, 1, 1};
    std::copy(s, s + 18, p.conv);
    p.what = "conv";
    return p;
  };
  modelc_product first = conv(1, c, mid, 1, 0, h, wd);
  first.flags = MODELC_PRODUCT_KEEP_LAYOUT;
  first.y_bytes = 4 * 64 * h * wd; // room for channels padded to 64
  first.num_post_ops = 2;
  first.post_ops = relu6;
  modelc_product second = conv(2, mid, o, 3, 1, h, wd);
  second.flags = MODELC_PRODUCT_SRC_OF_SITE;
  second.src_site = 1;
  second.num_post_ops = 1;
  second.post_ops = &relu;

  PackedProductCache cache;
  PackedProductRun run;
  std::string error;
  for (bool nan : {false, true, false}) {
    std::vector<float> x(c * h * wd);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(static_cast<int>(i * 13 % 7) - 3);
    if (nan)
      x[7] = kNaN;
    std::vector<float> mid1 =
        convReference(x, w1, b1, c, h, wd, mid, 1, 0, true);
    std::vector<float> want =
        convReference(mid1, w2, b2, mid, h, wd, o, 3, 1, false);
    std::vector<float> kept(first.y_bytes / 4), y(o * h * wd);
    PackedProductSite *s1 = cache.site(first, w1.data(), true, error);
    ASSERT_NE(s1, nullptr) << error;
    ASSERT_TRUE(run.execute(cache, first, *s1, w1.data(), x.data(), b1.data(),
                            kept.data(), relu6Operands, error))
        << error;
    double bound = run.boundOf(productKey(1, first), kept.data());
    SCOPED_TRACE(nan ? "a NaN in x" : "finite");
    if (nan)
      EXPECT_TRUE(std::isnan(bound));
    else
      EXPECT_EQ(bound, 6.0);
    // Not for another buffer, or another site.
    EXPECT_TRUE(std::isnan(run.boundOf(productKey(1, first), x.data())));
    EXPECT_TRUE(std::isnan(run.boundOf(productKey(2, second), kept.data())));
    PackedProductSite *s2 = cache.site(second, w2.data(), true, error);
    ASSERT_NE(s2, nullptr) << error;
    ASSERT_TRUE(run.execute(cache, second, *s2, w2.data(), kept.data(),
                            b2.data(), y.data(), nullptr, error))
        << error;
    // The second's own bound: 8 * 9 terms of 6 * 0.5, plus 0.25.
    bound = run.boundOf(productKey(2, second), y.data());
    if (nan)
      EXPECT_TRUE(std::isnan(bound));
    else
      EXPECT_DOUBLE_EQ(bound, 72 * 6 * 0.5 + 0.25);
    for (size_t i = 0; i < y.size(); ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(y[i])) << i << ": " << y[i];
      else
        EXPECT_NEAR(y[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
    }
    EXPECT_EQ(s2->exact != nullptr, s1->exact != nullptr);
  }
}

} // namespace
