#!/usr/bin/env bash
# Installs modelc into a temporary prefix, compiles examples/mlp.ir with the
# installed modelc, builds examples/cpp against the installed runtime with
# find_package(modelc), and runs it. Needs ./scripts/build.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install build --prefix "$work/prefix" > /dev/null
"$work/prefix/bin/modelc" examples/mlp.ir --random-weights=1 -o "$work/mlp.so"
cmake -S examples/cpp -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/example" > /dev/null
"$work/example/run_model" "$work/mlp.so"
echo "check-install: the installed runtime and the C++ example work"
