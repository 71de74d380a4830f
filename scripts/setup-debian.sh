#!/usr/bin/env bash
# Installs what modelc needs to build and test on Debian 12 (run as root, or
# with sudo available): LLVM/MLIR 22 and its lit/FileCheck, CMake, Ninja,
# GoogleTest, oneDNN, libonnx (ONNX import), and PyTorch,
# torchvision, numpy and python3-onnx for the tests that compare with PyTorch (tests/torch,
# tests/onnx), pybind11 and pytest for the Python module (python/), and
# clang-22 with libFuzzer for the fuzz targets (tests/fuzz), and Open MPI
# for distributed training.
set -euo pipefail
packages=(cmake ninja-build g++ git
          llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          libgtest-dev libdnnl-dev
          # The seal of model.so (runtime/src/integrity.cpp): XXH3, a hash at
          # memory speed for checksums of whole models at every load.
          libxxhash-dev
          # The ONNX importer (compiler/Import/Onnx): ONNX 1.12's protobuf
          # classes and checker, and python3-onnx to make test models.
          libonnx-dev libprotobuf-dev python3-onnx
          # tests/torch compares modelc's numerics with PyTorch's; without
          # them those tests are skipped, so CI installs them.
          python3-torch python3-numpy
          # tests/onnx/models.test exports torchvision's ResNet-18 and
          # MobileNets (random weights, no downloads).
          python3-torchvision
          # The `modelc` Python module (python/, docs/python.md) is built
          # with pybind11 against Python's headers; its tests run on pytest.
          # Without them the module is not built or its tests are skipped.
          pybind11-dev python3-dev python3-pytest
          # modelc --placement-svg draws the placed graph with Graphviz's
          # dot (without it, an error says how to install it; the test of
          # the picture needs it).
          graphviz
          # Data-parallel training across processes (docs/training.md):
          # mpirun starts the ranks; the runtime's MPI plugin
          # (runtime/plugins/mpi, loaded at run time, never linked into the
          # runtime or model.so) is built against libopenmpi-dev. Without
          # them distributed runs are an error and their tests are skipped.
          openmpi-bin libopenmpi-dev
          # tests/fuzz: the readers' libFuzzer targets need clang (g++ has
          # no -fsanitize=fuzzer), libFuzzer, and clang's ASan/UBSan
          # runtimes (without those they build with UBSan traps, no ASan).
          clang-22 libfuzzer-22-dev libclang-rt-22-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
