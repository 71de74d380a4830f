// dtype.cpp - names, sizes and codes of element types.
#include "modelc/dtype.hpp"
#include "modelc/half.h"

#include <cmath>
#include <cstring>

namespace modelc {
namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", 4},  {DType::F16, "f16", 2},  {DType::BF16, "bf16", 2},
    {DType::I32, "i32", 4},  {DType::I64, "i64", 8},  {DType::Bool, "i1", 1},
    {DType::I8, "i8", 1},    {DType::I16, "i16", 2},  {DType::U8, "ui8", 1},
    {DType::U16, "ui16", 2}, {DType::U32, "ui32", 4}, {DType::U64, "ui64", 8},
    {DType::F64, "f64", 8},
};
} // namespace

std::string_view dtypeName(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.name;
  return "unknown";
}

std::size_t dtypeSize(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.size;
  return 0;
}

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (info.name == name)
      return info.dtype;
  return std::nullopt;
}

std::optional<DType> dtypeFromCode(std::uint32_t code) {
  for (const DTypeInfo &info : kDTypes)
    if (static_cast<std::uint32_t>(info.dtype) == code)
      return info.dtype;
  return std::nullopt;
}

namespace {
template <typename T> T load(const void *data, std::int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const char *>(data) + index * sizeof(T),
              sizeof(T));
  return v;
}
template <typename T> void put(void *data, std::int64_t index, T v) {
  std::memcpy(static_cast<char *>(data) + index * sizeof(T), &v, sizeof(T));
}
/// `value` truncated toward zero and wrapped to T's width (two's
/// complement), without the undefined behaviour of converting an
/// out-of-range double directly.
template <typename T> T wrapped(double value) {
  if (std::isnan(value))
    return T(0);
  double t = std::trunc(value);
  if (t >= -9.2233720368547758e18 && t < 9.2233720368547758e18)
    return static_cast<T>(
        static_cast<std::uint64_t>(static_cast<std::int64_t>(t)));
  if (t >= 0 && t < 1.8446744073709552e19)
    return static_cast<T>(static_cast<std::uint64_t>(t));
  return T(0);
}
} // namespace

double elementAsDouble(DType dtype, const void *data, std::int64_t index) {
  switch (dtype) {
  case DType::F32:
    return load<float>(data, index);
  case DType::F16:
    return f16_to_float(load<std::uint16_t>(data, index));
  case DType::BF16:
    return bf16_to_float(load<std::uint16_t>(data, index));
  case DType::I32:
    return load<std::int32_t>(data, index);
  case DType::I64:
    return static_cast<double>(load<std::int64_t>(data, index));
  case DType::Bool:
    return load<std::uint8_t>(data, index);
  case DType::I8:
    return load<std::int8_t>(data, index);
  case DType::I16:
    return load<std::int16_t>(data, index);
  case DType::U8:
    return load<std::uint8_t>(data, index);
  case DType::U16:
    return load<std::uint16_t>(data, index);
  case DType::U32:
    return load<std::uint32_t>(data, index);
  case DType::U64:
    return static_cast<double>(load<std::uint64_t>(data, index));
  case DType::F64:
    return load<double>(data, index);
  }
  return 0.0;
}

void storeDouble(DType dtype, void *data, std::int64_t index, double value) {
  switch (dtype) {
  case DType::F32:
    return put<float>(data, index, static_cast<float>(value));
  case DType::F16:
    return put<std::uint16_t>(data, index,
                              float_to_f16(static_cast<float>(value)));
  case DType::BF16:
    return put<std::uint16_t>(data, index,
                              float_to_bf16(static_cast<float>(value)));
  case DType::I32:
    return put(data, index, wrapped<std::int32_t>(value));
  case DType::I64:
    return put(data, index, wrapped<std::int64_t>(value));
  case DType::Bool:
    return put<std::uint8_t>(data, index, value != 0);
  case DType::I8:
    return put(data, index, wrapped<std::int8_t>(value));
  case DType::I16:
    return put(data, index, wrapped<std::int16_t>(value));
  case DType::U8:
    return put(data, index, wrapped<std::uint8_t>(value));
  case DType::U16:
    return put(data, index, wrapped<std::uint16_t>(value));
  case DType::U32:
    return put(data, index, wrapped<std::uint32_t>(value));
  case DType::U64:
    return put(data, index, wrapped<std::uint64_t>(value));
  case DType::F64:
    return put<double>(data, index, value);
  }
}

} // namespace modelc
