// dnnl_conv_test.cpp - the runtime's convolutions of changing weights
// through oneDNN (runtime/src/dnnl_conv.hpp, modelc_runtime_api::conv)
// against a direct double-precision reference: forward (with a bias),
// backward data and backward weights; groups, strides, padding, dilation;
// Winograd asked for; and the errors.
#include "dnnl_conv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

using modelc::detail::DnnlConvs;

struct Geometry {
  int64_t n, c, h, w, o, kh, kw, oh, ow, sh, sw, pt, pl, pb, pr, dh, dw, g;
};

modelc_conv makeConv(uint32_t kind, const Geometry &s, bool winograd) {
  modelc_conv c{};
  c.kind = kind;
  c.flags = winograd ? MODELC_CONV_WINOGRAD : 0u;
  int64_t v[18] = {s.n,  s.c,  s.h,  s.w,  s.o,  s.kh, s.kw, s.oh, s.ow,
                   s.sh, s.sw, s.pt, s.pl, s.pb, s.pr, s.dh, s.dw, s.g};
  std::copy(v, v + 18, c.shape);
  c.what = "test convolution";
  return c;
}

std::vector<float> randomValues(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// Calls f(n, oc, y, x, ic, ky, kx, input index, weight index, output
/// index) for every product term of the convolution.
template <typename F> void eachTerm(const Geometry &s, F f) {
  int64_t cg = s.c / s.g, og = s.o / s.g;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t y = 0; y < s.oh; ++y)
        for (int64_t x = 0; x < s.ow; ++x)
          for (int64_t i = 0; i < cg; ++i)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                int64_t iy = y * s.sh - s.pt + ky * s.dh;
                int64_t ix = x * s.sw - s.pl + kx * s.dw;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                  continue;
                int64_t ic = o / og * cg + i;
                f(((n * s.c + ic) * s.h + iy) * s.w + ix,
                  ((o * cg + i) * s.kh + ky) * s.kw + kx,
                  ((n * s.o + o) * s.oh + y) * s.ow + x);
              }
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want,
                double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 0;
  for (double v : want)
    scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * scale) << "at " << i;
}

void checkAll(const Geometry &s, bool winograd, double tolerance) {
  DnnlConvs convs;
  std::string error;
  size_t xs = s.n * s.c * s.h * s.w, ws = s.o * (s.c / s.g) * s.kh * s.kw,
         ys = s.n * s.o * s.oh * s.ow;
  std::vector<float> x = randomValues(xs, 1), w = randomValues(ws, 2),
                     dy = randomValues(ys, 3), bias = randomValues(s.o, 4);
  // Forward with a bias.
  std::vector<double> y(ys);
  for (size_t i = 0; i < ys; ++i)
    y[i] = bias[(i / (s.oh * s.ow)) % s.o];
  eachTerm(s, [&](int64_t xi, int64_t wi, int64_t yi) {
    y[yi] += double(x[xi]) * w[wi];
  });
  modelc_conv forward = makeConv(MODELC_CONV_FORWARD, s, winograd);
  std::vector<float> out(ys);
  for (int run = 0; run < 2; ++run) { // the second run reuses the site
    ASSERT_TRUE(convs.run(forward, x.data(), w.data(), bias.data(), out.data(),
                          2, error))
        << error;
    expectNear(out, y, tolerance);
  }
  // Backward data (dx: the transposed convolution of dy) and backward
  // weights, each into a buffer that starts dirty. Their modelc_conv
  // structs share one stack address: the runtime keys sites by address
  // (static in generated code) and must make the second site again, not
  // run the first's primitive.
  auto backward = [&](uint32_t kind, const std::vector<float> &a,
                      const std::vector<float> &b, size_t size, auto term) {
    std::vector<double> want(size);
    eachTerm(
        s, [&](int64_t xi, int64_t wi, int64_t yi) { term(want, xi, wi, yi); });
    modelc_conv c = makeConv(kind, s, winograd);
    std::vector<float> got(size, 123.0f);
    ASSERT_TRUE(convs.run(c, a.data(), b.data(), nullptr, got.data(), 2, error))
        << error;
    expectNear(got, want, tolerance);
  };
  backward(MODELC_CONV_BACKWARD_DATA, dy, w, xs,
           [&](std::vector<double> &dx, int64_t xi, int64_t wi, int64_t yi) {
             dx[xi] += double(dy[yi]) * w[wi];
           });
  backward(MODELC_CONV_BACKWARD_WEIGHTS, x, dy, ws,
           [&](std::vector<double> &dw, int64_t xi, int64_t wi, int64_t yi) {
             dw[wi] += double(x[xi]) * dy[yi];
           });
  if (winograd)
    EXPECT_FALSE(convs.implementation(forward).empty());
}

TEST(DnnlConv, DirectPaddedStridedDilatedGrouped) {
  // 32 -> 32 channels in 2 groups, 3x3, stride 2, dilation 2, padding 2
  // (the bottom and right as oneDNN needs them for a 4x4 output of 10x10).
  Geometry s{2, 32, 10, 10, 32, 3, 3, 4, 4, 2, 2, 2, 2, 0, 0, 2, 2, 2};
  s.pb = (s.oh - 1) * s.sh + (s.kh - 1) * s.dh + 1 - s.h - s.pt;
  s.pr = (s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1 - s.w - s.pl;
  s.pb = std::max<int64_t>(s.pb, 0);
  s.pr = std::max<int64_t>(s.pr, 0);
  checkAll(s, false, 1e-5);
}

TEST(DnnlConv, WinogradAsked) {
  // 3x3, stride 1, 16 -> 32 channels, 14x14: oneDNN's Winograd on AVX-512
  // CPUs, direct elsewhere; either within 1e-5 of the output's scale.
  Geometry s{2, 16, 14, 14, 32, 3, 3, 14, 14, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  checkAll(s, true, 1e-5);
}

TEST(DnnlConv, BadKindOrFlagsIsAnError) {
  DnnlConvs convs;
  Geometry s{1, 16, 4, 4, 16, 1, 1, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1};
  modelc_conv c = makeConv(7, s, false);
  std::vector<float> a(256), b(256), out(256);
  std::string error;
  EXPECT_FALSE(convs.run(c, a.data(), b.data(), nullptr, out.data(), 1, error));
  EXPECT_NE(error.find("test convolution: unknown convolution kind 7"),
            std::string::npos)
      << error;
  c = makeConv(MODELC_CONV_BACKWARD_DATA, s, false);
  EXPECT_FALSE(
      convs.run(c, a.data(), b.data(), a.data(), out.data(), 1, error));
}

TEST(DnnlConv, ShapesOneDnnRefusesAreAnError) {
  // An output size the input cannot give: oneDNN refuses the description;
  // the error names the site, and a second call fails the same way.
  DnnlConvs convs;
  Geometry s{1, 16, 4, 4, 16, 3, 3, 9, 9, 1, 1, 0, 0, 0, 0, 1, 1, 1};
  modelc_conv c = makeConv(MODELC_CONV_FORWARD, s, false);
  std::vector<float> a(16 * 16), b(16 * 16 * 9), out(16 * 81);
  std::string error;
  for (int run = 0; run < 2; ++run) {
    error.clear();
    EXPECT_FALSE(
        convs.run(c, a.data(), b.data(), nullptr, out.data(), 1, error));
    EXPECT_NE(error.find("test convolution: oneDNN:"), std::string::npos)
        << error;
  }
}

} // namespace
