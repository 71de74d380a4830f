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
  I8 = 6,
  I16 = 7,
  U8 = 8, ///< ui8 in the IR (unsigned)
  U16 = 9,
  U32 = 10,
  U64 = 11,
  F64 = 12,
};

/// The IR spelling: "f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64",
/// "ui8", "ui16", "ui32", "ui64", "i1".
std::string_view dtypeName(DType dtype);

/// Bytes per element in memory.
std::size_t dtypeSize(DType dtype);

/// The DType an IR spelling names, or nullopt.
std::optional<DType> parseDType(std::string_view name);

/// Element `index` of `data` (elements of `dtype`) as a double: f16/bf16
/// widened, integers converted (exactly up to 2^53).
double elementAsDouble(DType dtype, const void *data, std::int64_t index);

/// Stores `value` as element `index` of `data`: floats rounded to the
/// element type (f16/bf16 to nearest even), integers truncated toward zero
/// and wrapped to their width, bool as value != 0.
void storeDouble(DType dtype, void *data, std::int64_t index, double value);

/// The DType of a numeric ABI code, or nullopt for an unknown code (as from
/// a model.so built by a newer compiler).
std::optional<DType> dtypeFromCode(std::uint32_t code);

} // namespace modelc

#endif // MODELC_DTYPE_HPP
