// dtype_test.cpp - element type names, sizes and ABI codes.
#include "modelc/dtype.hpp"

#include <gtest/gtest.h>

using modelc::DType;

TEST(DType, NamesRoundTrip) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I32,
                      DType::I64, DType::Bool}) {
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
}

TEST(DType, UnknownNamesAndCodesAreRejected) {
  EXPECT_FALSE(modelc::parseDType("f64").has_value());
  EXPECT_FALSE(modelc::parseDType("").has_value());
  EXPECT_FALSE(modelc::dtypeFromCode(6).has_value());
  EXPECT_FALSE(modelc::dtypeFromCode(0xffffffffu).has_value());
  EXPECT_EQ(modelc::dtypeFromCode(2), DType::BF16);
}
