#!/usr/bin/env bash
# smoke.sh - builds the libFuzzer targets with clang (a separate build dir,
# MODELC_BUILD_FUZZERS=ON: the fuzzers alone, no LLVM/MLIR or runtime
# library) and runs each for a short time over a copy of its seed corpus.
# Fails on any crash, sanitizer report, leak or timeout. CI runs it; see
# tests/fuzz/README.md for long runs.
#   FUZZ_SECONDS   seconds per target (default 30)
#   FUZZ_BUILD     build dir (default build-fuzz)
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
for target in safetensors npy; do
  # New inputs go to the copy; the committed corpus stays as it is.
  mkdir -p "$work/$target" "$work/artifacts"
  cp tests/fuzz/corpus/$target/* "$work/$target/"
  echo "fuzzing the $target reader for ${seconds}s"
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
