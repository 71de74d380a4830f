// seal_main.cpp - modelc-seal: appends the seal (modelc/abi.h's
// modelc_file_seal) to a model.so that was not built by modelc, such as
// the runtime tests' hand-written fixtures. modelc seals its own output.
#include "integrity.hpp"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: modelc-seal MODEL.so [EXTERNAL_WEIGHTS]\n"
                         "Appends the checksum seal the runtime checks at "
                         "load.\n");
    return 2;
  }
  std::string error;
  if (!modelc::integrity::sealModel(argv[1], argc == 3 ? argv[2] : "", error)) {
    std::fprintf(stderr, "modelc-seal: error: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
