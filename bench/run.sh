#!/usr/bin/env bash
# Benchmarks modelc against ONNX Runtime and PyTorch on the CPU, in one run:
# installs PyTorch (Debian) and ONNX Runtime (npm), builds modelc, exports
# the reference models, times all three, checks outputs against PyTorch,
# and appends a dated table to bench/RESULTS.md.
#
#   ./bench/run.sh [--threads N] [--runs N] [--no-record]
#
# On this workplace's machines OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are set for
# old OpenBLAS builds; they force slower kernels. The run unsets both for
# every engine alike (outputs are checked against PyTorch); set
# MODELC_BENCH_KEEP_OPENBLAS_ENV=1 to keep them.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-debian.sh
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
missing=()
# libopenblas0-pthread: PyTorch's BLAS (without it Debian's torch runs its
# products on the reference BLAS, 20x slower; bench/results.py refuses).
for p in python3-torch python3-torchvision python3-onnx python3-numpy libopenblas0-pthread; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
if [ ! -d bench/ort/node_modules/onnxruntime-node ]; then
  (cd bench/ort && npm install --ignore-scripts --no-audit --no-fund)
fi
./scripts/build.sh
if [ -z "${MODELC_BENCH_KEEP_OPENBLAS_ENV:-}" ]; then
  unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
fi
/usr/bin/python3 bench/run.py "$@"
