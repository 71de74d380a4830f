// loader.hpp - opening a model.so: the file checks before dlopen, the
// descriptor it exports, and the checks of that descriptor.
#ifndef MODELC_RUNTIME_LOADER_HPP
#define MODELC_RUNTIME_LOADER_HPP

#include "modelc/abi.h"
#include "modelc/runtime.hpp"

#include <memory>
#include <string>
#include <vector>

namespace modelc::detail {

/// dlopen handle closed when the last user lets go.
struct Library {
  void *handle = nullptr;
  Library() = default;
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;
  ~Library();
};

/// "'path'": how messages name a model file.
std::string modelName(const std::string &path);

/// A model.so opened, with its descriptor (valid while `library` lives).
struct OpenedModel {
  std::shared_ptr<Library> library;
  const modelc_model_desc *desc = nullptr;
  /// The file's seal (checked): what it records of the external weights.
  modelc_file_seal seal{};
};

/// Opens the model.so at `path`: checks that it is a complete 64-bit ELF
/// shared object whose seal matches its bytes (integrity.hpp), dlopens it,
/// finds its entry symbol and checks the ABI version of the descriptor it
/// returns. Throws modelc::Error.
OpenedModel openModel(const std::string &path);

/// What the descriptor says beyond its raw tables.
struct DescriptorInfo {
  std::vector<EntryInfo> entries;
  std::vector<DimInfo> dims;
  std::string compilerVersion, compilerFlags;
};

/// Checks every table of `desc` (entries, weights, GPU code, plans) and
/// returns its entry points. Throws modelc::Error naming the model `path`.
DescriptorInfo checkDescriptor(const modelc_model_desc &desc,
                               const std::string &path);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_LOADER_HPP
