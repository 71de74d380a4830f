// kernels_convolution_test.cpp - conv2d (direct and im2col),
// conv_transpose2d, max_pool2d, avg_pool2d and global_avg_pool of
// compiler/kernels/cpu/kernels.h against double-precision loops, NCHW, on
// small odd shapes.
#include "kernel_test_context.h"

using modelc_cpu::Conv2dShape;
using modelc_cpu::ConvTranspose2dShape;
using modelc_cpu::Pool2dShape;
using modelc_test::expectNear;
using modelc_test::KernelTestContext;
using modelc_test::randomFloats;

namespace {

std::vector<double> referenceConv2d(const std::vector<float> &x,
                                    const std::vector<float> &w,
                                    const float *bias, const Conv2dShape &s) {
  int64_t cg = s.c / s.groups, og = s.o / s.groups;
  std::vector<double> y(s.n * s.o * s.oh * s.ow);
  for (int64_t img = 0; img < s.n; ++img)
    for (int64_t oc = 0; oc < s.o; ++oc)
      for (int64_t oy = 0; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          int64_t g = oc / og;
          double sum = bias ? bias[oc] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                int64_t iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
                int64_t ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                  continue;
                sum +=
                    double(
                        x[((img * s.c + g * cg + ci) * s.h + iy) * s.w + ix]) *
                    w[((oc * cg + ci) * s.kh + ky) * s.kw + kx];
              }
          y[((img * s.o + oc) * s.oh + oy) * s.ow + ox] = sum;
        }
  return y;
}

/// Transposed convolution by its definition: every input pixel scatters
/// its kernel-weighted values into the output.
std::vector<double> referenceConvTranspose2d(const std::vector<float> &x,
                                             const std::vector<float> &w,
                                             const float *bias,
                                             const ConvTranspose2dShape &s) {
  int64_t cg = s.c / s.groups, og = s.o / s.groups;
  std::vector<double> y(s.n * s.o * s.oh * s.ow, 0.0);
  for (int64_t img = 0; img < s.n; ++img)
    for (int64_t ci = 0; ci < s.c; ++ci)
      for (int64_t iy = 0; iy < s.h; ++iy)
        for (int64_t ix = 0; ix < s.w; ++ix)
          for (int64_t oc = 0; oc < og; ++oc)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                int64_t oy = iy * s.stride_h - s.pad_top + ky * s.dilation_h;
                int64_t ox = ix * s.stride_w - s.pad_left + kx * s.dilation_w;
                if (oy < 0 || oy >= s.oh || ox < 0 || ox >= s.ow)
                  continue;
                int64_t o = ci / cg * og + oc;
                y[((img * s.o + o) * s.oh + oy) * s.ow + ox] +=
                    double(x[((img * s.c + ci) * s.h + iy) * s.w + ix]) *
                    w[((ci * og + oc) * s.kh + ky) * s.kw + kx];
              }
  if (bias)
    for (size_t i = 0; i < y.size(); ++i)
      y[i] += bias[(i / (s.oh * s.ow)) % s.o];
  return y;
}

/// Output size as PyTorch computes it (floor mode).
int64_t outSize(int64_t in, int64_t k, int64_t stride, int64_t padBefore,
                int64_t padAfter, int64_t dilation) {
  return (in + padBefore + padAfter - dilation * (k - 1) - 1) / stride + 1;
}

} // namespace

TEST(CpuKernels, Conv2d) {
  struct Case {
    const char *name;
    int64_t n, c, h, w, o, kh, kw, stride_h, stride_w, pad_top, pad_left,
        pad_bottom, pad_right, dilation_h, dilation_w, groups;
  } cases[] = {
      {"1x1 direct", 2, 3, 5, 7, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {"3x3 pad 1", 2, 3, 5, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {"stride 2, uneven pads", 1, 2, 9, 8, 3, 3, 2, 2, 3, 1, 0, 2, 1, 1, 1, 1},
      {"dilation 2", 1, 3, 9, 9, 2, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
      {"groups 2", 2, 4, 6, 5, 6, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 2},
      {"depthwise", 1, 3, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
      {"1x1 stride 2", 1, 3, 7, 7, 2, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},
      {"kernel wider than padded input", 1, 1, 3, 2, 1, 2, 5, 1, 1, 0, 2, 0, 2,
       1, 1, 1},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.name);
    Conv2dShape s{
        c.n,
        c.c,
        c.h,
        c.w,
        c.o,
        c.kh,
        c.kw,
        outSize(c.h, c.kh, c.stride_h, c.pad_top, c.pad_bottom, c.dilation_h),
        outSize(c.w, c.kw, c.stride_w, c.pad_left, c.pad_right, c.dilation_w),
        c.stride_h,
        c.stride_w,
        c.pad_top,
        c.pad_left,
        c.dilation_h,
        c.dilation_w,
        c.groups};
    std::vector<float> x = randomFloats(s.n * s.c * s.h * s.w, 41);
    std::vector<float> w =
        randomFloats(s.o * (s.c / s.groups) * s.kh * s.kw, 42);
    std::vector<float> bias = randomFloats(s.o, 43);
    for (bool withBias : {false, true}) {
      KernelTestContext ctx;
      // Scratch poisoned: the kernel must write every element it reads.
      std::vector<float> scratch(modelc_cpu::conv2d_scratch_floats(s) + 1, NAN);
      std::vector<float> y(s.n * s.o * s.oh * s.ow, NAN);
      modelc_cpu::conv2d(ctx.get(), x.data(), w.data(),
                         withBias ? bias.data() : nullptr, y.data(), s,
                         scratch.data());
      expectNear(y, referenceConv2d(x, w, withBias ? bias.data() : nullptr, s),
                 1e-5, 1e-5);
    }
  }
}

TEST(CpuKernels, ConvTranspose2d) {
  struct Case {
    const char *name;
    // n, c, h, w, o, kh, kw, stride_h, stride_w, pad_top, pad_left,
    // pad_bottom, pad_right, output_padding_h, output_padding_w,
    // dilation_h, dilation_w, groups
    int64_t v[18];
  } cases[] = {
      {"3x3 stride 1", {2, 3, 5, 4, 2, 3, 3, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1}},
      {"stride 2 pad 1 output padding 1",
       {1, 4, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
      {"uneven strides and pads",
       {1, 2, 4, 6, 3, 2, 3, 3, 2, 0, 2, 1, 0, 2, 1, 1, 1, 1}},
      {"dilation 2 groups 2",
       {2, 4, 5, 5, 6, 3, 2, 1, 2, 1, 0, 0, 1, 1, 1, 2, 1, 2}},
      {"depthwise", {1, 3, 4, 4, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 3}},
      {"padding larger than a tap's reach",
       {1, 1, 3, 3, 1, 2, 2, 1, 1, 1, 2, 0, 0, 0, 0, 1, 1, 1}},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t *v = c.v;
    int64_t oh =
        (v[2] - 1) * v[7] - v[9] - v[11] + v[15] * (v[5] - 1) + v[13] + 1;
    int64_t ow =
        (v[3] - 1) * v[8] - v[10] - v[12] + v[16] * (v[6] - 1) + v[14] + 1;
    ConvTranspose2dShape s{v[0], v[1], v[2], v[3], v[4],  v[5],  v[6],  oh,
                           ow,   v[7], v[8], v[9], v[10], v[15], v[16], v[17]};
    std::vector<float> x = randomFloats(s.n * s.c * s.h * s.w, 51);
    std::vector<float> w =
        randomFloats(s.c * (s.o / s.groups) * s.kh * s.kw, 52);
    std::vector<float> bias = randomFloats(s.o, 53);
    for (bool withBias : {false, true}) {
      KernelTestContext ctx;
      std::vector<float> y(s.n * s.o * s.oh * s.ow, NAN);
      modelc_cpu::conv_transpose2d(ctx.get(), x.data(), w.data(),
                                   withBias ? bias.data() : nullptr, y.data(),
                                   s);
      expectNear(
          y,
          referenceConvTranspose2d(x, w, withBias ? bias.data() : nullptr, s),
          1e-5, 1e-5);
      // The GEMM + col2im form (a convolution's input gradient) agrees.
      std::vector<float> scratch(modelc_cpu::conv_transpose2d_scratch_floats(s),
                                 NAN);
      std::vector<float> y2(s.n * s.o * s.oh * s.ow, NAN);
      modelc_cpu::conv_transpose2d_gemm(ctx.get(), x.data(), w.data(),
                                        withBias ? bias.data() : nullptr,
                                        y2.data(), s, scratch.data());
      expectNear(
          y2,
          referenceConvTranspose2d(x, w, withBias ? bias.data() : nullptr, s),
          1e-5, 1e-5);
    }
  }
}

TEST(CpuKernels, Conv2dScratchSize) {
  Conv2dShape direct{1, 3, 5, 5, 2, 1, 1, 5, 5, 1, 1, 0, 0, 1, 1, 1};
  EXPECT_EQ(modelc_cpu::conv2d_scratch_floats(direct), 0);
  Conv2dShape im2col{1, 4, 5, 5, 2, 3, 3, 3, 3, 1, 1, 0, 0, 1, 1, 2};
  EXPECT_EQ(modelc_cpu::conv2d_scratch_floats(im2col), 2 * 3 * 3 * 3 * 3);
}

namespace {

std::vector<double> referencePool(const std::vector<float> &x,
                                  const Pool2dShape &s, bool max,
                                  bool countIncludePad) {
  std::vector<double> y(s.n * s.c * s.oh * s.ow);
  for (int64_t p = 0; p < s.n * s.c; ++p)
    for (int64_t oy = 0; oy < s.oh; ++oy)
      for (int64_t ox = 0; ox < s.ow; ++ox) {
        double best = -INFINITY, sum = 0;
        int64_t count = 0, padded = 0;
        for (int64_t ky = 0; ky < s.kh; ++ky)
          for (int64_t kx = 0; kx < s.kw; ++kx) {
            int64_t iy = oy * s.stride_h - s.pad_top + ky;
            int64_t ix = ox * s.stride_w - s.pad_left + kx;
            // PyTorch counts window cells inside input + padding.
            if (iy < s.h + s.pad_bottom && ix < s.w + s.pad_right)
              ++padded;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
              continue;
            double v = x[(p * s.h + iy) * s.w + ix];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        y[(p * s.oh + oy) * s.ow + ox] =
            max ? best : sum / double(countIncludePad ? padded : count);
      }
  return y;
}

} // namespace

TEST(CpuKernels, Pools) {
  // n, c, h, w, oh, ow, kh, kw, stride, pads (top, left, bottom, right):
  // no padding; padding 1; ceil mode with the extra row and column as
  // padding; ceil mode as the emitter spells it (no padding, the last window
  // hangs over); stride 1 x 2 with one pad; one window covering the image.
  Pool2dShape cases[] = {{2, 3, 7, 5, 3, 2, 3, 3, 2, 2, 0, 0, 0, 0},
                         {1, 2, 7, 5, 4, 3, 3, 3, 2, 2, 1, 1, 1, 1},
                         {1, 2, 8, 8, 4, 4, 3, 3, 2, 2, 0, 0, 1, 1},
                         {1, 2, 8, 8, 4, 4, 3, 3, 2, 2, 0, 0, 0, 0},
                         {1, 1, 5, 6, 5, 3, 2, 2, 1, 2, 0, 0, 1, 0},
                         {1, 1, 4, 4, 1, 1, 4, 4, 1, 1, 0, 0, 0, 0}};
  for (const Pool2dShape &s : cases) {
    SCOPED_TRACE(testing::Message()
                 << s.h << "x" << s.w << " -> " << s.oh << "x" << s.ow
                 << ", pads " << s.pad_top << s.pad_left << s.pad_bottom
                 << s.pad_right);
    std::vector<float> x = randomFloats(s.n * s.c * s.h * s.w, 51, -5.0f, 1.0f);
    KernelTestContext ctx;
    std::vector<float> y(s.n * s.c * s.oh * s.ow, NAN);
    modelc_cpu::max_pool2d(ctx.get(), x.data(), y.data(), s);
    expectNear(y, referencePool(x, s, true, false), 0, 0);
    for (bool includePad : {false, true}) {
      SCOPED_TRACE(includePad ? "avg, count_include_pad" : "avg");
      modelc_cpu::avg_pool2d(ctx.get(), x.data(), y.data(), s, includePad);
      expectNear(y, referencePool(x, s, false, includePad), 1e-6, 1e-6);
    }
  }
}

// Max pooling propagates NaN as PyTorch: a window that reads a NaN is NaN;
// a NaN no window reads changes nothing. Planes of one NaN each, at every
// position in turn, on ResNet's 3x3 stride 2 pad 1 (windows inside the row
// found side by side, edge windows one by one) and a 2x2 stride 3 (cells
// between windows that none reads).
TEST(CpuKernels, MaxPoolNaN) {
  Pool2dShape cases[] = {{1, 1, 7, 19, 4, 10, 3, 3, 2, 2, 1, 1, 1, 1},
                         {1, 1, 8, 11, 3, 4, 2, 2, 3, 3, 0, 0, 0, 0}};
  for (Pool2dShape s : cases) {
    const int64_t cells = s.h * s.w;
    s.c = cells; // plane p has its NaN at cell p
    std::vector<float> x = randomFloats(s.c * cells, 81, -3.0f, 3.0f);
    for (int64_t p = 0; p < s.c; ++p)
      x[p * cells + p] = NAN;
    KernelTestContext ctx;
    std::vector<float> y(s.c * s.oh * s.ow, 0.0f);
    modelc_cpu::max_pool2d(ctx.get(), x.data(), y.data(), s);
    for (int64_t p = 0; p < s.c; ++p)
      for (int64_t oy = 0; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          float best = -INFINITY;
          bool nan = false;
          for (int64_t ky = 0; ky < s.kh; ++ky)
            for (int64_t kx = 0; kx < s.kw; ++kx) {
              int64_t iy = oy * s.stride_h - s.pad_top + ky;
              int64_t ix = ox * s.stride_w - s.pad_left + kx;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                continue;
              float v = x[p * cells + iy * s.w + ix];
              nan |= v != v;
              best = std::max(best, v);
            }
          float got = y[(p * s.oh + oy) * s.ow + ox];
          if (nan)
            EXPECT_TRUE(std::isnan(got))
                << "plane " << p << " window " << oy << "," << ox;
          else
            EXPECT_EQ(got, best)
                << "plane " << p << " window " << oy << "," << ox;
        }
  }
}

// max_pool2d's input gradient, window by window: each window's gradient
// goes to its first largest cell, or to its last NaN (as PyTorch).
std::vector<double> referenceMaxPoolGrad(const std::vector<float> &x,
                                         const std::vector<float> &g,
                                         const Pool2dShape &s) {
  std::vector<double> dx(x.size(), 0.0);
  for (int64_t p = 0; p < s.n * s.c; ++p)
    for (int64_t oy = 0; oy < s.oh; ++oy)
      for (int64_t ox = 0; ox < s.ow; ++ox) {
        int64_t at = -1;
        float best = 0;
        for (int64_t ky = 0; ky < s.kh; ++ky)
          for (int64_t kx = 0; kx < s.kw; ++kx) {
            int64_t iy = oy * s.stride_h - s.pad_top + ky;
            int64_t ix = ox * s.stride_w - s.pad_left + kx;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
              continue;
            float v = x[(p * s.h + iy) * s.w + ix];
            bool bestIsNan = at >= 0 && best != best;
            if (at < 0 || v != v || (!bestIsNan && v > best)) {
              at = (p * s.h + iy) * s.w + ix;
              best = v;
            }
          }
        dx[at] += g[(p * s.oh + oy) * s.ow + ox];
      }
  return dx;
}

TEST(CpuKernels, MaxPoolGrad) {
  // ResNet's 3x3 stride 2 pad 1 on rows wide enough for the windows inside
  // the row to be found side by side; stride 1 (overlapping windows adding
  // into one cell); a 2x2 stride 2; windows hanging over the right and
  // bottom edges; a row with no inside window; one window over the image.
  Pool2dShape cases[] = {{2, 3, 9, 37, 5, 19, 3, 3, 2, 2, 1, 1, 1, 1},
                         {1, 2, 6, 21, 4, 19, 3, 3, 1, 1, 0, 0, 0, 0},
                         {1, 2, 8, 30, 4, 15, 2, 2, 2, 2, 0, 0, 0, 0},
                         {1, 1, 8, 29, 4, 15, 3, 3, 2, 2, 0, 0, 1, 2},
                         {1, 1, 5, 2, 3, 2, 3, 3, 2, 2, 1, 1, 1, 1},
                         {1, 1, 4, 4, 1, 1, 4, 4, 1, 1, 0, 0, 0, 0}};
  for (const Pool2dShape &s : cases) {
    SCOPED_TRACE(testing::Message()
                 << s.h << "x" << s.w << " -> " << s.oh << "x" << s.ow
                 << ", kernel " << s.kh << ", stride " << s.stride_w);
    // Few distinct values (ties in most windows), some NaN, all -inf in
    // places (a window whose every cell is -inf sends its gradient to its
    // first cell).
    std::vector<float> x = randomFloats(s.n * s.c * s.h * s.w, 71, 0.0f, 4.0f);
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = std::floor(x[i]);
      if (i % 53 == 7)
        x[i] = NAN;
      if (i % 41 == 3)
        x[i] = -INFINITY;
    }
    std::vector<float> g =
        randomFloats(s.n * s.c * s.oh * s.ow, 72, -1.0f, 1.0f);
    KernelTestContext ctx;
    std::vector<float> dx(x.size(), NAN);
    modelc_cpu::max_pool2d_grad(ctx.get(), x.data(), g.data(), dx.data(), s);
    expectNear(dx, referenceMaxPoolGrad(x, g, s), 1e-6, 1e-6);
  }
}

TEST(CpuKernels, GlobalAvgPool) {
  const int64_t planes = 7, spatial = 13;
  std::vector<float> x = randomFloats(planes * spatial, 61, -1.0f, 3.0f);
  KernelTestContext ctx;
  std::vector<float> y(planes, NAN);
  modelc_cpu::global_avg_pool(ctx.get(), x.data(), y.data(), planes, spatial);
  std::vector<double> want(planes);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t j = 0; j < spatial; ++j)
      want[p] += x[p * spatial + j];
    want[p] /= spatial;
  }
  expectNear(y, want, 1e-6, 1e-7);
}
