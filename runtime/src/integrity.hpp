// integrity.hpp - the seal of a model.so (modelc_file_seal in modelc/abi.h):
// checksums of the model file and of its external weights, written by the
// compiler after the link and checked by the runtime before dlopen.
//
// Exception-free, so that the compiler (built without exceptions) links it
// too: each function returns false and sets `error`.
#ifndef MODELC_RUNTIME_INTEGRITY_HPP
#define MODELC_RUNTIME_INTEGRITY_HPP

#include "modelc/abi.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace modelc::integrity {

/// XXH3-64 and size of the first `limit` bytes of the file at `path` (all
/// of it when `limit` is UINT64_MAX), read in chunks, followed by
/// `extraBytes` at `extra`. `what` names the file in errors ("weights ").
bool hashFile(const std::string &path, uint64_t limit, uint64_t &hash,
              uint64_t &bytes, std::string &error, const void *extra = nullptr,
              size_t extraBytes = 0, const char *what = "");

/// Appends the seal to the model.so at `path`: the hash of the file as it
/// is, and the hash and size of `externalWeights` (empty: none).
bool sealModel(const std::string &path, const std::string &externalWeights,
               std::string &error);

/// Reads the seal of the model.so at `path` and checks the file against it;
/// `error` says what is wrong (no seal, a different size, a different
/// hash) in a sentence that names the file.
bool checkModel(const std::string &path, modelc_file_seal &seal,
                std::string &error);

/// Checks the external weights file `file` against `seal` (a no-op when the
/// seal records none).
bool checkWeights(const std::string &file, const modelc_file_seal &seal,
                  std::string &error);

} // namespace modelc::integrity

#endif // MODELC_RUNTIME_INTEGRITY_HPP
