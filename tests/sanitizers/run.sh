#!/usr/bin/env bash
# Sanitizer runs (issue 15; CI runs this from .ci/run after the main build):
#  1. ASan+UBSan: the runtime and its unit tests, built alone (build-asan),
#     e2e runs of the examples and every entry of tests/e2e/Inputs/ops.ir,
#     tests/e2e/Inputs/dtypes.ir (the 8/16-bit, unsigned and f64 kernels)
#     and tests/e2e/Inputs/residual_blocks.ir (convolutions summing over
#     their residual in place) on cpu and checked cpu+sim2 plans, a dynamic batch below its max
#     (examples/mlp_dynamic.ir, the CNN), a dynamic batch and sequence
#     (examples/transformer_dynamic.ir), both size regimes of
#     tests/e2e/Inputs/regimes.ir, and 3 training steps of a CNN, an
#     embedding LM (tests/training/Inputs/torch_train.py), examples/cnn.ir
#     (its convolutions through oneDNN), an MLP with its optimizer state
#     sharded over the ranks (one rank), a distributed MLP whose sums run
#     on the communication thread (the stand-in plugin), on the CPU and on
#     an emulated GPU's copy stream, and an MLP with
#     dropout fed by --data, exported by PyTorch, through an instrumented
#     modelc-run-lite, with each model's generated code instrumented too
#     (modelc compiles it with CXX=tests/sanitizers/cxx-asan). Each run's
#     outputs must match those of the uninstrumented build within
#     modelc-run's default tolerances (the instrumented code may vectorise
#     a reduction differently).
#  2. TSan: the runtime built alone with -fsanitize=thread (build-tsan) and
#     --concurrent 8 runs on cpu and cpu+sim2 plans. OpenMP is disabled, not
#     instrumented: Debian's libgomp has no TSan build, so every run uses
#     --threads 1 (the runtime's OpenMP pool runs inline) and
#     OMP_NUM_THREADS=1 (oneDNN's own OpenMP regions, one thread each); what
#     TSan checks is the runtime's own synchronisation between concurrent
#     runs, the pooled run resources and the sim devices' stream threads,
#     a distributed step's communication thread (the stand-in plugin; on
#     the CPU and from an emulated GPU's copy stream),
#     and training steps started with Model::run_async (modelc-run
#     --train-steps) while --data reads the next batch.
# Needs ./build (scripts/build.sh) for modelc and the reference outputs.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
modelc=build/bin/modelc
run=build/bin/modelc-run-lite

configure() { # folder, sanitizer flags
  cmake -S . -B "$1" -G Ninja -DMODELC_BUILD_COMPILER=OFF -DMODELC_BUILD_PYTHON=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$2" -DCMAKE_CXX_FLAGS="$2" \
    -DCMAKE_EXE_LINKER_FLAGS="$2" -DCMAKE_SHARED_LINKER_FLAGS="$2" >/dev/null
  cmake --build "$1"
}

# Builds MODEL.ir for a plan twice (plain and instrumented) and records the
# plain build's outputs for every entry.
prepare() { # name, model.ir, modelc flags...
  local name=$1 ir=$2; shift 2
  "$modelc" "$ir" --random-weights=1 "$@" -o "$work/$name.so"
  CXX="$top/tests/sanitizers/cxx-asan" "$modelc" "$ir" --random-weights=1 "$@" \
    -o "$work/$name-asan.so"
}
entries() { awk -F '[@(]' '/^func[.]func @/ { print $2 }' "$1"; }

echo "== ASan+UBSan: the runtime and its tests"
asan="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
configure build-asan "$asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure

echo "== ASan+UBSan: examples, ops.ir and dtypes.ir, generated code instrumented"
checked=0
for target in cpu cpu+sim2; do
  flags=(--target=$target); [ $target = cpu ] || flags+=(--checked)
  for m in examples/mlp.ir examples/cnn.ir examples/transformer.ir tests/e2e/Inputs/ops.ir tests/e2e/Inputs/dtypes.ir tests/e2e/Inputs/residual_blocks.ir; do
    name=$(basename "$m" .ir)-${target/+/_}
    prepare "$name" "$m" "${flags[@]}"
    for e in $(entries "$m"); do
      expect=()
      "$run" "$work/$name.so" --entry "$e" --random-inputs --seed 3 \
        --output-dir "$work/$name-$e" >/dev/null
      for f in "$work/$name-$e"/*.npy; do
        expect+=(--expect "$(basename "$f" .npy)=$f")
      done
      # A sanitizer report or a mismatch (exit status 1) prints the run.
      if ! build-asan/bin/modelc-run-lite "$work/$name-asan.so" --entry "$e" \
          --random-inputs --seed 3 --bench 2 "${expect[@]}" \
          > "$work/out.txt" 2>&1; then
        echo "ASan+UBSan: $name, entry $e failed:"; cat "$work/out.txt"; exit 1
      fi
      checked=$((checked + 1))
    done
  done
done
# Every entry of every model on both plans, so that a change in how the
# entries are found cannot make this pass having checked nothing.
want=0
for m in examples/mlp.ir examples/cnn.ir examples/transformer.ir tests/e2e/Inputs/ops.ir tests/e2e/Inputs/dtypes.ir tests/e2e/Inputs/residual_blocks.ir; do
  want=$((want + 2 * $(entries "$m" | wc -l)))
done
if [ "$checked" -ne "$want" ] || [ "$checked" -lt 40 ]; then
  echo "ASan+UBSan: checked $checked entry points, expected $want" >&2; exit 1
fi
echo "ASan+UBSan: $checked entry points ran clean and matched the plain build"

echo "== ASan+UBSan: a dynamic batch below its max, generated code instrumented"
# examples/mlp_dynamic.ir (batch 1..64) and the cnn with a dynamic batch at
# sizes below the max: the caller's buffers are that size, so code that
# still assumed the max would read or write past them.
# run_sizes NAME N...: NAME.so (plain) and NAME-asan.so at batch N each,
# the instrumented run's output0 against the plain one's.
run_sizes() {
  local name=$1 n; shift
  for n in "$@"; do
    "$run" "$work/$name.so" --random-inputs --seed $n --dim batch=$n \
      --output-dir "$work/$name-$n" >/dev/null
    if ! build-asan/bin/modelc-run-lite "$work/$name-asan.so" --random-inputs \
        --seed $n --dim batch=$n --bench 2 \
        --expect "output0=$work/$name-$n/output0.npy" > "$work/out.txt" 2>&1; then
      echo "ASan+UBSan: $name at batch $n failed:"; cat "$work/out.txt"; exit 1
    fi
  done
}
sed -e 's/^func.func @forward(%x: tensor<1x3x32x32xf32>)/graph.dim @batch 1 to 1 at 1\nfunc.func @forward(%x: tensor<1x3x32x32xf32> {graph.dims = ["batch", "", "", ""]})/' \
  examples/cnn.ir > "$work/cnn_dynamic.ir"
for target in cpu cpu+sim2; do
  flags=(--target=$target); [ $target = cpu ] || flags+=(--checked)
  for m in examples/mlp_dynamic.ir "$work/cnn_dynamic.ir"; do
    name=$(basename "$m" .ir)-${target/+/_}
    prepare "$name" "$m" "${flags[@]}" --dim batch=1..8
    run_sizes "$name" 1 5
  done
done
echo "ASan+UBSan: dynamic batches 1 and 5 ran clean and matched the plain build"
# Size regimes (tests/e2e/Inputs/regimes.ir on checked cpu+sim2: the CPU's
# plan up to 520 rows, sim:0's above): a size in each regime, the runtime
# choosing the plan per run and sharing the regimes' arenas.
prepare regimes "tests/e2e/Inputs/regimes.ir" --target=cpu+sim2 --checked
run_sizes regimes 6 600
echo "ASan+UBSan: both size regimes ran clean and matched the plain build"
# A dynamic batch and sequence (examples/transformer_dynamic.ir): every
# size beyond axis 0 from the run's dimensions (attention's products,
# softmax rows, transposes, broadcast offsets), below the max in both.
# run_dims NAME SPEC...: as run_sizes, each SPEC "batch=2,seq=17".
run_dims() {
  local name=$1 spec; shift
  for spec in "$@"; do
    local dims=() tag=${spec//[=,]/_}
    for d in ${spec//,/ }; do dims+=(--dim "$d"); done
    "$run" "$work/$name.so" --random-inputs --seed 7 "${dims[@]}" \
      --output-dir "$work/$name-$tag" >/dev/null
    if ! build-asan/bin/modelc-run-lite "$work/$name-asan.so" --random-inputs \
        --seed 7 "${dims[@]}" --bench 2 \
        --expect "output0=$work/$name-$tag/output0.npy" > "$work/out.txt" 2>&1; then
      echo "ASan+UBSan: $name at $spec failed:"; cat "$work/out.txt"; exit 1
    fi
  done
}
for target in cpu cpu+sim2; do
  flags=(--target=$target); [ $target = cpu ] || flags+=(--checked)
  name=transformer_dynamic-${target/+/_}
  prepare "$name" examples/transformer_dynamic.ir "${flags[@]}"
  run_dims "$name" batch=1,seq=1 batch=3,seq=17
done
# The batch split over sim:0 and sim:1 at run time (odd batches: unequal
# parts, views of the input's rows).
prepare transformer_dynamic-dp examples/transformer_dynamic.ir --target=cpu+sim2 \
  --checked --data-parallel --dim batch=2..4
run_dims transformer_dynamic-dp batch=3,seq=17 batch=2,seq=1
echo "ASan+UBSan: a dynamic batch and sequence ran clean and matched the plain build"

echo "== ASan+UBSan: a training step, generated code instrumented"
# The backward's kernels (transposed convolutions as GEMM and col2im,
# conv2d_weight_grad, max_pool2d_grad, gather_grad, column reductions) and
# the optimizer's writes: a CNN with BatchNorm and an embedding LM exported
# by PyTorch, 3 steps each on a checked sim plan (the CPU's kernels, each
# task's buffers checked too); the losses must be the plain build's.
# train_clean LABEL MODEL [modelc flags...] -- [modelc-run inputs...]:
# MODEL built plain and instrumented, 3 steps of each; the instrumented
# run must be clean and its losses the plain build's.
train_clean() {
  local label=$1 model=$2
  shift 2
  local flags=() inputs=()
  while [[ $# -gt 0 && $1 != -- ]]; do flags+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  inputs=("$@")
  "$modelc" "$model" "${flags[@]}" -o "$work/t.so"
  CXX="$top/tests/sanitizers/cxx-asan" "$modelc" "$model" "${flags[@]}" -o "$work/t-asan.so"
  "$run" "$work/t.so" --train-steps 3 "${inputs[@]}" > "$work/plain.txt"
  if ! build-asan/bin/modelc-run-lite "$work/t-asan.so" --train-steps 3 \
      "${inputs[@]}" > "$work/asan.txt" 2>&1; then
    echo "ASan+UBSan: training $label failed:"; cat "$work/asan.txt"; exit 1
  fi
  if ! /usr/bin/python3 tests/training/Inputs/compare_losses.py "$work/asan.txt" \
      "$work/plain.txt" > "$work/compare.txt"; then
    echo "ASan+UBSan: training $label: losses differ:"; cat "$work/compare.txt"; exit 1
  fi
  echo "ASan+UBSan: 3 training steps of $label: clean"
}
for model in cnn gpt2_lm; do
  /usr/bin/python3 tests/training/Inputs/torch_train.py --model $model --batch 4 \
    --out "$work/train-$model" --steps 1 >/dev/null 2>&1
  train_clean "$model on cpu+sim2" "$work/train-$model/model.onnx" \
    --train --loss=cross_entropy --lr 0.05 --momentum 0.9 --target=cpu+sim2 \
    --place-all=sim:1 --checked -- \
    --input "x=$work/train-$model/x.npy" --input "target=$work/train-$model/target.npy"
done
# A step's convolutions through oneDNN (sched.dnnl_conv: Winograd and
# direct primitives, the runtime's reorders through per-thread buffers):
# examples/cnn.ir (16 and 32 channels) on the CPU and on a checked sim
# plan (a sim device's worker calls oneDNN).
for target in cpu cpu+sim2; do
  flags=(--train --loss=cross_entropy --lr 0.05 --momentum 0.9 --random-weights=1 --target=$target)
  [[ $target == cpu+sim2 ]] && flags+=(--place-all=sim:1 --checked)
  "$modelc" examples/cnn.ir "${flags[@]}" --emit=scheduled > "$work/scheduled.mlir"
  if ! grep -q 'sched.dnnl_conv = "winograd"' "$work/scheduled.mlir"; then
    echo "ASan+UBSan: examples/cnn.ir's step has no Winograd convolution to check"; exit 1
  fi
  train_clean "examples/cnn.ir (oneDNN convolutions) on $target" examples/cnn.ir \
    "${flags[@]}" -- --random-inputs
done
# A distributed CPU plan's gradient sums on the runtime's communication
# thread beside the backward (modelc-overlap-all-reduce, ABI 15): the
# stand-in plugin plays rank 0 of 2 alike ranks, each sum 2 ms.
(
  export MODELC_COMM_PLUGIN=$top/build/tests/fixtures/fakecomm/libmodelc_comm_fake.so
  export FAKE_COMM_DELAY_MS=2
  train_clean "examples/mlp.ir, distributed, its sums beside the backward" \
    examples/mlp.ir --train --loss=cross_entropy --lr 0.05 --momentum 0.9 \
    --random-weights=1 --distributed --bucket-mb 0.001 -- --distributed \
    --random-inputs
)
# The same on an emulated GPU (--place-all=cuda:0): the sums over the
# ranks on its copy stream (rank_all_reduce, ABI 17), through the host and
# the communication thread (MODELC_NCCL=none).
(
  export MODELC_COMM_PLUGIN=$top/build/tests/fixtures/fakecomm/libmodelc_comm_fake.so
  export FAKE_COMM_DELAY_MS=2 MODELC_NCCL=none FAKE_CUDA_GPUS=1
  export MODELC_CUDA_DRIVER=$top/build/tests/fixtures/fakecuda/libcuda.so.1
  export MODELC_CUBLASLT=$top/build/tests/fixtures/fakecuda/libcublasLt.so.13
  train_clean "examples/mlp.ir, distributed on an emulated GPU, its sums on the GPU's copy stream" \
    examples/mlp.ir --train --loss=cross_entropy --lr 0.05 --momentum 0.9 \
    --random-weights=1 --distributed --bucket-mb 0.001 --target=h200 \
    --place-all=cuda:0 --cuda-emulation -- --distributed --random-inputs
)
# ZeRO-1 across ranks in a run of one rank (it owns every shard): the
# guarded updates (graph.shard), graph.owner_broadcast's copy and the
# state allocated per shard (ABI 16), AdamW's two moments per parameter.
train_clean "examples/mlp.ir, optimizer state sharded over the ranks" \
  examples/mlp.ir --train --loss=cross_entropy --optimizer=adamw --lr 0.01 \
  --random-weights=1 --distributed --shard-optimizer-state -- --random-inputs
# Dropout in training (the Philox kernel, rng_step's write) and batches
# read by modelc-run --data (its reader thread): an MLP with Dropout(0.3).
/usr/bin/python3 tests/training/Inputs/dropout_train.py export --out "$work/drop" \
  >/dev/null 2>&1
for k in 0 1; do
  mkdir -p "$work/drop/batches/$k"
  cp "$work/drop/x.npy" "$work/drop/target.npy" "$work/drop/batches/$k/"
done
flags=(--train --loss=cross_entropy --lr 0.1 --momentum 0.9 --target=cpu+sim2
       --place-all=sim:1 --checked)
"$modelc" "$work/drop/model.onnx" "${flags[@]}" -o "$work/d.so"
CXX="$top/tests/sanitizers/cxx-asan" "$modelc" "$work/drop/model.onnx" \
  "${flags[@]}" -o "$work/d-asan.so"
"$run" "$work/d.so" --train-steps 3 --data "$work/drop/batches" > "$work/plain.txt"
if ! build-asan/bin/modelc-run-lite "$work/d-asan.so" --train-steps 3 \
    --data "$work/drop/batches" > "$work/asan.txt" 2>&1; then
  echo "ASan+UBSan: training with dropout failed:"; cat "$work/asan.txt"; exit 1
fi
if ! /usr/bin/python3 tests/training/Inputs/compare_losses.py "$work/asan.txt" \
    "$work/plain.txt" > "$work/compare.txt"; then
  echo "ASan+UBSan: training with dropout: losses differ:"; cat "$work/compare.txt"; exit 1
fi
echo "ASan+UBSan: 3 training steps with dropout and --data: clean"

echo "== TSan: the runtime, --concurrent 8"
configure build-tsan "-fsanitize=thread -fno-omit-frame-pointer"
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
for target in cpu cpu+sim2; do
  "$modelc" examples/mlp.ir --random-weights=1 --target=$target -o "$work/tsan.so"
  OMP_NUM_THREADS=1 build-tsan/bin/modelc-run-lite "$work/tsan.so" \
    --random-inputs --threads 1 --bench 40 --concurrent 8 >/dev/null
  echo "TSan: mlp on $target, 40 runs on 8 threads: clean"
done
# Training steps started with Model::run_async (its queue thread) while the
# next --data batch is read on the reader's thread.
"$modelc" tests/training/Inputs/mlp.ir --train --random-weights=1 --target=cpu+sim2 \
  --place-all=sim:0 -o "$work/tsan-train.so"
/usr/bin/python3 - "$work/tsan-data" <<'PY'
import os, sys, numpy as np
rng = np.random.default_rng(0)
for k in range(3):
    d = os.path.join(sys.argv[1], str(k)); os.makedirs(d)
    np.save(os.path.join(d, "x.npy"), rng.standard_normal((16, 20)).astype(np.float32))
    np.save(os.path.join(d, "target.npy"), rng.integers(0, 5, 16).astype(np.int64))
PY
OMP_NUM_THREADS=1 build-tsan/bin/modelc-run-lite "$work/tsan-train.so" \
  --threads 1 --train-steps 6 --data "$work/tsan-data" >/dev/null
echo "TSan: 6 asynchronous training steps on sim:0 fed by --data: clean"
# Data-parallel steps: the replicas' sums meet on the devices' copy
# streams (graph.replica_all_reduce): through host memory on two sim
# devices, and through the stand-in NCCL (and without it) on two emulated
# GPUs, also with the adversarial stand-in driver's stream threads.
"$modelc" examples/mlp.ir --train --loss=cross_entropy --random-weights=1 \
  --data-parallel --target=cpu+sim2 -o "$work/tsan-dp.so"
OMP_NUM_THREADS=1 build-tsan/bin/modelc-run-lite "$work/tsan-dp.so" \
  --threads 1 --train-steps 6 --random-inputs >/dev/null
echo "TSan: 6 data-parallel steps on cpu+sim2: clean"
# A distributed CPU plan's sums on the communication thread while the step
# goes on, through the stand-in plugin (rank 0 of 2, each sum 2 ms).
"$modelc" examples/mlp.ir --train --loss=cross_entropy --random-weights=1 \
  --distributed --bucket-mb 0.001 -o "$work/tsan-dist.so"
env MODELC_COMM_PLUGIN=build/tests/fixtures/fakecomm/libmodelc_comm_fake.so \
  FAKE_COMM_DELAY_MS=2 OMP_NUM_THREADS=1 build-tsan/bin/modelc-run-lite \
  "$work/tsan-dist.so" --distributed --threads 1 --train-steps 6 \
  --random-inputs >/dev/null
echo "TSan: 6 distributed steps, their sums on the communication thread: clean"
# A distributed step on an emulated GPU: its sums over the ranks on the
# GPU's copy stream, through the host and the communication thread.
"$modelc" examples/mlp.ir --train --loss=cross_entropy --random-weights=1 \
  --distributed --bucket-mb 0.001 --target=h200 --place-all=cuda:0 \
  --cuda-emulation -o "$work/tsan-dist-gpu.so"
env MODELC_COMM_PLUGIN=build/tests/fixtures/fakecomm/libmodelc_comm_fake.so \
  FAKE_COMM_DELAY_MS=2 MODELC_NCCL=none FAKE_CUDA_GPUS=1 \
  MODELC_CUDA_DRIVER=build/tests/fixtures/fakecuda/libcuda.so.1 \
  MODELC_CUBLASLT=build/tests/fixtures/fakecuda/libcublasLt.so.13 \
  OMP_NUM_THREADS=1 build-tsan/bin/modelc-run-lite "$work/tsan-dist-gpu.so" \
  --distributed --threads 1 --train-steps 6 --random-inputs >/dev/null
echo "TSan: 6 distributed steps on an emulated GPU, their sums on its copy stream: clean"
"$modelc" examples/mlp.ir --train --loss=cross_entropy --random-weights=1 \
  --data-parallel --target=h200x2 --cuda-emulation -o "$work/tsan-dp-gpu.so"
fixtures=build/tests/fixtures
for nccl in "$fixtures/fakenccl/libnccl.so.2" none; do
  for adversarial in 0 5; do
    env MODELC_NCCL="$nccl" FAKE_CUDA_ADVERSARIAL=$adversarial \
      MODELC_CUDA_DRIVER=$fixtures/fakecuda/libcuda.so.1 \
      MODELC_CUBLASLT=$fixtures/fakecuda/libcublasLt.so.13 FAKE_CUDA_GPUS=2 \
      OMP_NUM_THREADS=1 build-tsan/bin/modelc-run-lite "$work/tsan-dp-gpu.so" \
      --threads 1 --train-steps 4 --random-inputs >/dev/null
    echo "TSan: 4 data-parallel steps on two emulated GPUs (MODELC_NCCL=$(basename "$nccl"), FAKE_CUDA_ADVERSARIAL=$adversarial): clean"
  done
done
