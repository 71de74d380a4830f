// pick_implementation_test.cpp - which of oneDNN's implementations a
// packed convolution runs (runtime/src/pick_implementation.hpp): the
// choice from the environment, the candidates keeping the first choice's
// layouts, and convolutions computed right by whichever implementation is
// picked (the first, the last, the measured fastest) through the packed
// products' cache.
#include "packed_product.hpp"
#include "pick_implementation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace modelc;

namespace {

/// Sets MODELC_CONV_IMPLEMENTATION for a scope (unset: null).
struct ChoiceVariable {
  explicit ChoiceVariable(const char *value) {
    if (value)
      setenv("MODELC_CONV_IMPLEMENTATION", value, 1);
    else
      unsetenv("MODELC_CONV_IMPLEMENTATION");
  }
  ~ChoiceVariable() { unsetenv("MODELC_CONV_IMPLEMENTATION"); }
};

TEST(PickImplementation, ChoiceFromTheEnvironment) {
  struct Case {
    const char *value;
    ImplementationChoice want;
    bool bad;
  };
  for (Case c : {Case{nullptr, ImplementationChoice::Tuned, false},
                 Case{"", ImplementationChoice::Tuned, false},
                 Case{"tuned", ImplementationChoice::Tuned, false},
                 Case{"first", ImplementationChoice::First, false},
                 Case{"fastest", ImplementationChoice::Fastest, false},
                 Case{"last", ImplementationChoice::Last, false},
                 Case{"quickest", ImplementationChoice::Tuned, true}}) {
    ChoiceVariable variable(c.value);
    std::string error;
    EXPECT_EQ(implementationChoice(error), c.want) << (c.value ? c.value : "");
    EXPECT_EQ(!error.empty(), c.bad) << error;
    if (c.bad)
      EXPECT_EQ(error, "MODELC_CONV_IMPLEMENTATION=quickest is not tuned, "
                       "first, fastest or last");
  }
}

/// The table of measured exceptions: one entry (f32 depthwise on AMD
/// family 25), nothing for Intel, another family, another type, a dense
/// convolution or another first choice.
TEST(PickImplementation, TheTableOfExceptions) {
  const std::string brdgmm = "brdgmm_dw:avx512_core";
  CpuIdentity zen4{true, 25}, zen5{true, 26}, intel{false, 6};
  EXPECT_EQ(preferredImplementation(brdgmm, dnnl_f32, true, zen4),
            "jit_dw:avx512_core");
  EXPECT_EQ(preferredImplementation(brdgmm, dnnl_f32, true, intel), "");
  EXPECT_EQ(preferredImplementation(brdgmm, dnnl_f32, true, zen5), "");
  EXPECT_EQ(preferredImplementation(brdgmm, dnnl_bf16, true, zen4), "");
  EXPECT_EQ(preferredImplementation(brdgmm, dnnl_f32, false, zen4), "");
  EXPECT_EQ(
      preferredImplementation("brgconv:avx512_core", dnnl_f32, true, zen4), "");
}

/// hostCpu reads cpuid: on x86 its vendor and family are what Linux's
/// /proc/cpuinfo says (vendor_id, "cpu family": base plus extended family
/// where the base is 15, as hostCpu computes it).
TEST(PickImplementation, TheHostCpu) {
  CpuIdentity cpu = hostCpu();
#if defined(__x86_64__) || defined(__i386__)
  std::FILE *f = std::fopen("/proc/cpuinfo", "r");
  if (!f)
    GTEST_SKIP() << "no /proc/cpuinfo";
  char line[512];
  std::string vendor;
  int family = -1;
  while (std::fgets(line, sizeof line, f) && (vendor.empty() || family < 0)) {
    const char *colon = std::strchr(line, ':');
    if (!colon)
      continue;
    if (std::strncmp(line, "vendor_id", 9) == 0 && vendor.empty())
      vendor = std::strstr(colon, "AuthenticAMD") ? "amd" : "other";
    else if (std::strncmp(line, "cpu family", 10) == 0 && family < 0)
      family = std::atoi(colon + 1);
  }
  std::fclose(f);
  ASSERT_FALSE(vendor.empty());
  ASSERT_GT(family, 0);
  EXPECT_EQ(cpu.amd, vendor == "amd");
  EXPECT_EQ(cpu.family, family);
#else
  EXPECT_FALSE(cpu.amd);
  EXPECT_EQ(cpu.family, 0);
#endif
}

/// A convolution description of `c` input channels, `o` outputs in
/// `groups` groups, 3x3, 8x8, NHWC.
dnnl_convolution_desc_t convolution(int64_t c, int64_t o, int64_t groups) {
  dnnl_convolution_desc_t op{};
  dnnl_dims_t srcDims = {1, c, 8, 8}, dstDims = {1, o, 8, 8}, strides = {1, 1},
              pad = {1, 1}, dilation = {0, 0};
  dnnl_memory_desc_t src, weight, dst;
  dnnl_memory_desc_init_by_tag(&src, 4, srcDims, dnnl_f32, dnnl_nhwc);
  dnnl_memory_desc_init_by_tag(&dst, 4, dstDims, dnnl_f32, dnnl_nhwc);
  if (groups == 1) {
    dnnl_dims_t w = {o, c, 3, 3};
    dnnl_memory_desc_init_by_tag(&weight, 4, w, dnnl_f32, dnnl_format_tag_any);
  } else {
    dnnl_dims_t w = {groups, o / groups, c / groups, 3, 3};
    dnnl_memory_desc_init_by_tag(&weight, 5, w, dnnl_f32, dnnl_format_tag_any);
  }
  EXPECT_EQ(dnnl_dilated_convolution_forward_desc_init(
                &op, dnnl_forward_inference, dnnl_convolution_direct, &src,
                &weight, nullptr, &dst, strides, dilation, pad, pad),
            dnnl_success);
  return op;
}

TEST(PickImplementation, WhichConvolutionsAreDepthwise) {
  EXPECT_TRUE(isDepthwise(convolution(16, 16, 16)));
  EXPECT_FALSE(isDepthwise(convolution(16, 16, 1)));  // dense
  EXPECT_FALSE(isDepthwise(convolution(16, 16, 2)));  // 8 channels a group
  EXPECT_FALSE(isDepthwise(convolution(16, 32, 16))); // 2 outputs a group
}

/// A depthwise 3x3 convolution of 32 channels, 28x28, in NHWC (oneDNN has
/// several implementations for it on any x86 CPU), and its first choice.
struct Depthwise {
  dnnl_engine_t engine = nullptr;
  dnnl_convolution_desc_t op{};
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_primitive_desc_t first = nullptr;
  Depthwise() {
    EXPECT_EQ(dnnl_engine_create(&engine, dnnl_cpu, 0), dnnl_success);
    dnnl_dims_t srcDims = {1, 32, 28, 28}, weightDims = {32, 1, 1, 3, 3},
                biasDims = {32}, strides = {1, 1}, pad = {1, 1},
                dilation = {0, 0};
    dnnl_memory_desc_t src, weight, bias, dst;
    dnnl_memory_desc_init_by_tag(&src, 4, srcDims, dnnl_f32, dnnl_nhwc);
    dnnl_memory_desc_init_by_tag(&weight, 5, weightDims, dnnl_f32,
                                 dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&bias, 1, biasDims, dnnl_f32, dnnl_x);
    dnnl_memory_desc_init_by_tag(&dst, 4, srcDims, dnnl_f32, dnnl_nhwc);
    EXPECT_EQ(dnnl_dilated_convolution_forward_desc_init(
                  &op, dnnl_forward_inference, dnnl_convolution_direct, &src,
                  &weight, &bias, &dst, strides, dilation, pad, pad),
              dnnl_success);
    EXPECT_EQ(dnnl_primitive_attr_create(&attr), dnnl_success);
    EXPECT_EQ(dnnl_primitive_desc_create(&first, &op, attr, engine, nullptr),
              dnnl_success);
  }
  ~Depthwise() {
    dnnl_primitive_attr_destroy(attr);
    dnnl_engine_destroy(engine);
  }
  /// Whether `pd` reads and writes the layouts `first` does.
  static bool sameLayouts(const_dnnl_primitive_desc_t pd,
                          const_dnnl_primitive_desc_t first) {
    for (dnnl_query_t q : {dnnl_query_src_md, dnnl_query_dst_md})
      if (!dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, q, 0),
                                  dnnl_primitive_desc_query_md(first, q, 0)))
        return false;
    return true;
  }
};

TEST(PickImplementation, CandidatesKeepTheFirstChoicesLayouts) {
  std::string firstName;
  {
    Depthwise d;
    ASSERT_NE(d.first, nullptr);
    firstName = implementationName(d.first);
    ASSERT_FALSE(firstName.empty());
    // First: the first itself.
    EXPECT_EQ(pickConvolution(d.first, d.op, d.attr, true, {}, d.engine,
                              ImplementationChoice::First),
              d.first);
    dnnl_primitive_desc_destroy(d.first);
  }
  {
    // Tuned: the table's choice for this CPU where it names one, else the
    // first itself.
    Depthwise d;
    ASSERT_NE(d.first, nullptr);
    std::string preferred =
        preferredImplementation(firstName, dnnl_f32, true, hostCpu());
    dnnl_primitive_desc_t first = d.first;
    dnnl_primitive_desc_t picked = pickConvolution(
        d.first, d.op, d.attr, true, {}, d.engine, ImplementationChoice::Tuned);
    ASSERT_NE(picked, nullptr);
    if (preferred.empty())
      EXPECT_EQ(picked, first);
    else
      EXPECT_EQ(implementationName(picked), preferred);
    dnnl_primitive_desc_destroy(picked);
  }
  for (ImplementationChoice choice :
       {ImplementationChoice::Last, ImplementationChoice::Fastest}) {
    Depthwise d;
    ASSERT_NE(d.first, nullptr);
    dnnl_primitive_desc_t reference = nullptr;
    ASSERT_EQ(dnnl_primitive_desc_clone(&reference, d.first), dnnl_success);
    dnnl_primitive_desc_t picked =
        pickConvolution(d.first, d.op, d.attr, true, {}, d.engine, choice);
    ASSERT_NE(picked, nullptr);
    std::string name = implementationName(picked);
    EXPECT_TRUE(Depthwise::sameLayouts(picked, reference)) << name;
    EXPECT_NE(name.rfind("ref", 0), 0u) << name;
    if (choice == ImplementationChoice::Last)
      EXPECT_NE(name, firstName); // x86 has more than one for it
    dnnl_primitive_desc_destroy(picked);
    dnnl_primitive_desc_destroy(reference);
  }
}

/// Tuned with the CPU given: the table's entry on any CPU where oneDNN's
/// first choice is the one the entry names (AVX-512): jit_dw with the
/// first's layouts as if on AMD family 25, the first itself as if on
/// Intel.
TEST(PickImplementation, TunedTakesTheTablesEntry) {
  std::string firstName;
  {
    Depthwise d;
    ASSERT_NE(d.first, nullptr);
    firstName = implementationName(d.first);
    dnnl_primitive_desc_destroy(d.first);
  }
  if (firstName != "brdgmm_dw:avx512_core")
    GTEST_SKIP() << "oneDNN's first choice here is " << firstName;
  for (CpuIdentity cpu : {CpuIdentity{true, 25}, CpuIdentity{false, 6}}) {
    Depthwise d;
    ASSERT_NE(d.first, nullptr);
    dnnl_primitive_desc_t reference = nullptr;
    ASSERT_EQ(dnnl_primitive_desc_clone(&reference, d.first), dnnl_success);
    dnnl_primitive_desc_t first = d.first;
    dnnl_primitive_desc_t picked =
        pickConvolution(d.first, d.op, d.attr, true, {}, d.engine,
                        ImplementationChoice::Tuned, cpu);
    ASSERT_NE(picked, nullptr);
    if (cpu.amd) {
      EXPECT_EQ(implementationName(picked), "jit_dw:avx512_core");
      EXPECT_TRUE(Depthwise::sameLayouts(picked, reference));
    } else {
      EXPECT_EQ(picked, first);
    }
    dnnl_primitive_desc_destroy(picked);
    dnnl_primitive_desc_destroy(reference);
  }
}

/// y = min(max(conv(x, w) + b, 0), 6) (`relu6`) or conv(x, w) + b + r,
/// in double.
std::vector<float> reference(const std::vector<float> &x,
                             const std::vector<float> &w,
                             const std::vector<float> &b,
                             const std::vector<float> &r, int64_t c, int64_t hw,
                             int64_t groups, bool relu6) {
  std::vector<float> y(x.size());
  int64_t perGroup = c / groups;
  for (int64_t o = 0; o < c; ++o)
    for (int64_t i = 0; i < hw; ++i)
      for (int64_t j = 0; j < hw; ++j) {
        double s = b[o];
        int64_t g = o / perGroup;
        for (int64_t ic = 0; ic < perGroup; ++ic)
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t q = 0; q < 3; ++q) {
              int64_t row = i + a - 1, col = j + q - 1;
              if (row < 0 || col < 0 || row >= hw || col >= hw)
                continue;
              s += static_cast<double>(
                       x[((g * perGroup + ic) * hw + row) * hw + col]) *
                   w[((o * perGroup + ic) * 3 + a) * 3 + q];
            }
        size_t at = static_cast<size_t>((o * hw + i) * hw + j);
        y[at] = static_cast<float>(relu6 ? std::min(std::max(s, 0.0), 6.0)
                                         : s + r[at]);
      }
  return y;
}

/// A 3x3 convolution (dense and depthwise) with ReLU6 (max and min with
/// scalars) or with a residual as oneDNN's sum, NCHW, through the cache
/// with each choice of implementation: the same values each time.
TEST(PickImplementation, EveryChoiceComputesTheConvolution) {
  const int64_t c = 16, hw = 12;
  for (auto [groups, relu6] :
       {std::pair{int64_t(1), true}, std::pair{int64_t(1), false},
        std::pair{c, true}, std::pair{c, false}}) {
    std::vector<float> x(c * hw * hw), w(c * (c / groups) * 9), b(c),
        r(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6) / 4.0f;
      r[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5) / 8.0f;
    }
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<float>(static_cast<int>(i * 3 % 7) - 3) / 8.0f;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
    std::vector<float> want = reference(x, w, b, r, c, hw, groups, relu6);
    float zero = 0.0f, six = 6.0f;
    modelc_post_op posts[3] = {};
    posts[0].kind = MODELC_POST_BINARY;
    posts[0].alg = MODELC_BINARY_MAX;
    posts[0].broadcast = MODELC_BROADCAST_SCALAR;
    posts[1] = posts[0];
    posts[1].alg = MODELC_BINARY_MIN;
    posts[2].kind = MODELC_POST_SUM;
    posts[2].alpha = 1.0f;
    posts[2].broadcast = MODELC_BROADCAST_FULL;
    const void *operands[] = {&zero, &six};
    const void *sumOperand[] = {r.data()};
    modelc_product p{};
    p.site = 1;
    p.kind = MODELC_PRODUCT_CONV2D;
    int64_t s[18] = {1, c, hw, hw, c, 3, 3, hw, hw,
                     1, 1, 1,  1,  1, 1, 1, 1,  groups};
    std::copy(s, s + 18, p.conv);
    p.num_post_ops = relu6 ? 2 : 1;
    p.post_ops = relu6 ? posts : posts + 2;
    p.what = "conv";
    for (const char *choice : {"tuned", "first", "last", "fastest"}) {
      SCOPED_TRACE(std::string(choice) + ", groups " + std::to_string(groups) +
                   (relu6 ? ", relu6" : ", sum"));
      ChoiceVariable variable(choice);
      PackedProductCache cache;
      PackedProductRun run;
      std::string error;
      PackedProductSite *site = cache.site(p, w.data(), true, error);
      ASSERT_NE(site, nullptr) << error;
      std::vector<float> y(x.size());
      ASSERT_TRUE(run.execute(cache, p, *site, w.data(), x.data(), b.data(),
                              y.data(), relu6 ? operands : sumOperand, error))
          << error;
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_NEAR(y[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
    }
  }
}

/// ReLU6 with its bounds as constants (MODELC_BROADCAST_CONSTANT, ABI 18:
/// the runtime applies them as one clip) and then a per-channel product
/// (an operand, after the clip in oneDNN's list): the same bits as with
/// the bounds as operands, with each choice of implementation, with and
/// without a NaN in the input (the exact path).
TEST(PickImplementation, ConstantBoundsGiveTheSameBits) {
  const int64_t c = 16, hw = 12;
  std::vector<float> x(c * hw * hw), w(c * c * 9), b(c), m(c), r;
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6) / 4.0f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(static_cast<int>(i * 3 % 7) - 3) / 8.0f;
  for (int64_t i = 0; i < c; ++i) {
    b[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
    m[i] = 0.5f + 0.125f * static_cast<float>(i);
  }
  std::vector<float> want = reference(x, w, b, r, c, hw, 1, true);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] *= m[i / (hw * hw)];
  float zero = 0.0f, six = 6.0f;
  auto posts = [](uint32_t broadcast) {
    std::vector<modelc_post_op> list(3);
    for (modelc_post_op &post : list)
      post.kind = MODELC_POST_BINARY;
    list[0].alg = MODELC_BINARY_MAX;
    list[1].alg = MODELC_BINARY_MIN;
    list[0].broadcast = list[1].broadcast = broadcast;
    if (broadcast == MODELC_BROADCAST_CONSTANT)
      list[1].alpha = 6.0f;
    list[2].alg = MODELC_BINARY_MUL;
    list[2].broadcast = MODELC_BROADCAST_CHANNEL;
    return list;
  };
  std::vector<modelc_post_op> scalars = posts(MODELC_BROADCAST_SCALAR),
                              constants = posts(MODELC_BROADCAST_CONSTANT);
  const void *operands[] = {&zero, &six, m.data()};
  auto product = [&](const std::vector<modelc_post_op> &list) {
    modelc_product p{};
    p.site = 1;
    p.kind = MODELC_PRODUCT_CONV2D;
    int64_t s[18] = {1, c, hw, hw, c, 3, 3, hw, hw, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    std::copy(s, s + 18, p.conv);
    p.num_post_ops = static_cast<uint32_t>(list.size());
    p.post_ops = list.data();
    p.what = "conv";
    return p;
  };
  for (bool nan : {false, true}) {
    std::vector<float> in = x;
    if (nan)
      in[5] = std::nanf("");
    for (const char *choice : {"tuned", "first", "last", "fastest"}) {
      SCOPED_TRACE(std::string(choice) + (nan ? ", a NaN" : ""));
      ChoiceVariable variable(choice);
      std::vector<std::vector<float>> ys;
      for (const std::vector<modelc_post_op> *list : {&scalars, &constants}) {
        PackedProductCache cache;
        PackedProductRun run;
        std::string error;
        modelc_product p = product(*list);
        PackedProductSite *site = cache.site(p, w.data(), true, error);
        ASSERT_NE(site, nullptr) << error;
        std::vector<float> y(x.size());
        ASSERT_TRUE(run.execute(cache, p, *site, w.data(), in.data(), b.data(),
                                y.data(), operands, error))
            << error;
        ys.push_back(std::move(y));
      }
      EXPECT_EQ(
          std::memcmp(ys[0].data(), ys[1].data(), ys[0].size() * sizeof(float)),
          0);
      for (size_t i = 0; !nan && i < want.size(); ++i)
        ASSERT_NEAR(ys[1][i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
      if (nan) // the NaN reaches the outputs it touches, as in PyTorch
        EXPECT_TRUE(std::isnan(ys[1][5]));
    }
  }
}

/// kept_pool (ABI 18): the mean of each channel of a convolution's output
/// in the layout the convolution kept, NCHW out; and an error naming the
/// site where the convolution has not run.
TEST(PickImplementation, KeptPoolAveragesTheKeptLayout) {
  const int64_t n = 2, c = 20, hw = 5;
  std::vector<float> x(n * c * hw * hw), w(c * c), y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6) / 4.0f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(static_cast<int>(i * 3 % 7) - 3) / 8.0f;
  modelc_product p{};
  p.site = 1;
  p.kind = MODELC_PRODUCT_CONV2D;
  int64_t s[18] = {n, c, hw, hw, c, 1, 1, hw, hw, 1, 1, 0, 0, 0, 0, 1, 1, 1};
  std::copy(s, s + 18, p.conv);
  p.flags = MODELC_PRODUCT_KEEP_LAYOUT;
  p.y_bytes = y.size() * sizeof(float) * 4; // room for blocked layouts
  y.resize(y.size() * 4);
  p.what = "conv";
  modelc_kept_pool pool{2, 1, n, c, hw, hw, "pool"};
  PackedProductCache cache;
  PackedProductRun run;
  std::string error;
  std::vector<float> means(n * c);
  EXPECT_FALSE(run.pool(cache, pool, y.data(), means.data(), error));
  EXPECT_EQ(error, "reads the layout of call site 1, which has not run");
  PackedProductSite *site = cache.site(p, w.data(), false, error);
  ASSERT_NE(site, nullptr) << error;
  ASSERT_TRUE(run.execute(cache, p, *site, w.data(), x.data(), nullptr,
                          y.data(), nullptr, error))
      << error;
  ASSERT_TRUE(run.pool(cache, pool, y.data(), means.data(), error)) << error;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < c; ++o) {
      double sum = 0;
      for (int64_t at = 0; at < hw * hw; ++at)
        for (int64_t i = 0; i < c; ++i)
          sum +=
              static_cast<double>(w[o * c + i]) * x[(b * c + i) * hw * hw + at];
      double want = sum / (hw * hw);
      EXPECT_NEAR(means[b * c + o], want, 1e-5 * (1 + std::fabs(want)))
          << b << " " << o;
    }
}

TEST(PickImplementation, AnUnknownChoiceFailsEverySite) {
  ChoiceVariable variable("quickest");
  PackedProductCache cache;
  std::vector<float> w(4);
  modelc_product p{};
  p.site = 1;
  p.kind = MODELC_PRODUCT_MATMUL;
  p.m = p.n = p.k = 2;
  p.what = "matmul";
  std::string error;
  EXPECT_EQ(cache.site(p, w.data(), false, error), nullptr);
  EXPECT_EQ(error, "MODELC_CONV_IMPLEMENTATION=quickest is not tuned, "
                   "first, fastest or last");
}

} // namespace
