#!/usr/bin/env bash
# smoke.sh - builds the libFuzzer targets with clang and runs each for a
# short time over a copy of its seed corpus: the readers' (a separate build
# dir, MODELC_BUILD_FUZZERS=ON: the fuzzers alone, no LLVM/MLIR or runtime
# library), then the IR pipeline's and the ONNX importer's (the compiler
# built with clang and ASan in another). Fails on any crash, sanitizer report, leak or timeout. CI
# runs it; see tests/fuzz/README.md for long runs.
#   FUZZ_SECONDS   seconds per target (default 30)
#   FUZZ_BUILD     build dir of the readers' fuzzers (default build-fuzz)
#   FUZZ_IR_BUILD  build dir of the IR fuzzer (default build-irfuzz)
#   CC, CXX        the compilers (default clang-22, clang++-22)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-30}
build=${FUZZ_BUILD:-build-fuzz}
export CC=${CC:-clang-22} CXX=${CXX:-clang++-22}

cmake -S . -B "$build" -G Ninja -DMODELC_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" --target modelc-fuzzers

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/artifacts"

# fuzz NAME BUILD BINARY ARGS...: runs BINARY for $seconds over $work/NAME
# (a copy of its seeds: the committed corpus stays as it is); on a finding,
# prints the log's end and keeps the inputs in BUILD/fuzz-artifacts.
fuzz() {
  local name=$1 dir=$2 binary=$3
  shift 3
  echo "fuzzing the $name target for ${seconds}s"
  if ! "$binary" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" "$@" >"$work/$name.log" 2>&1; then
    tail -n 60 "$work/$name.log"
    mkdir -p "$dir/fuzz-artifacts"
    cp "$work"/artifacts/* "$dir/fuzz-artifacts/" 2>/dev/null || true
    echo "smoke.sh: the $name fuzzer failed; inputs in $dir/fuzz-artifacts" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done' \
    "$work/$name.log" || true
}

for target in safetensors npy descriptor; do
  mkdir -p "$work/$target"
  cp tests/fuzz/corpus/$target/* "$work/$target/"
  fuzz "$target" "$build" "$build/bin/modelc-fuzz-$target" \
    -timeout=10 -rss_limit_mb=2048 "$work/$target"
done

# The IR front end's target (tools/modelc-ir-fuzz): the compiler built with
# clang, ASan and libFuzzer's coverage in a folder of its own, the target
# alone. ASan's allow_user_poisoning=0: LLVM's inline allocators poison
# memory from our instrumented code that Debian's uninstrumented libMLIR
# then reads (memcmp), which ASan would report as a use after poison.
irbuild=${FUZZ_IR_BUILD:-build-irfuzz}
cmake -S . -B "$irbuild" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR="$(llvm-config-22 --cmakedir)/../mlir" \
  -DLLVM_EXTERNAL_LIT="$(command -v lit-22)" -DMODELC_IR_FUZZER=ON \
  -DMODELC_ONNX_FUZZER=ON \
  -DMODELC_BUILD_TESTS=OFF \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer" \
  >/dev/null
cmake --build "$irbuild" --target modelc-ir-fuzz modelc-onnx-fuzz
mkdir -p "$work/ir" "$work/ir-seeds"
cp examples/*.ir tests/e2e/Inputs/*.ir tests/fuzz/corpus/ir/* "$work/ir-seeds/"
ASAN_OPTIONS=allow_user_poisoning=0 fuzz ir "$irbuild" \
  "$irbuild/bin/modelc-ir-fuzz" -dict=tests/fuzz/ir.dict -timeout=20 \
  -rss_limit_mb=4096 -max_len=65536 "$work/ir" "$work/ir-seeds"

# The ONNX importer's target (tools/modelc-onnx-fuzz), from the same build:
# small models of tests/onnx/make_models.py as seeds.
mkdir -p "$work/onnx"
cp tests/fuzz/corpus/onnx/* "$work/onnx/"
ASAN_OPTIONS=allow_user_poisoning=0 fuzz onnx "$irbuild" \
  "$irbuild/bin/modelc-onnx-fuzz" -timeout=20 -rss_limit_mb=4096 \
  -max_len=65536 "$work/onnx"
