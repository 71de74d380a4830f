#!/usr/bin/env bash
# Prepares the kit that tests/gpu/check.sh runs on a GPU machine.
#
# A lent GPU machine has CUDA, PyTorch, CMake and ninja but no LLVM/MLIR,
# OpenBLAS or oneDNN, and cannot fetch packages. So models are compiled here
# (GPU kernels by nvcc into the fatbin inside each model.so), their expected
# outputs computed here by the CPU plan (checked against the reference
# interpreter here), and the kit carries modelc-run-lite (the runtime alone)
# with the shared libraries it needs. The kit lands in .gpukit/ (ignored by
# git; under the 64 MiB a device call carries):
#
#   tests/gpu/pack.sh            # here, after scripts/build.sh
#   device run: carry [".gpukit"], command "bash tests/gpu/check.sh"
#
# Per model (mlp, cnn, transformer, transformer in f16, and mlp and cnn
# compiled with --precision=bf16, compared with the f32 model's
# outputs) the weights are one safetensors file shared by its builds
# (--external-weights, or embedded and rounded for bf16; check.sh passes
# --weights):
#   NAME.so      plans cpu, h200, h200x2: placed by the cost model, as users
#                get them
#   NAME.gpu.so  plans cpu and h200 with every op on the GPU (--place-all),
#                so that every kernel runs
# plus gemm.so (a large f16 matrix product, for the cuBLASLt comparison),
# chain.so (a chain of small GPU ops, for the per-op overhead) and ops.so
# (every entry of tests/e2e/Inputs/ops.ir, every op on the GPU).
#
# PACK_CUDA_EMULATION=1 builds the GPU code as host code instead (modelc
# --cuda-emulation): a kit for the stand-in driver (tests/Driver/
# gpu-check.test), with small gemm/chain sizes. Without nvcc and without
# it, pack.sh stops: a kit without GPU code checks nothing on a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
KIT=${KIT:-.gpukit}
EMULATION=${PACK_CUDA_EMULATION:-0}
for tool in modelc modelc-run modelc-run-lite; do
  [[ -x $BUILD/bin/$tool ]] || { echo "pack.sh: $BUILD/bin/$tool is missing; run scripts/build.sh first" >&2; exit 1; }
done
gpuflags=()
if [[ $EMULATION == 1 ]]; then
  gpuflags=(--cuda-emulation)
  gemm_n=64
  chain_n=8
elif ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc && -z ${MODELC_NVCC:-} ]]; then
  echo "pack.sh: no nvcc: the kit's GPU plans need the CUDA toolkit here" >&2
  exit 1
else
  gemm_n=8192
  chain_n=64
fi
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

M="$KIT/models"
modelc() { "$BUILD/bin/modelc" "$@"; }
# name source seed rtol atol: the saved outputs are NAME.so's CPU plan's,
# checked here against the reference interpreter; check.sh compares every
# plan of NAME.so and NAME.gpu.so with them.
manifest="$M/manifest.txt"
: > "$manifest"
while read -r name source seed rtol atol; do
  ir="$source"
  # NAME16: the model written in f16; NAME-bf16: the f32 model compiled
  # with --precision=bf16 (weights embedded: the external file holds f32).
  weights=(--external-weights)
  if [[ $name == *16 && $name != *-bf16 ]]; then
    ir="$M/$name.ir"
    sed -e 's/f32>/f16>/g' "$source" > "$ir"
  elif [[ $name == *-bf16 ]]; then
    # check.sh swaps in NAME.safetensors: the rounded weights model.so holds.
    weights=(--precision=bf16 --save-weights="$M/$name.rounded.safetensors")
  fi
  # The saved outputs are the f32 CPU plan's (NAME-bf16 is compared with
  # them at bf16's tolerance).
  modelc "$ir" --random-weights="$seed" --target=cpu --save-weights="$M/$name.safetensors" -o "$M/$name.cpu-only.so"
  modelc "$ir" --weights="$M/$name.safetensors" "${weights[@]}" \
    --target=cpu --target=h200 --target=h200x2 "${gpuflags[@]}" -o "$M/$name.so"
  modelc "$ir" --weights="$M/$name.safetensors" "${weights[@]}" \
    --target=cpu --target=h200 --place-all=cuda:0 "${gpuflags[@]}" -o "$M/$name.gpu.so"
  outputs=$("$BUILD/bin/modelc-run" "$M/$name.cpu-only.so" --info | sed -n "s/^  output '\(.*\)': .*/\1/p")
  args=()
  expect=()
  for out in $outputs; do
    args+=(--output "$out=$M/$name.$out.npy")
    expect+=("$out")
  done
  "$BUILD/bin/modelc-run" "$M/$name.cpu-only.so" --random-inputs --seed "$seed" --rtol "$rtol" \
    --atol "$atol" --compare-reference "$ir" "${args[@]}" >/dev/null
  # Three runs on other inputs (seeds seed+1..seed+3): a CUDA graph captured
  # on one run must give each later run's own outputs (check.sh --repeat).
  for out in $outputs; do
    cp "$M/$name.$out.npy" "$M/$name.$out.seed$seed.npy"
  done
  for ((k = 1; k <= 3; k++)); do
    args=()
    for out in $outputs; do
      args+=(--output "$out=$M/$name.$out.seed$((seed + k)).npy")
    done
    "$BUILD/bin/modelc-run" "$M/$name.cpu-only.so" --random-inputs --seed "$((seed + k))" \
      "${args[@]}" >/dev/null
  done
  rm -f "$M/$name.cpu-only.so" "$M/$name.ir"
  if [[ -f $M/$name.rounded.safetensors ]]; then
    mv "$M/$name.rounded.safetensors" "$M/$name.safetensors"
  fi
  echo "$name $seed $rtol $atol $(IFS=,; echo "${expect[*]}")" >> "$manifest"
done < <(
  echo "mlp examples/mlp.ir 1 1e-4 1e-5"
  echo "cnn examples/cnn.ir 2 1e-4 1e-5"
  # Emulated kernels are slow: the test kit stops at the small models.
  if [[ $EMULATION != 1 ]]; then
    echo "transformer examples/transformer.ir 3 1e-3 1e-5"
    echo "transformer16 examples/transformer.ir 3 2e-2 2e-2"
    # Embedded weights: the mlp (7.4 MB in all) rather than the transformer
    # (19 MB), to keep the kit under a device call's 64 MiB.
    echo "mlp-bf16 examples/mlp.ir 1 5e-2 2e-2"
  fi
  echo "cnn-bf16 examples/cnn.ir 2 5e-2 2e-2")

# A large f16 matrix product made on the GPU from small inputs (outer
# products), summed to one number: the model's time is the GEMM's plus a
# little, for the comparison with cuBLAS called directly (torch.matmul).
cat > "$M/gemm.ir" <<IR
func.func @forward(%x: tensor<${gemm_n}x1xf16>, %y: tensor<1x${gemm_n}xf16>) -> tensor<f32> {
  %a = graph.mul %x, %y : tensor<${gemm_n}x1xf16>, tensor<1x${gemm_n}xf16>
  %b = graph.mul %y, %x : tensor<1x${gemm_n}xf16>, tensor<${gemm_n}x1xf16>
  %c = graph.matmul %a, %b : tensor<${gemm_n}x${gemm_n}xf16>, tensor<${gemm_n}x${gemm_n}xf16>
  %f = graph.cast %c : tensor<${gemm_n}x${gemm_n}xf16> to f32
  %s = graph.reduce_sum %f : tensor<${gemm_n}x${gemm_n}xf32>
  return %s : tensor<f32>
}
IR
modelc "$M/gemm.ir" --target=h200 --place-all=cuda:0 "${gpuflags[@]}" -o "$M/gemm.so"

# A chain of small ops that do not fuse (softmax after softmax), each its own
# kernel: (time - time of a chain of 1) / (length - 1) is the per-op cost.
chain_ir() {
  local n=$1
  echo "func.func @forward(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {"
  echo "  %v0 = graph.softmax %x {axis = 1} : tensor<1x64xf32>"
  for ((i = 1; i < n; i++)); do
    echo "  %v$i = graph.softmax %v$((i - 1)) {axis = 1} : tensor<1x64xf32>"
  done
  echo "  return %v$((n - 1)) : tensor<1x64xf32>"
  echo "}"
}
chain_ir 1 > "$M/chain1.ir"
chain_ir "$chain_n" > "$M/chain.ir"
modelc "$M/chain1.ir" --target=h200 --place-all=cuda:0 "${gpuflags[@]}" -o "$M/chain1.so"
modelc "$M/chain.ir" --target=h200 --place-all=cuda:0 "${gpuflags[@]}" -o "$M/chain.so"
echo "$gemm_n $chain_n" > "$M/sizes.txt"

# NaN through every epilogue a GPU product may compute (tests/gpu/
# nan-epilogues.ir): alpha, bias, a residual add; and a ReLU, folded only
# with --gpu-relu-epilogue (nan-relu.so), whose result on hardware decides
# whether that fold is safe. The CPU plan's outputs are all NaN.
cp tests/gpu/nan-epilogues.ir "$M/"
modelc "$M/nan-epilogues.ir" --random-weights=5 --target=cpu --target=h200 --place-all=cuda:0 \
  "${gpuflags[@]}" --save-weights="$M/nan.safetensors" -o "$M/nan.so"
modelc "$M/nan-epilogues.ir" --weights="$M/nan.safetensors" --target=cpu --target=h200 \
  --place-all=cuda:0 --gpu-relu-epilogue "${gpuflags[@]}" -o "$M/nan-relu.so"
for entry in relu alpha residual; do
  "$BUILD/bin/modelc-run" "$M/nan.so" --plan cpu --entry "$entry" --random-inputs --seed 1 \
    --compare-reference "$M/nan-epilogues.ir" --output "output0=$M/nan.$entry.npy" >/dev/null
done

# Tensors with no rows (tests/e2e/Inputs/zero-rows.ir): no kernel is
# launched for them, and the buffers next to them keep their values.
modelc tests/e2e/Inputs/zero-rows.ir --target=cpu --target=h200 --place-all=cuda:0 \
  "${gpuflags[@]}" -o "$M/zero.so"
for entry in rows empty_axis; do
  "$BUILD/bin/modelc-run" "$M/zero.so" --plan cpu --entry "$entry" --random-inputs --seed 1 \
    --output-dir "$M/zero.$entry" >/dev/null
done

# Reductions of few outputs over many elements (tests/e2e/Inputs/
# reduce-split.ir): split into chunks over many blocks on a GPU, combined
# in order by a second kernel.
modelc tests/e2e/Inputs/reduce-split.ir --target=cpu --target=h200 --place-all=cuda:0 \
  "${gpuflags[@]}" -o "$M/rsplit.so"
"$BUILD/bin/modelc-run" "$M/rsplit.so" --plan cpu --random-inputs --seed 1 \
  --compare-reference tests/e2e/Inputs/reduce-split.ir --output-dir "$M/rsplit" >/dev/null

# Every op (tests/e2e/Inputs/ops.ir) with every op on the GPU: each entry's
# outputs on seed 1 saved from the CPU plan (checked against the reference
# interpreter here), for check.sh to compare the GPU plan's with.
modelc tests/e2e/Inputs/ops.ir --random-weights=1 --target=cpu --target=h200 --place-all=cuda:0 \
  "${gpuflags[@]}" -o "$M/ops.so"
"$BUILD/bin/modelc-run" "$M/ops.so" --info | awk -F "'" '/^entry / { print $2 }' > "$M/ops.entries"
while read -r entry; do
  "$BUILD/bin/modelc-run" "$M/ops.so" --plan cpu --entry "$entry" --random-inputs --seed 1 \
    --compare-reference tests/e2e/Inputs/ops.ir --output-dir "$M/ops.$entry" >/dev/null
done < "$M/ops.entries"

# A dynamic batch (docs/dynamic.md): the CNN built for batches 1..8, plans
# cpu, h200 as placed and h200x2, and every op on the GPU; the CPU plan's
# outputs at batches 1, 3 and 8 (seed = batch) are check.sh's reference.
sed -e 's/^func.func @forward(%x: tensor<1x3x32x32xf32>)/graph.dim @batch 1 to 1 at 1\nfunc.func @forward(%x: tensor<1x3x32x32xf32> {graph.dims = ["batch", "", "", ""]})/' \
  examples/cnn.ir > "$M/cnn_dynamic.ir"
modelc "$M/cnn_dynamic.ir" --dim batch=1..8@4 --random-weights=2 --save-weights="$M/dynamic.safetensors" \
  --target=cpu --target=h200 --target=h200x2 "${gpuflags[@]}" -o "$M/dynamic.so"
modelc "$M/cnn_dynamic.ir" --dim batch=1..8@4 --weights="$M/dynamic.safetensors" \
  --target=cpu --target=h200 --place-all=cuda:0 "${gpuflags[@]}" -o "$M/dynamic.gpu.so"
for n in 1 3 8; do
  "$BUILD/bin/modelc-run" "$M/dynamic.so" --plan cpu --random-inputs --seed "$n" --dim batch="$n" \
    --compare-reference "$M/cnn_dynamic.ir" --output "output0=$M/dynamic.$n.npy" >/dev/null
done
rm -f "$M/cnn_dynamic.ir"
# Size regimes (docs/dynamic.md): a small MLP over batches of 1..4096 on
# h200x2, the CPU below the cut and a GPU above it; the CPU plan's outputs
# on both sides of the cut.
modelc tests/e2e/Inputs/regimes.ir --random-weights=1 --save-weights="$M/regimes.safetensors" \
  --target=cpu --target=h200x2 "${gpuflags[@]}" -o "$M/regimes.so"
for n in 1 415 416 4096; do
  "$BUILD/bin/modelc-run" "$M/regimes.so" --plan cpu --random-inputs --seed "$n" --dim batch="$n" \
    --compare-reference tests/e2e/Inputs/regimes.ir --output "output0=$M/regimes.$n.npy" >/dev/null
done

# Training on GPUs (docs/training.md): an MLP's step with SGD-momentum,
# plans cpu (two replicas one after the other), h200 (both replicas on one
# GPU) and h200x2 (a replica per GPU, their gradient buckets summed by NCCL
# where it loads, else through host memory). The CPU plan's losses over 5
# steps on seed 1's batch are check.sh's reference.
modelc examples/mlp.ir --random-weights=3 --train --loss=cross_entropy --lr 0.05 --momentum 0.9 \
  --data-parallel --target=cpu --target=h200 --target=h200x2 "${gpuflags[@]}" -o "$M/train.so"
"$BUILD/bin/modelc-run" "$M/train.so" --plan cpu --train-steps 5 --random-inputs --seed 1 \
  > "$M/train.cpu-losses.txt"
# The same step built --distributed for one GPU per rank, every op and
# every sum over the ranks on cuda:0 (graph.all_reduce on the GPU's copy
# stream, rank_all_reduce): run alone (one rank) each sum is a copy on the
# GPU, and the losses are the CPU plan's.
modelc examples/mlp.ir --random-weights=3 --train --loss=cross_entropy --lr 0.05 --momentum 0.9 \
  --distributed --target=h200 --place-all=cuda:0 "${gpuflags[@]}" -o "$M/train-dist.so"

# The hand-made GPU model (tests/runtime/fixtures/cuda_plan.c): the runtime's
# cuda device alone (copies, events, a weight upload; where nvcc built it, a
# real fatbin kernel) on the real driver.
if [[ -f $BUILD/tests/fixtures/cuda_plan_fatbin.so && $EMULATION != 1 ]]; then
  cp "$BUILD/tests/fixtures/cuda_plan_fatbin.so" "$M/cuda_plan.so.fixture"
  touch "$M/cuda_plan.has-kernels"
else
  cp "$BUILD/tests/fixtures/cuda_plan_nocode.so" "$M/cuda_plan.so.fixture"
fi
[[ $EMULATION == 1 ]] && touch "$KIT/emulation"
du -sh "$KIT"
echo "pack.sh: kit ready in $KIT ($(wc -l < "$manifest") models$([[ $EMULATION == 1 ]] && echo ", host-emulated GPU code"))"
