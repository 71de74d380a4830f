#!/usr/bin/env bash
# smoke.sh - builds the libFuzzer targets with clang and runs each for a
# short time over a copy of its seed corpus: the readers' (a separate build
# dir, MODELC_BUILD_FUZZERS=ON: the fuzzers alone, no LLVM/MLIR or runtime
# library), then the IR pipeline's (the compiler built with clang and ASan
# in another). Fails on any crash, sanitizer report, leak or timeout. CI
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
for target in safetensors npy descriptor; do
  # New inputs go to the copy; the committed corpus stays as it is.
  mkdir -p "$work/$target" "$work/artifacts"
  cp tests/fuzz/corpus/$target/* "$work/$target/"
  echo "fuzzing the $target target for ${seconds}s"
  if ! "$build/bin/modelc-fuzz-$target" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" "$work/$target" \
      >"$work/$target.log" 2>&1; then
    tail -n 60 "$work/$target.log"
    mkdir -p "$build/fuzz-artifacts"
    cp "$work"/artifacts/* "$build/fuzz-artifacts/" 2>/dev/null || true
    echo "smoke.sh: the $target fuzzer failed; inputs in $build/fuzz-artifacts" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done' \
    "$work/$target.log" || true
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
  -DMODELC_BUILD_TESTS=OFF \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer" \
  >/dev/null
cmake --build "$irbuild" --target modelc-ir-fuzz
mkdir -p "$work/ir" "$work/ir-seeds" "$work/artifacts"
cp examples/*.ir tests/e2e/Inputs/*.ir tests/fuzz/corpus/ir/* "$work/ir-seeds/"
echo "fuzzing the IR pipeline for ${seconds}s"
if ! ASAN_OPTIONS=allow_user_poisoning=0 "$irbuild/bin/modelc-ir-fuzz" \
    -dict=tests/fuzz/ir.dict -max_total_time="$seconds" -timeout=20 \
    -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/ir" "$work/ir-seeds" \
    >"$work/ir.log" 2>&1; then
  tail -n 60 "$work/ir.log"
  mkdir -p "$irbuild/fuzz-artifacts"
  cp "$work"/artifacts/* "$irbuild/fuzz-artifacts/" 2>/dev/null || true
  echo "smoke.sh: the IR fuzzer failed; inputs in $irbuild/fuzz-artifacts" >&2
  exit 1
fi
grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done' "$work/ir.log" || true
