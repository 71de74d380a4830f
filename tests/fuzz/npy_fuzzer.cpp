// npy_fuzzer.cpp - libFuzzer target: the runtime's .npy reader
// (read_npy on a std::istringstream) on arbitrary bytes. A modelc::Error
// is the expected answer to malformed input; any other exception, a crash
// or a sanitizer report is a bug.
#include "modelc/npy.hpp"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::istringstream in(
      std::string(reinterpret_cast<const char *>(data), size));
  try {
    modelc::Tensor tensor = modelc::read_npy(in, "fuzz.npy");
    (void)tensor;
  } catch (const modelc::Error &) {
  }
  return 0;
}
