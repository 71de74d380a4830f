// modelc/dtype.hpp - element types shared by the runtime and model.so.
//
// The numeric values of DType are part of the model.so ABI: they are
// written into the descriptor that a compiled model exports. Keep them in
// sync with the compiler's emitter (compiler/ names them in one place).
#ifndef MODELC_DTYPE_HPP
#define MODELC_DTYPE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace modelc {

/// Element type of a tensor.
enum class DType : std::uint8_t {
  F32 = 0,
  F16 = 1,
  BF16 = 2,
  I32 = 3,
  I64 = 4,
  Bool = 5, ///< i1 in the IR, one byte per element in memory
};

/// The IR spelling: "f32", "f16", "bf16", "i32", "i64", "i1".
std::string_view dtypeName(DType dtype);

/// Bytes per element in memory.
std::size_t dtypeSize(DType dtype);

/// The DType an IR spelling names, or nullopt.
std::optional<DType> parseDType(std::string_view name);

/// The DType of a numeric ABI code, or nullopt for an unknown code (as from
/// a model.so built by a newer compiler).
std::optional<DType> dtypeFromCode(std::uint32_t code);

} // namespace modelc

#endif // MODELC_DTYPE_HPP
