#!/usr/bin/env bash
# Prepares the kit that tests/gpu/check.sh runs on a GPU machine.
#
# A lent GPU machine has CUDA, PyTorch, CMake and ninja but no LLVM/MLIR,
# OpenBLAS or oneDNN, and cannot fetch packages. So models are compiled here,
# their expected outputs computed here (and checked against the reference
# interpreter here), and the kit carries modelc-run-lite (the runtime alone)
# with the shared libraries it needs. The kit lands in .gpukit/ (ignored by
# git; about 35 MB, under the 64 MiB a device call carries):
#
#   tests/gpu/pack.sh            # here, after scripts/build.sh
#   device run: carry [".gpukit"], command "bash tests/gpu/check.sh"
#
# Models: mlp, cnn, transformer (resnet18's 47 MB of weights do not fit;
# bigsplit is a placement example too big to build with weights).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
KIT=${KIT:-.gpukit}
for tool in modelc modelc-run modelc-run-lite; do
  [[ -x $BUILD/bin/$tool ]] || { echo "pack.sh: $BUILD/bin/$tool is missing; run scripts/build.sh first" >&2; exit 1; }
done
rm -rf "$KIT"
mkdir -p "$KIT/bin" "$KIT/models" "$KIT/stage"
cp "$BUILD/bin/modelc-run-lite" "$KIT/bin/"

# Every shared library modelc-run-lite needs beyond glibc and libstdc++.
libs=()
while read -r path; do
  case $(basename "$path") in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*) ;;
    *) cp -L "$path" "$KIT/stage/"; libs+=("$(basename "$path")") ;;
  esac
done < <(ldd "$BUILD/bin/modelc-run-lite" | awk '/=> \// {print $3}')
tar -cJf "$KIT/libs.tar.xz" -C "$KIT/stage" "${libs[@]}"
rm -rf "$KIT/stage"

# name seed rtol atol; the targets each model is built for. GPU targets join
# when the CUDA backend lands (issue 5); modelc refuses them until then.
manifest="$KIT/models/manifest.txt"
: > "$manifest"
while read -r name seed rtol atol; do
  so="$KIT/models/$name.so"
  "$BUILD/bin/modelc" "examples/$name.ir" --random-weights="$seed" -o "$so"
  outputs=$("$BUILD/bin/modelc-run" "$so" --info | sed -n "s/^  output '\(.*\)': .*/\1/p")
  args=()
  expect=()
  for out in $outputs; do
    args+=(--output "$out=$KIT/models/$name.$out.npy")
    expect+=("$out")
  done
  # The saved outputs are the CPU plan's, checked here against the
  # reference interpreter; check.sh compares every plan with them.
  "$BUILD/bin/modelc-run" "$so" --random-inputs --seed "$seed" --rtol "$rtol" \
    --atol "$atol" --compare-reference "examples/$name.ir" "${args[@]}" >/dev/null
  echo "$name $seed $rtol $atol $(IFS=,; echo "${expect[*]}")" >> "$manifest"
done <<'MODELS'
mlp 1 1e-4 1e-5
cnn 2 1e-4 1e-5
transformer 3 1e-3 1e-5
MODELS
# The hand-made GPU model (tests/runtime/fixtures/cuda_plan.c): it checks
# the runtime's cuda device on a real GPU before modelc generates kernels.
# Where nvcc built it, with a real fatbin of copy_kernel.cu (its "kernel"
# plan launches it); else without GPU code (copy-only plans).
if [[ -f $BUILD/tests/fixtures/cuda_plan_fatbin.so ]]; then
  cp "$BUILD/tests/fixtures/cuda_plan_fatbin.so" "$KIT/models/cuda_plan.so.fixture"
  touch "$KIT/models/cuda_plan.has-kernels"
else
  cp "$BUILD/tests/fixtures/cuda_plan_nocode.so" "$KIT/models/cuda_plan.so.fixture"
fi
du -sh "$KIT"
echo "pack.sh: kit ready in $KIT ($(wc -l < "$manifest") models)"
