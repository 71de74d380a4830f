#!/usr/bin/env bash
# Configures and builds modelc (compiler, runtime, tools, tests) in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR="$(llvm-config-22 --cmakedir)/../mlir" \
  -DLLVM_EXTERNAL_LIT="$(command -v lit-22)"
cmake --build build --target all mlir-doc
