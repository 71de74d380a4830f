// dtype_test.cpp - element type names, sizes and ABI codes.
#include "modelc/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>

using modelc::DType;

TEST(DType, NamesRoundTrip) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I32,
                      DType::I64, DType::Bool, DType::I8, DType::I16, DType::U8,
                      DType::U16, DType::U32, DType::U64, DType::F64}) {
    std::optional<DType> parsed = modelc::parseDType(modelc::dtypeName(dtype));
    ASSERT_TRUE(parsed.has_value()) << modelc::dtypeName(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
}

TEST(DType, Sizes) {
  EXPECT_EQ(modelc::dtypeSize(DType::F32), 4u);
  EXPECT_EQ(modelc::dtypeSize(DType::F16), 2u);
  EXPECT_EQ(modelc::dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(modelc::dtypeSize(DType::I32), 4u);
  EXPECT_EQ(modelc::dtypeSize(DType::I64), 8u);
  EXPECT_EQ(modelc::dtypeSize(DType::Bool), 1u);
  EXPECT_EQ(modelc::dtypeSize(DType::I8), 1u);
  EXPECT_EQ(modelc::dtypeSize(DType::I16), 2u);
  EXPECT_EQ(modelc::dtypeSize(DType::U8), 1u);
  EXPECT_EQ(modelc::dtypeSize(DType::U16), 2u);
  EXPECT_EQ(modelc::dtypeSize(DType::U32), 4u);
  EXPECT_EQ(modelc::dtypeSize(DType::U64), 8u);
  EXPECT_EQ(modelc::dtypeSize(DType::F64), 8u);
}

TEST(DType, IRNamesAndCodesOfTheNewTypes) {
  EXPECT_EQ(modelc::dtypeName(DType::U8), "ui8");
  EXPECT_EQ(modelc::dtypeName(DType::F64), "f64");
  EXPECT_EQ(modelc::dtypeFromCode(6), DType::I8);
  EXPECT_EQ(modelc::dtypeFromCode(8), DType::U8);
  EXPECT_EQ(modelc::dtypeFromCode(12), DType::F64);
}

TEST(DType, ElementsAsDoubleAndBack) {
  // Stores wrap integers to their width and round floats to their type;
  // loads widen.
  struct Case {
    DType dtype;
    double stored, loaded;
  } cases[] = {
      {DType::U8, 257, 1},
      {DType::U8, -1, 255},
      {DType::I8, 128, -128},
      {DType::I8, -3.7, -3},
      {DType::I16, 40000, -25536},
      {DType::U16, 65536 + 7, 7},
      {DType::U32, -1, 4294967295.0},
      {DType::U64, 18446744073709549568.0, 18446744073709549568.0},
      {DType::I64, -5, -5},
      {DType::F64, 0.1, 0.1},
      {DType::F32, 0.1, static_cast<double>(0.1f)},
      {DType::F16, 65504, 65504},
      {DType::Bool, 0.5, 1},
      {DType::I32, 1e300, 0},
      {DType::U8, std::nan(""), 0},
  };
  for (const Case &c : cases) {
    unsigned char buffer[16] = {};
    modelc::storeDouble(c.dtype, buffer, 1, c.stored);
    EXPECT_EQ(modelc::elementAsDouble(c.dtype, buffer, 1), c.loaded)
        << modelc::dtypeName(c.dtype) << " " << c.stored;
    EXPECT_EQ(modelc::elementAsDouble(c.dtype, buffer, 0), 0.0);
  }
}

TEST(DType, UnknownNamesAndCodesAreRejected) {
  EXPECT_FALSE(modelc::parseDType("f80").has_value());
  EXPECT_FALSE(modelc::parseDType("si8").has_value());
  EXPECT_FALSE(modelc::parseDType("").has_value());
  EXPECT_FALSE(modelc::dtypeFromCode(13).has_value());
  EXPECT_FALSE(modelc::dtypeFromCode(0xffffffffu).has_value());
  EXPECT_EQ(modelc::dtypeFromCode(2), DType::BF16);
}
