// dtype.cpp - names, sizes and codes of element types.
#include "modelc/dtype.hpp"

namespace modelc {
namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", 4}, {DType::F16, "f16", 2}, {DType::BF16, "bf16", 2},
    {DType::I32, "i32", 4}, {DType::I64, "i64", 8}, {DType::Bool, "i1", 1},
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

} // namespace modelc
