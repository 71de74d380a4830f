// safetensors_fuzzer.cpp - libFuzzer target: the runtime's safetensors
// reader (parseSafetensors) on arbitrary bytes. A modelc::Error is the
// expected answer to malformed input; any other exception, a crash or a
// sanitizer report is a bug.
#include "safetensors.hpp"

#include "modelc/runtime.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    auto tensors = modelc::parseSafetensors("fuzz.safetensors", data, size);
    // Touch every tensor's bytes, which must lie inside the input.
    unsigned sum = 0;
    for (const auto &[name, entry] : tensors)
      for (uint64_t i = 0; i < entry.nbytes; ++i)
        sum += entry.data[i];
    (void)sum;
  } catch (const modelc::Error &) {
  }
  return 0;
}
