#!/usr/bin/env bash
# Installs what modelc needs to build and test on Debian 12 (run as root, or
# with sudo available): LLVM/MLIR 22 and its lit/FileCheck, CMake, Ninja,
# GoogleTest, OpenBLAS, oneDNN.
set -euo pipefail
packages=(cmake ninja-build g++ git
          llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          libgtest-dev libopenblas-dev libdnnl-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
