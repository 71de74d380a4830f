//===- OnnxExternalData.cpp - initializers stored beside the .onnx file ---===//
//
// ONNX external data (models over 2 GB, or saved with
// save_as_external_data): an initializer's bytes live in a file next to the
// model, named by the tensor's `location` key, at `offset` for `length`
// bytes. They are read here, before the checker and the importer, into the
// tensor's raw_data, so the rest of the import sees an ordinary tensor.
// A location must stay inside the model's folder (relative, no "..").
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/Importer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace modelc;

namespace {

/// The bytes `tensor`'s shape and element type take (at most 2^40
/// elements), or nullopt.
std::optional<uint64_t> expectedBytes(const onnx::TensorProto &tensor) {
  uint64_t width = 0;
  switch (tensor.data_type()) {
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    width = 8;
    break;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    width = 4;
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    width = 2;
    break;
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    width = 1;
    break;
  default:
    return std::nullopt;
  }
  uint64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > (uint64_t(1) << 40) / d))
      return std::nullopt;
    count *= d;
  }
  return count * width;
}

/// Reads one external tensor into its raw_data; false with `why` set.
bool loadTensor(onnx::TensorProto &tensor, StringRef dir, std::string &why) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    uint64_t number = 0;
    if (key == "location") {
      location = entry.value();
    } else if (key == "offset" || key == "length") {
      if (value.getAsInteger(10, number)) {
        why = "its external data " + key.str() + " '" + value.str() +
              "' is not a number";
        return false;
      }
      (key == "offset" ? offset : length.emplace()) = number;
    }
  }
  if (location.empty() || location.find('\0') != std::string::npos) {
    why = "its external data has no valid location";
    return false;
  }
  // Inside the model's folder: relative, and no component goes up.
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](StringRef part) { return part == ".."; })) {
    why = "its external data location '" + location +
          "' is outside the model's folder";
    return false;
  }
  SmallString<256> path(dir);
  llvm::sys::path::append(path, location);
  // Symbolic links resolved: the file itself must be in the folder too.
  SmallString<256> realDir, realPath;
  if (!llvm::sys::fs::real_path(dir, realDir) &&
      !llvm::sys::fs::real_path(path, realPath)) {
    llvm::sys::path::append(realDir, "");
    if (!StringRef(realPath).starts_with(realDir)) {
      why = "its external data location '" + location +
            "' is a link to a file outside the model's folder";
      return false;
    }
  }
  uint64_t size = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, size)) {
    why = "its external data file '" + path.str().str() +
          "' cannot be read: " + ec.message();
    return false;
  }
  if (offset > size || (length && *length > size - offset)) {
    why = "its external data (offset " + std::to_string(offset) +
          (length ? ", length " + std::to_string(*length) : std::string()) +
          ") lies beyond the end of '" + location + "' (" +
          std::to_string(size) + " bytes)";
    return false;
  }
  // Exactly the bytes the tensor's shape needs: a corrupt model must not
  // make the importer read a whole large file.
  std::optional<uint64_t> needed = expectedBytes(tensor);
  if (!needed) {
    why = "its shape or element type is not supported with external data";
    return false;
  }
  if ((length && *length != *needed) || *needed > size - offset) {
    why = "its external data has " +
          std::to_string(length ? *length : size - offset) +
          " bytes, its shape needs " + std::to_string(*needed);
    return false;
  }
  uint64_t count = *needed;
  auto slice = llvm::MemoryBuffer::getFileSlice(path, count, offset,
                                                /*IsVolatile=*/false);
  if (!slice) {
    why = "its external data cannot be read from '" + location +
          "': " + slice.getError().message();
    return false;
  }
  tensor.set_raw_data((*slice)->getBufferStart(), (*slice)->getBufferSize());
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return true;
}

} // namespace

LogicalResult modelc::onnx_import::loadExternalData(onnx::ModelProto &model,
                                                    StringRef dir,
                                                    Location fileLoc) {
  for (onnx::TensorProto &tensor :
       *model.mutable_graph()->mutable_initializer()) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    std::string why;
    if (!loadTensor(tensor, dir, why)) {
      emitError(fileLoc) << "initializer '" << tensor.name() << "': " << why;
      return failure();
    }
  }
  return success();
}
