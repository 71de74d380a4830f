// kernels_scalar_test.cpp - the element helpers of
// compiler/kernels/cpu/kernels.h: to_f32/from_f32 for f16 and bf16 (round to
// nearest, ties to even, against an independent rounding in double),
// broadcast_offset, int_pow, int_div, int_mod, the activation functions and
// exp_f32 (within 2 ulp of the rounded e^x over every 61st float).
#include "kernel_test_context.h"

#include <cstdio>
#include <cstring>
#include <limits>

using modelc_test::KernelTestContext;

namespace {

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// The 16-bit pattern nearest to `f` (ties to even) for a format with
/// `mantissaBits` stored mantissa bits and exponent bias `bias`, computed in
/// double: the value rounded to a multiple of its format's quantum, then
/// encoded.
uint16_t referenceRound(float f, int mantissaBits, int exponentBits) {
  const int bias = (1 << (exponentBits - 1)) - 1;
  const int minExponent = 1 - bias; // of the smallest normal
  const uint16_t sign = std::signbit(f) ? 1u << 15 : 0;
  const uint16_t infinity = ((1u << exponentBits) - 1) << mantissaBits;
  if (std::isnan(f))
    return sign | infinity | (1u << (mantissaBits - 1));
  double magnitude = std::fabs(double(f));
  if (std::isinf(f))
    return sign | infinity;
  if (magnitude == 0)
    return sign;
  int e;
  std::frexp(magnitude, &e); // magnitude = m * 2^e, m in [0.5, 1)
  int leading = std::max(e - 1, minExponent);
  double quantum = std::ldexp(1.0, leading - mantissaBits);
  double rounded = std::nearbyint(magnitude / quantum) * quantum;
  double largest = std::ldexp(2.0 - std::ldexp(1.0, -mantissaBits), bias);
  if (rounded > largest)
    return sign | infinity;
  if (rounded < std::ldexp(1.0, minExponent)) // subnormal (or zero)
    return sign | static_cast<uint16_t>(
                      rounded / std::ldexp(1.0, minExponent - mantissaBits));
  std::frexp(rounded, &e);
  int exponent = e - 1;
  uint16_t mantissa = static_cast<uint16_t>(
      rounded / std::ldexp(1.0, exponent - mantissaBits) - (1 << mantissaBits));
  return sign | static_cast<uint16_t>((exponent + bias) << mantissaBits) |
         mantissa;
}

/// Floats to round: every 16-bit value, the midpoints and near-midpoints
/// between neighbours, and random floats over the whole range.
template <bool BF16> std::vector<float> probeFloats() {
  std::vector<float> values;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f = BF16 ? modelc::bf16_to_float(bits) : modelc::f16_to_float(bits);
    if (!std::isfinite(f))
      continue;
    values.push_back(f);
    float next =
        BF16 ? modelc::bf16_to_float(bits + 1) : modelc::f16_to_float(bits + 1);
    if (!std::isfinite(next) || std::signbit(next) != std::signbit(f))
      continue;
    float middle = static_cast<float>((double(f) + double(next)) / 2);
    values.push_back(middle);
    values.push_back(std::nextafter(middle, INFINITY));
    values.push_back(std::nextafter(middle, -INFINITY));
  }
  std::mt19937 rng(131);
  for (int i = 0; i < 100000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    float f = fromBits(bits);
    if (!std::isnan(f))
      values.push_back(f);
  }
  for (float special : {INFINITY, -INFINITY, 65504.0f, 65519.99f, 65520.0f,
                        -65520.0f, 3.4028235e38f, 1e-8f, 2.98e-8f, 2.99e-8f,
                        1.1754944e-38f, 1e-45f, -0.0f, 0.0f})
    values.push_back(special);
  return values;
}

template <bool BF16> void checkRounding() {
  const int mantissaBits = BF16 ? 7 : 10, exponentBits = BF16 ? 8 : 5;
  std::vector<float> values = probeFloats<BF16>();
  std::vector<uint16_t> got(values.size());
  KernelTestContext ctx;
  modelc_cpu::from_f32<BF16>(ctx.get(), values.data(), got.data(),
                             static_cast<int64_t>(values.size()));
  int failures = 0;
  for (size_t i = 0; i < values.size() && failures < 10; ++i) {
    uint16_t want = referenceRound(values[i], mantissaBits, exponentBits);
    if (got[i] != want) {
      ++failures;
      ADD_FAILURE() << (BF16 ? "bf16" : "f16") << " of " << values[i]
                    << std::hexfloat << " (" << values[i] << "): got 0x"
                    << std::hex << got[i] << ", want 0x" << want;
    }
  }
  // Back to f32: exact, and what the reference encoding means.
  std::vector<float> back(values.size());
  modelc_cpu::to_f32<BF16>(ctx.get(), got.data(), back.data(),
                           static_cast<int64_t>(got.size()));
  for (size_t i = 0; i < values.size() && failures < 10; ++i) {
    double error = std::fabs(double(back[i]) - double(values[i]));
    if (std::isinf(back[i]))
      continue;
    // Within half a unit of the 16-bit format at that magnitude.
    int e;
    std::frexp(double(back[i]) == 0 ? double(values[i]) : double(back[i]), &e);
    int leading = std::max(e - 1, 2 - (1 << (exponentBits - 1)));
    if (error > std::ldexp(1.0, leading - mantissaBits - 1)) {
      ++failures;
      ADD_FAILURE() << values[i] << " came back as " << back[i];
    }
  }
}

} // namespace

TEST(CpuKernels, F16RoundsToNearestEven) { checkRounding<false>(); }
TEST(CpuKernels, Bf16RoundsToNearestEven) { checkRounding<true>(); }

TEST(CpuKernels, HalfRoundTripAndNaN) {
  KernelTestContext ctx;
  for (bool bf16 : {false, true}) {
    std::vector<uint16_t> bits(0x10000), again(0x10000);
    for (uint32_t b = 0; b < 0x10000; ++b)
      bits[b] = static_cast<uint16_t>(b);
    std::vector<float> f(0x10000);
    if (bf16) {
      modelc_cpu::to_f32<true>(ctx.get(), bits.data(), f.data(), 0x10000);
      modelc_cpu::from_f32<true>(ctx.get(), f.data(), again.data(), 0x10000);
    } else {
      modelc_cpu::to_f32<false>(ctx.get(), bits.data(), f.data(), 0x10000);
      modelc_cpu::from_f32<false>(ctx.get(), f.data(), again.data(), 0x10000);
    }
    const uint16_t exponentMask = bf16 ? 0x7f80 : 0x7c00;
    const uint16_t mantissaMask = bf16 ? 0x007f : 0x03ff;
    for (uint32_t b = 0; b < 0x10000; ++b) {
      bool nan = (b & exponentMask) == exponentMask && (b & mantissaMask);
      EXPECT_EQ(std::isnan(f[b]), nan) << std::hex << b;
      if (nan) {
        EXPECT_EQ(again[b] & exponentMask, exponentMask) << std::hex << b;
        EXPECT_NE(again[b] & mantissaMask, 0) << std::hex << b;
      } else {
        EXPECT_EQ(again[b], b) << (bf16 ? "bf16 " : "f16 ") << std::hex << b;
      }
    }
  }
  // f16 decoding against its definition.
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    int exponent = b >> 10, mantissa = b & 0x3ff;
    double want = exponent == 0 ? std::ldexp(mantissa, -24)
                                : std::ldexp(1024 + mantissa, exponent - 25);
    EXPECT_EQ(double(modelc::f16_to_float(b)), want) << std::hex << b;
    EXPECT_EQ(double(modelc::f16_to_float(b | 0x8000)), -want) << std::hex << b;
  }
}

/// How many floats lie between a and b (both finite, or equal).
int64_t ulpsBetween(float a, float b) {
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

TEST(CpuKernels, ExpF32WithinTwoUlps) {
  // Every 61st bit pattern of both signs: results from 0 through the
  // subnormals to +inf.
  int64_t worst = 0, checked = 0;
  float worstAt = 0.0f;
  for (uint64_t bits = 0; bits < 0x80000000u; bits += 61)
    for (uint32_t sign : {0u, 0x80000000u}) {
      float x = fromBits(static_cast<uint32_t>(bits) | sign);
      if (x != x || std::isinf(x))
        continue;
      float want = static_cast<float>(std::exp(static_cast<double>(x)));
      float got = modelc_cpu::exp_f32(x);
      ASSERT_FALSE(got != got) << "exp_f32(" << x << ") is NaN";
      if (std::isinf(want) || std::isinf(got)) {
        ASSERT_EQ(want, got) << "exp_f32(" << x << ")";
        continue;
      }
      int64_t ulps = ulpsBetween(got, want);
      if (ulps > worst) {
        worst = ulps;
        worstAt = x;
      }
      ++checked;
    }
  EXPECT_LE(worst, 2) << "at x = " << worstAt;
  std::printf("exp_f32: at most %lld ulps (x = %g)\n",
              static_cast<long long>(worst), worstAt);
  EXPECT_GT(checked, 50000000);
  // The edges and the special values.
  EXPECT_EQ(modelc_cpu::exp_f32(0.0f), 1.0f);
  EXPECT_EQ(modelc_cpu::exp_f32(-0.0f), 1.0f);
  EXPECT_EQ(modelc_cpu::exp_f32(-INFINITY), 0.0f);
  EXPECT_EQ(modelc_cpu::exp_f32(INFINITY), INFINITY);
  EXPECT_EQ(modelc_cpu::exp_f32(88.8f), INFINITY);
  EXPECT_EQ(modelc_cpu::exp_f32(1000.0f), INFINITY);
  EXPECT_EQ(modelc_cpu::exp_f32(-1000.0f), 0.0f);
  EXPECT_EQ(modelc_cpu::exp_f32(88.72f), std::exp(88.72f));
  EXPECT_GT(modelc_cpu::exp_f32(-103.0f), 0.0f); // a subnormal
  EXPECT_TRUE(std::isnan(modelc_cpu::exp_f32(NAN)));
  EXPECT_TRUE(std::isnan(modelc_cpu::exp_f32(-NAN)));
}

TEST(CpuKernels, BroadcastOffset) {
  // Output [2, 3, 4]; the operand [3, 1] right-aligned: strides {0, 1, 0}.
  const int64_t dims[] = {2, 3, 4}, strides[] = {0, 1, 0};
  for (int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(modelc_cpu::broadcast_offset(i, 3, dims, strides), (i / 4) % 3)
        << i;
  // A full operand: the offset is the index.
  const int64_t full[] = {12, 4, 1};
  for (int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(modelc_cpu::broadcast_offset(i, 3, dims, full), i);
  // A scalar operand, and rank 0.
  const int64_t none[] = {0, 0, 0};
  EXPECT_EQ(modelc_cpu::broadcast_offset(17, 3, dims, none), 0);
  EXPECT_EQ(modelc_cpu::broadcast_offset(0, 0, nullptr, nullptr), 0);
}

TEST(CpuKernels, IntPow) {
  for (int64_t base = -6; base <= 6; ++base)
    for (int64_t exp = 0; exp <= 12; ++exp) {
      int64_t want = 1;
      for (int64_t i = 0; i < exp; ++i)
        want *= base;
      EXPECT_EQ(modelc_cpu::int_pow<int64_t>(base, exp), want)
          << base << "^" << exp;
      if (want >= INT32_MIN && want <= INT32_MAX) {
        EXPECT_EQ(modelc_cpu::int_pow<int32_t>(int32_t(base), int32_t(exp)),
                  int32_t(want))
            << base << "^" << exp;
      }
    }
  // Negative exponents, as numpy's integer power: 0 except for 1 and -1.
  for (int64_t exp : {-1, -2, -3}) {
    EXPECT_EQ(modelc_cpu::int_pow<int64_t>(1, exp), 1);
    EXPECT_EQ(modelc_cpu::int_pow<int64_t>(-1, exp), exp % 2 ? -1 : 1);
    EXPECT_EQ(modelc_cpu::int_pow<int64_t>(2, exp), 0);
    EXPECT_EQ(modelc_cpu::int_pow<int64_t>(-3, exp), 0);
  }
  EXPECT_EQ(modelc_cpu::int_pow<int32_t>(0, 0), 1);
  EXPECT_EQ(modelc_cpu::int_pow<int32_t>(3, 19), 1162261467);
}

TEST(CpuKernels, IntDiv) {
  for (int32_t a = -9; a <= 9; ++a)
    for (int32_t b = -4; b <= 4; ++b) {
      // Truncation toward zero; division by zero is 0 (docs/ir.md).
      int32_t want =
          b == 0 ? 0 : static_cast<int32_t>(std::trunc(double(a) / b));
      EXPECT_EQ(modelc_cpu::int_div(a, b), want) << a << " / " << b;
      EXPECT_EQ(modelc_cpu::int_div<int64_t>(a, b), want) << a << " / " << b;
    }
}

TEST(CpuKernels, IntMod) {
  for (int32_t a = -9; a <= 9; ++a)
    for (int32_t b = -4; b <= 4; ++b) {
      // Python's % (the divisor's sign) and C's % (the dividend's sign);
      // by zero both are 0 (docs/ir.md).
      int32_t fmod = b == 0 ? 0 : static_cast<int32_t>(std::fmod(a, b));
      int32_t mod = fmod != 0 && (fmod < 0) != (b < 0) ? fmod + b : fmod;
      EXPECT_EQ(modelc_cpu::int_mod(a, b), mod) << a << " % " << b;
      EXPECT_EQ(modelc_cpu::int_mod<int64_t>(a, b), mod) << a << " % " << b;
      EXPECT_EQ(modelc_cpu::int_fmod(a, b), fmod) << a << " fmod " << b;
      EXPECT_EQ(modelc_cpu::int_fmod<int64_t>(a, b), fmod)
          << a << " fmod " << b;
    }
  EXPECT_EQ(modelc_cpu::int_mod(-7, 3), 2);
  EXPECT_EQ(modelc_cpu::int_mod(7, -3), -2);
  EXPECT_EQ(modelc_cpu::int_fmod(-7, 3), -1);
  // The one quotient that overflows does not trap.
  EXPECT_EQ(modelc_cpu::int_mod(std::numeric_limits<int32_t>::min(), -1), 0);
  EXPECT_EQ(
      modelc_cpu::int_fmod(std::numeric_limits<int64_t>::min(), int64_t(-1)),
      0);
}

TEST(CpuKernels, Activations) {
  for (float x : {-6.0f, -2.5f, -1.0f, -0.3f, 0.0f, 0.4f, 1.0f, 3.0f, 7.5f}) {
    double d = x;
    EXPECT_NEAR(modelc_cpu::sigmoid(x), 1 / (1 + std::exp(-d)), 1e-6) << x;
    double tolerance = 2e-6 * (1 + std::fabs(d));
    EXPECT_NEAR(modelc_cpu::gelu_erf(x),
                0.5 * d * (1 + std::erf(d / std::sqrt(2.0))), tolerance)
        << x;
    double inner = std::sqrt(2 / M_PI) * (d + 0.044715 * d * d * d);
    EXPECT_NEAR(modelc_cpu::gelu_tanh(x), 0.5 * d * (1 + std::tanh(inner)),
                tolerance)
        << x;
  }
}

// Philox4x32-10 (common/philox.h) against the known-answer vectors of
// Random123 (the generator's authors' library, kat_vectors).
TEST(CpuKernels, PhiloxKnownAnswers) {
  struct Case {
    uint32_t counter[4], key[2], expected[4];
  } cases[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{~0u, ~0u, ~0u, ~0u},
       {~0u, ~0u},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Case &c : cases)
    for (unsigned word = 0; word < 4; ++word)
      EXPECT_EQ(modelc_philox::philox4x32_10(c.counter[0], c.counter[1],
                                             c.counter[2], c.counter[3],
                                             c.key[0], c.key[1], word),
                c.expected[word])
          << "word " << word;
}

// graph.dropout's CPU kernel: each element x * (keep ? 1 / (1 - p) : 0),
// keep as dropout_keep draws it (the test context runs the chunks last to
// first); NaN stays NaN where dropped (x * 0, as torch's x * mask).
TEST(CpuKernels, DropoutFollowsPhilox) {
  const int64_t n = 100000;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(i % 7) - 3.0f;
  x[5] = std::numeric_limits<float>::quiet_NaN();
  const int64_t step = 12;
  KernelTestContext ctx;
  modelc_cpu::dropout<modelc_cpu::kF32>(ctx.get(), x.data(), &step, y.data(), n,
                                        0.25f, 9, 3);
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool keep = modelc_philox::dropout_keep(9, step, 3, i, 0.25f);
    float expected = x[i] * (keep ? 1.0f / 0.75f : 0.0f);
    if (std::isnan(expected))
      EXPECT_TRUE(std::isnan(y[i])) << i;
    else
      EXPECT_EQ(y[i], expected) << i;
    dropped += !keep;
  }
  EXPECT_TRUE(std::isnan(y[5]));
  // About 25000 (sigma 137).
  EXPECT_GT(dropped, 24300);
  EXPECT_LT(dropped, 25700);
}
