// integrity.cpp - writes and checks the seal of a model.so (see
// integrity.hpp and modelc_file_seal in modelc/abi.h).
#include "integrity.hpp"

// xxhash (Debian libxxhash-dev) inlined: no link-time dependency.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace modelc::integrity {

namespace {

struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string quoted(const std::string &path) { return "'" + path + "'"; }

/// The seal's fields after model_hash and model_bytes (the external
/// weights' hash and size) count in model_hash too: a change to them is a
/// corrupt file.
constexpr size_t kSealedTail =
    sizeof(modelc_file_seal) - offsetof(modelc_file_seal, weights_hash);
static_assert(sizeof(modelc_file_seal) == 40 &&
                  offsetof(modelc_file_seal, weights_bytes) ==
                      offsetof(modelc_file_seal, weights_hash) + 8,
              "the seal's layout is part of the model.so format");

bool fileSize(std::FILE *f, uint64_t &size) {
  if (std::fseek(f, 0, SEEK_END) != 0)
    return false;
  long end = std::ftell(f);
  if (end < 0 || std::fseek(f, 0, SEEK_SET) != 0)
    return false;
  size = static_cast<uint64_t>(end);
  return true;
}

} // namespace

bool hashFile(const std::string &path, uint64_t limit, uint64_t &hash,
              uint64_t &bytes, std::string &error, const void *extra,
              size_t extraBytes, const char *what) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    error = std::string("cannot open ") + what + quoted(path) + ": " +
            std::strerror(errno);
    return false;
  }
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  std::vector<unsigned char> chunk(1 << 20);
  bytes = 0;
  while (bytes < limit) {
    size_t want =
        static_cast<size_t>(std::min<uint64_t>(chunk.size(), limit - bytes));
    size_t got = std::fread(chunk.data(), 1, want, f.get());
    XXH3_64bits_update(&state, chunk.data(), got);
    bytes += got;
    if (got < want) {
      if (std::ferror(f.get())) {
        error = std::string("cannot read ") + what + quoted(path) + ": " +
                std::strerror(errno);
        return false;
      }
      break;
    }
  }
  if (extraBytes)
    XXH3_64bits_update(&state, extra, extraBytes);
  hash = XXH3_64bits_digest(&state);
  return true;
}

bool sealModel(const std::string &path, const std::string &externalWeights,
               std::string &error) {
  modelc_file_seal seal{};
  std::memcpy(seal.magic, MODELC_SEAL_MAGIC, sizeof(seal.magic));
  if (!externalWeights.empty() &&
      !hashFile(externalWeights, UINT64_MAX, seal.weights_hash,
                seal.weights_bytes, error))
    return false;
  if (!hashFile(path, UINT64_MAX, seal.model_hash, seal.model_bytes, error,
                &seal.weights_hash, kSealedTail))
    return false;
  File f(std::fopen(path.c_str(), "ab"));
  if (!f || std::fwrite(&seal, sizeof(seal), 1, f.get()) != 1 ||
      std::fflush(f.get()) != 0) {
    error = "cannot write the seal of " + quoted(path) + ": " +
            std::strerror(errno);
    return false;
  }
  return true;
}

bool checkModel(const std::string &path, modelc_file_seal &seal,
                std::string &error) {
  std::string where = "model " + quoted(path);
  File f(std::fopen(path.c_str(), "rb"));
  uint64_t size = 0;
  if (!f) {
    error = "cannot open " + where + ": " + std::strerror(errno);
    return false;
  }
  if (!fileSize(f.get(), size)) {
    error = "cannot read the size of " + where + ": " + std::strerror(errno);
    return false;
  }
  const std::string rebuild = "; rebuild it with modelc";
  if (size < sizeof(seal) ||
      std::fseek(f.get(), static_cast<long>(size - sizeof(seal)), SEEK_SET) !=
          0 ||
      std::fread(&seal, sizeof(seal), 1, f.get()) != 1 ||
      std::memcmp(seal.magic, MODELC_SEAL_MAGIC, sizeof(seal.magic)) != 0) {
    error = where +
            " is not a modelc model, or was changed after modelc built "
            "it: it does not end with the seal modelc appends (truncated, "
            "rewritten by a tool such as strip or objcopy, or built by an "
            "older modelc); rebuild it with modelc";
    return false;
  }
  f.reset();
  uint64_t hash = 0, bytes = 0;
  if (!hashFile(path, size - sizeof(seal), hash, bytes, error,
                &seal.weights_hash, kSealedTail))
    return false;
  if (bytes != seal.model_bytes) {
    error = where + " is corrupt: it holds " + std::to_string(bytes) +
            " bytes before its seal, which records " +
            std::to_string(seal.model_bytes) + rebuild;
    return false;
  }
  if (hash != seal.model_hash) {
    error = where +
            " is corrupt: its checksum does not match the one modelc "
            "recorded (the file changed after it was built)" +
            rebuild;
    return false;
  }
  return true;
}

bool checkWeights(const std::string &file, const modelc_file_seal &seal,
                  std::string &error) {
  if (seal.weights_bytes == 0)
    return true;
  uint64_t hash = 0, bytes = 0;
  if (!hashFile(file, UINT64_MAX, hash, bytes, error, nullptr, 0, "weights "))
    return false;
  if (bytes != seal.weights_bytes || hash != seal.weights_hash) {
    error = "weights file " + quoted(file) +
            " changed since the model was built (" +
            (bytes != seal.weights_bytes
                 ? std::to_string(bytes) + " bytes, the model recorded " +
                       std::to_string(seal.weights_bytes)
                 : std::string("its checksum differs")) +
            "); to run the model with other weights on purpose, pass "
            "them as LoadOptions::weights (modelc-run --weights)";
    return false;
  }
  return true;
}

} // namespace modelc::integrity
