// safetensors.hpp - reading safetensors files (memory-mapped).
#ifndef MODELC_RUNTIME_SAFETENSORS_HPP
#define MODELC_RUNTIME_SAFETENSORS_HPP

#include "modelc/dtype.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace modelc {

/// One tensor of a safetensors file.
struct SafetensorsEntry {
  DType dtype;
  std::vector<int64_t> shape;
  const unsigned char *data; ///< inside the mapping
  uint64_t nbytes;
};

/// The tensors of a safetensors image: `size` bytes at `bytes` (the whole
/// file), their data pointing into it. Throws modelc::Error naming `path`
/// for anything malformed: a short file, a bad header (bad JSON, a bad
/// escape, an integer beyond int64, a duplicate key), offsets out of range
/// or overlapping, a shape whose size overflows or disagrees with its
/// offsets, an unsupported dtype. Nesting in `__metadata__` is skipped
/// without recursion, so no header can exhaust the stack.
std::map<std::string, SafetensorsEntry>
parseSafetensors(const std::string &path, const unsigned char *bytes,
                 std::size_t size);

/// A memory-mapped safetensors file (parseSafetensors on its mapping).
class SafetensorsFile {
public:
  explicit SafetensorsFile(const std::string &path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;

  const std::string &path() const { return path_; }
  const std::map<std::string, SafetensorsEntry> &tensors() const {
    return tensors_;
  }

private:
  std::string path_;
  void *mapping_ = nullptr;
  std::size_t size_ = 0;
  std::map<std::string, SafetensorsEntry> tensors_;
};

/// The dtype spelling of safetensors ("F32", "F16", "BF16", "I32", "I64",
/// "BOOL").
const char *safetensorsDTypeName(DType dtype);

} // namespace modelc

#endif // MODELC_RUNTIME_SAFETENSORS_HPP
