#!/usr/bin/env bash
# The GPU check: one command for a machine with an NVIDIA GPU (docs/cuda.md).
# Needs the kit from tests/gpu/pack.sh in .gpukit/ (carried to the machine).
#
#   1. GPU discovery: the runtime opens the real CUDA driver and lists the
#      GPUs; at least one must show. cuBLASLt is found (the system's, or the
#      one PyTorch ships) and named in MODELC_CUBLASLT. The machine is
#      measured as a target (modelc-run --calibrate, the JSON in the logs
#      as target.json) and the CNN's CPU plan timed at 1, 2 and all threads.
#   2. Every kit model (mlp, cnn, transformer in f32, transformer in f16)
#      against the outputs saved where the kit was packed (the CPU plan's,
#      checked there against the reference interpreter): the CPU plan, the
#      cost model's one-GPU plan (h200), the plan with every op on the GPU
#      (every kernel runs), and the two-GPU plan (h200x2) when two GPUs are
#      visible; each with its median latency over 50 runs.
#   3. CUDA graphs: every model's all-GPU plan captured once and replayed
#      (--cuda-graphs) on four inputs, each run against its own saved
#      outputs (a graph whose copies back ran before its kernels would give
#      an earlier run's); from 8 threads at once.
#      Concurrency: the transformer's GPU plan from 8 threads at once, every
#      result equal bit for bit.
#   4. Speed: the MLP's training step against PyTorch eager's
#      (tests/gpu/torch_train_step.py); a large f16 GEMM model against
#      torch.matmul (cuBLAS) on the
#      same GPU; the per-op cost of a chain of GPU ops, without and with a
#      CUDA graph; each model's GPU
#      plan against PyTorch eager (bench/torch_eager.py), both timed from
#      host inputs to host outputs.
#   5. The runtime's cuda device alone on the hand-made model (copies,
#      events, a weight upload, a fatbin kernel).
#   6. compute-sanitizer memcheck over every all-GPU plan, where installed.
#      Before it: a dynamic batch (the CNN at batches 1, 3 and 8 from one
#      model.so) on every GPU plan against the CPU plan's outputs, and size
#      regimes (an MLP on h200x2: the CPU below the cut, a GPU above it).
#   7. NaN through every epilogue of a GPU product (alpha, bias, residual
#      add): must stay NaN. Tensors with no rows beside others. And a measurement: whether this GPU's cuBLASLt
#      ReLU epilogue keeps NaN (modelc --gpu-relu-epilogue is safe only
#      then; off by default).
#
# Prints a short table last, then which checks only hardware can make
# (what the stand-in driver cannot show); full logs go under $OUT when set (else
# /tmp/modelc-gpu-check). Exit status: 0 when everything it checks passes.
# Runs in about 2 minutes on one H200.
set -uo pipefail
cd "$(dirname "$0")/../.."
KIT=${KIT:-.gpukit}
LOG=${OUT:-/tmp/modelc-gpu-check}
mkdir -p "$LOG"
if [[ ! -x $KIT/bin/modelc-run-lite || ! -f $KIT/models/manifest.txt ]]; then
  echo "check.sh: no kit in $KIT; run tests/gpu/pack.sh where modelc builds, and carry .gpukit" >&2
  exit 2
fi
LIBS=$(mktemp -d)
tar -xJf "$KIT/libs.tar.xz" -C "$LIBS"
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
RUN="$KIT/bin/modelc-run-lite"
M="$KIT/models"
# Runs per latency figure; a kit of host-emulated GPU code (the test
# suite's) takes fewer.
BENCH=50
CONCURRENT_RUNS=25
if [[ -f $KIT/emulation ]]; then
  BENCH=2
  CONCURRENT_RUNS=2
fi
failed=0
rows=()
median() { sed -n 's/^bench: .*median \([0-9.]*\) ms.*/\1/p' "$1" | tail -1; }

"$RUN" --devices > "$LOG/devices.txt" 2>&1
gpus=$(grep -c '^cuda:' "$LOG/devices.txt")
cat "$LOG/devices.txt"
if (( gpus == 0 )); then
  rows+=("discovery|-|FAIL|$(tail -1 "$LOG/devices.txt")")
  failed=1
else
  rows+=("discovery|-|OK|$gpus GPU(s): $(sed -n 's/^cuda:0  //p' "$LOG/devices.txt")")
fi

# cuBLASLt: the system's, else the one in PyTorch's wheels.
if [[ -z ${MODELC_CUBLASLT:-} ]] && ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt\.so'; then
  found=$(python3 tests/gpu/find_cublaslt.py 2>/dev/null)
  [[ -n $found ]] && export MODELC_CUBLASLT="$found"
fi
rows+=("cuBLASLt|-|-|${MODELC_CUBLASLT:-the system library path}")

# This machine measured as a target (modelc-run --calibrate): the file is
# what modelc --target=FILE takes, for placing with this GPU's figures
# (docs/placement.md); each device's line is a row.
if timeout 120 "$RUN" --calibrate="$LOG/target.json" > "$LOG/calibrate.txt" 2>&1; then
  while read -r line; do
    rows+=("calibrate|-|-|${line#calibrate: }")
  done < <(grep '^calibrate: ' "$LOG/calibrate.txt" | sed 's/; wrote .*//')
else
  rows+=("calibrate|-|FAIL|$(tail -1 "$LOG/calibrate.txt" | cut -c1-150)")
  failed=1
fi

# Models: plans against the saved outputs.
while read -r name seed rtol atol outputs; do
  expect=()
  for out in ${outputs//,/ }; do
    expect+=(--expect "$out=$M/$name.$out.npy")
  done
  runs=()
  runs+=("$name.so cpu cpu")
  (( gpus >= 1 )) && runs+=("$name.so h200 h200" "$name.gpu.so h200 all-gpu" "$name.gpu.so h200 graph")
  (( gpus >= 2 )) && runs+=("$name.so h200x2 h200x2")
  for r in "${runs[@]}"; do
    read -r so plan label <<< "$r"
    log="$LOG/$name.$label.txt"
    graphs=()
    runExpect=("${expect[@]}")
    if [[ $label == graph ]]; then
      # Four runs, each on its own inputs and outputs: the first without a
      # graph, the second captures, the others replay.
      graphs=(--cuda-graphs --repeat 4)
      runExpect=()
      for out in ${outputs//,/ }; do
        runExpect+=(--expect "$out=$M/$name.$out.seed{seed}.npy")
      done
    fi
    if timeout 120 "$RUN" "$M/$so" --weights "$M/$name.safetensors" --plan "$plan" \
         "${graphs[@]}" --random-inputs --seed "$seed" --rtol "$rtol" --atol "$atol" \
         "${runExpect[@]}" --bench "$BENCH" > "$log" 2>&1; then
      rows+=("$name|$label|OK|median $(median "$log") ms; $(grep -m1 '^expect:' "$log" | sed 's/.*\(max abs error [^,]*\).*/\1/')")
      [[ $label == h200 ]] && echo "$name $(median "$log")" >> "$LOG/modelc_gpu_medians.txt"
    else
      rows+=("$name|$label|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
      failed=1
    fi
  done
  (( gpus < 2 )) && [[ $name == mlp ]] && rows+=("mlp|h200x2|SKIPPED|one GPU visible: no multi-GPU run")
done < "$M/manifest.txt"

# The CPU plan of the small CNN (many small ops) at 1, 2 and all threads:
# what a parallel loop costs on this machine's CPU (on the first H200
# machine, 16 cores, its CPU plan took 0.99 ms where a 2-core machine
# takes 0.06 ms).
if [[ -f $M/cnn.so ]]; then
  detail=""
  for t in 1 2 0; do
    threads=(--threads "$t")
    (( t == 0 )) && threads=()
    log="$LOG/cnn.cpu-threads$t.txt"
    timeout 120 "$RUN" "$M/cnn.so" --weights "$M/cnn.safetensors" --plan cpu --random-inputs \
      "${threads[@]}" --bench "$BENCH" > "$log" 2>&1
    detail+="${detail:+, }$( ((t)) && echo "$t" || echo all) $(median "$log") ms"
  done
  rows+=("cnn threads|cpu|-|$detail ($(nproc) cores)")
fi

if (( gpus >= 1 )); then
  # Eight threads at once, each run's result equal to the first.
  log="$LOG/concurrent.txt"
  cm=transformer
  [[ -f $M/transformer.so ]] || cm=mlp
  if timeout 300 "$RUN" "$M/$cm.so" --weights "$M/$cm.safetensors" --plan h200 \
       --random-inputs --seed 3 --concurrent 8 --bench "$CONCURRENT_RUNS" > "$log" 2>&1; then
    rows+=("$cm|8 thr|OK|$(sed -n 's/^concurrent: //p' "$log")")
  else
    rows+=("$cm|8 thr|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
    failed=1
  fi
  log="$LOG/concurrent-graph.txt"
  if timeout 300 "$RUN" "$M/$cm.gpu.so" --weights "$M/$cm.safetensors" --plan h200 --cuda-graphs \
       --random-inputs --seed 3 --concurrent 8 --bench "$CONCURRENT_RUNS" > "$log" 2>&1; then
    rows+=("$cm|8 graph|OK|$(sed -n 's/^concurrent: //p' "$log")")
  else
    rows+=("$cm|8 graph|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
    failed=1
  fi

  # A large GEMM through modelc (cuBLASLt) against torch.matmul (cuBLAS).
  read -r gemm_n chain_n < "$M/sizes.txt"
  log="$LOG/gemm.txt"
  if timeout 120 "$RUN" "$M/gemm.so" --random-inputs --bench "$BENCH" > "$log" 2>&1; then
    gemm_ms=$(median "$log")
    flops=$(python3 -c "print(2 * $gemm_n ** 3)")
    rows+=("gemm ${gemm_n}^3 f16|h200|OK|modelc model median $gemm_ms ms ($(python3 -c "print(f'{$flops / $gemm_ms / 1e9:.0f}')") TFLOP/s incl. outer products, sum, copies)")
  else
    rows+=("gemm ${gemm_n}^3 f16|h200|FAIL|$(grep -m1 error "$log" | cut -c1-150)")
    failed=1
  fi
  # Per-op cost: a chain of chain_n GPU ops against a chain of one, without
  # and with a CUDA graph.
  for mode in stream graph; do
    flags=()
    [[ $mode == graph ]] && flags=(--cuda-graphs)
    if "$RUN" "$M/chain1.so" "${flags[@]}" --random-inputs --bench 200 > "$LOG/chain1.$mode.txt" 2>&1 &&
       "$RUN" "$M/chain.so" "${flags[@]}" --random-inputs --bench 200 > "$LOG/chain.$mode.txt" 2>&1; then
      a=$(median "$LOG/chain1.$mode.txt"); b=$(median "$LOG/chain.$mode.txt")
      rows+=("per-op cost|$mode|OK|$(python3 -c "print(f'{($b - $a) * 1e3 / ($chain_n - 1):.2f}')") us per GPU op (chain of $chain_n: $b ms, of 1: $a ms)")
    else
      rows+=("per-op cost|$mode|FAIL|see $LOG/chain.$mode.txt")
      failed=1
    fi
  done
fi

# A dynamic batch: one model.so at batches 1, 3 and 8 on each GPU plan,
# kernels and cuBLASLt plans sized from the run (docs/dynamic.md).
if (( gpus >= 1 )) && [[ -f $M/dynamic.so ]]; then
  runs=("dynamic.so h200" "dynamic.gpu.so h200")
  (( gpus >= 2 )) && runs+=("dynamic.so h200x2")
  for r in "${runs[@]}"; do
    read -r so plan <<< "$r"
    log="$LOG/$so.$plan.txt"
    : > "$log"
    ok=1
    for n in 1 3 8; do
      timeout 120 "$RUN" "$M/$so" --plan "$plan" --random-inputs --seed "$n" --dim batch="$n" \
        --expect "output0=$M/dynamic.$n.npy" >> "$log" 2>&1 || ok=0
    done
    if (( ok )); then
      rows+=("cnn dynamic ($so)|$plan|OK|batches 1, 3, 8 against the CPU plan")
    else
      rows+=("cnn dynamic ($so)|$plan|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
      failed=1
    fi
  done
fi

# Size regimes: the MLP of tests/e2e/Inputs/regimes.ir on h200x2 at sizes on
# both sides of the cut (the CPU's regime, then the GPU's), each against the
# CPU plan's outputs.
if (( gpus >= 2 )) && [[ -f $M/regimes.so ]]; then
  log="$LOG/regimes.txt"
  regimes=$("$RUN" "$M/regimes.so" --plan h200x2 --info 2>&1 |
            sed -n 's/^plan h200x2: size regimes of .batch.: \([0-9., ]*\) .*/\1/p')
  : > "$log"
  ok=1
  for n in 1 415 416 4096; do
    timeout 120 "$RUN" "$M/regimes.so" --plan h200x2 --random-inputs --seed "$n" --dim batch="$n" \
      --expect "output0=$M/regimes.$n.npy" >> "$log" 2>&1 || ok=0
  done
  if (( ok )); then
    rows+=("regimes mlp|h200x2|OK|regimes ${regimes:-?}; batches 1, 415, 416, 4096 as the CPU's")
  else
    rows+=("regimes mlp|h200x2|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
    failed=1
  fi
fi

# compute-sanitizer (memcheck), where the machine has it: every kernel of
# the all-GPU plans, one run each, for out-of-bounds and misaligned accesses.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [[ -f $KIT/emulation ]] || (( gpus == 0 )); then
  :
elif [[ -n $sanitizer ]]; then
  while read -r name seed rtol atol outputs; do
    log="$LOG/$name.memcheck.txt"
    if timeout 300 "$sanitizer" --tool memcheck --error-exitcode 9 "$RUN" "$M/$name.gpu.so" \
         --weights "$M/$name.safetensors" --plan h200 --random-inputs --seed "$seed" > "$log" 2>&1; then
      rows+=("$name|memcheck|OK|$(grep -m1 'ERROR SUMMARY' "$log")")
    else
      rows+=("$name|memcheck|FAIL|$(grep -m1 -E 'ERROR SUMMARY|Invalid|error' "$log" | cut -c1-150)")
      failed=1
    fi
  done < "$M/manifest.txt"
else
  rows+=("memcheck|-|-|not run: no compute-sanitizer on this machine")
fi

# NaN through the epilogues of GPU products: alpha, bias and a residual
# add keep it; whether this GPU's ReLU epilogue does is measured.
if (( gpus >= 1 )); then
  for entry in alpha residual relu; do
    log="$LOG/nan.$entry.txt"
    if timeout 120 "$RUN" "$M/nan.so" --weights "$M/nan.safetensors" --plan h200 --entry "$entry" \
         --random-inputs --seed 1 --expect "output0=$M/nan.$entry.npy" > "$log" 2>&1; then
      rows+=("nan $entry|all-gpu|OK|NaN kept")
    else
      rows+=("nan $entry|all-gpu|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
      failed=1
    fi
  done
  # Tensors with no rows next to others: nothing launched, nothing
  # overwritten.
  for entry in rows empty_axis; do
    log="$LOG/zero.$entry.txt"
    expect=()
    for f in "$M/zero.$entry"/*.npy; do
      out=$(basename "$f" .npy)
      expect+=(--expect "$out=$f")
    done
    if timeout 120 "$RUN" "$M/zero.so" --plan h200 --entry "$entry" --random-inputs --seed 1 \
         "${expect[@]}" > "$log" 2>&1; then
      rows+=("zero rows $entry|all-gpu|OK|every output as the CPU's")
    else
      rows+=("zero rows $entry|all-gpu|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
      failed=1
    fi
  done
  # Split reductions (a scalar sum of 90000, columns of 20000 rows, ...)
  # against the CPU plan's outputs.
  if [[ -d $M/rsplit ]]; then
    log="$LOG/rsplit.txt"
    expect=()
    for f in "$M/rsplit"/*.npy; do
      expect+=(--expect "$(basename "$f" .npy)=$f")
    done
    if timeout 120 "$RUN" "$M/rsplit.so" --plan h200 --random-inputs --seed 1 --rtol 1e-3 \
         --atol 1e-5 "${expect[@]}" --bench "$BENCH" > "$log" 2>&1; then
      rows+=("split reductions|all-gpu|OK|every output as the CPU's; median $(median "$log") ms")
    else
      rows+=("split reductions|all-gpu|FAIL|$(grep -m1 -E 'error|MISMATCH' "$log" | cut -c1-150)")
      failed=1
    fi
  fi
  # Every op of ops.ir on the GPU against the CPU plan's outputs (a GPU's
  # transcendental functions may differ from the CPU's in the last bits).
  bad=()
  while read -r entry; do
    log="$LOG/ops.$entry.txt"
    expect=()
    for f in "$M/ops.$entry"/*.npy; do
      expect+=(--expect "$(basename "$f" .npy)=$f")
    done
    timeout 120 "$RUN" "$M/ops.so" --plan h200 --entry "$entry" --random-inputs --seed 1 \
      --rtol 1e-3 --atol 1e-4 "${expect[@]}" > "$log" 2>&1 || bad+=("$entry")
  done < "$M/ops.entries"
  total=$(wc -l < "$M/ops.entries")
  if (( ${#bad[@]} == 0 )); then
    rows+=("ops.ir ($total entries)|all-gpu|OK|every output as the CPU's")
  else
    rows+=("ops.ir ($total entries)|all-gpu|FAIL|${#bad[@]} entries differ or fail: ${bad[*]:0:8} (logs ops.ENTRY.txt)")
    failed=1
  fi
  log="$LOG/nan.relu-epilogue.txt"
  if timeout 120 "$RUN" "$M/nan-relu.so" --weights "$M/nan.safetensors" --plan h200 --entry relu \
       --random-inputs --seed 1 --expect "output0=$M/nan.relu.npy" > "$log" 2>&1; then
    rows+=("relu epilogue|measured|-|cuBLASLt's ReLU epilogue keeps NaN: --gpu-relu-epilogue is safe here")
  elif grep -q MISMATCH "$log"; then
    rows+=("relu epilogue|measured|-|cuBLASLt's ReLU epilogue turns NaN into 0: keep --gpu-relu-epilogue off")
  else
    rows+=("relu epilogue|measured|FAIL|$(grep -m1 error "$log" | cut -c1-150)")
    failed=1
  fi
fi

# The runtime's cuda device alone: the hand-made model's GPU plans (host ->
# GPU -> host, a weight uploaded at load; with two GPUs GPU -> GPU; a fatbin
# kernel) must give what its CPU plan gives.
fixture="$M/cuda_plan.so.fixture"
if [[ -f $fixture ]] && (( gpus >= 1 )); then
  cp "$fixture" "$LIBS/cuda_plan.so"
  "$RUN" "$LIBS/cuda_plan.so" --plan cpu --random-inputs --seed 7 \
    --output y="$LIBS/y.npy" --output w="$LIBS/w.npy" > "$LOG/cuda_device.txt" 2>&1
  plansToRun=(cuda1)
  (( gpus >= 2 )) && plansToRun+=(cuda2)
  [[ -f $M/cuda_plan.has-kernels ]] && plansToRun+=(kernel)
  for plan in "${plansToRun[@]}"; do
    if "$RUN" "$LIBS/cuda_plan.so" --plan "$plan" --random-inputs --seed 7 \
         --expect y="$LIBS/y.npy" --expect w="$LIBS/w.npy" --bench 100 >> "$LOG/cuda_device.txt" 2>&1; then
      what="copies, events, weight upload"
      [[ $plan == kernel ]] && what="a fatbin kernel via launch_kernel"
      rows+=("cuda device|$plan|OK|$what; median $(median "$LOG/cuda_device.txt") ms per run")
    else
      rows+=("cuda device|$plan|FAIL|see $LOG/cuda_device.txt")
      failed=1
    fi
  done
fi

# Training steps on the GPU, and data-parallel over two (NCCL where it
# loads: the line says what summed): the losses of 5 steps as the CPU
# plan's (rtol 1e-4), and a step's time per plan (two GPUs against one:
# the scaling).
if (( gpus >= 1 )) && [[ -f $M/train.so ]]; then
  trainPlans=(h200)
  (( gpus >= 2 )) && trainPlans+=(h200x2)
  for plan in "${trainPlans[@]}"; do
    log="$LOG/train.$plan.txt"
    if timeout 300 "$RUN" "$M/train.so" --plan "$plan" --train-steps 5 --random-inputs --seed 1 \
         > "$log" 2>&1 &&
       paste "$M/train.cpu-losses.txt" "$log" | awk '$1 == "step" {
           d = $4 - $8; if (d < 0) d = -d; s = $4 < 0 ? -$4 : $4;
           if (d > 1e-4 * s + 1e-6) bad = 1 } END { exit bad }'; then
      sums=$("$RUN" "$M/train.so" --plan "$plan" --info 2>/dev/null | sed -n 's/^replica sums: //p')
      # A step's time on a GPU: 25 steps less 5 (the load and first steps
      # cancel). Not timed on a host-emulated kit (seconds a step).
      timing=""
      if [[ ! -f $KIT/emulation ]]; then
        t0=$(date +%s%N)
        timeout 300 "$RUN" "$M/train.so" --plan "$plan" --train-steps 5 --random-inputs --seed 1 >/dev/null 2>&1
        t1=$(date +%s%N)
        timeout 300 "$RUN" "$M/train.so" --plan "$plan" --train-steps 25 --random-inputs --seed 1 >/dev/null 2>&1
        t2=$(date +%s%N)
        step_ms=$(python3 -c "print(f'{(($t2 - $t1) - ($t1 - $t0)) / 20 / 1e6:.2f}')")
        timing="; about $step_ms ms per step"
        [[ $plan == h200 ]] && train_h200_ms=$step_ms
      fi
      rows+=("train mlp|$plan|OK|5 steps' losses as the CPU plan's$timing${sums:+; sums: $sums}")
    else
      rows+=("train mlp|$plan|FAIL|$(grep -m1 -E 'error' "$log" | cut -c1-150)")
      failed=1
    fi
  done
  (( gpus < 2 )) && rows+=("train mlp|h200x2|SKIPPED|one GPU visible: no data-parallel run over two")
fi

# A --distributed step whose sums over the ranks run on the GPU's copy
# stream (graph.all_reduce on cuda:0), run as one rank: the sums are copies
# on the GPU and the losses the CPU plan's (rtol 1e-4). NCCL across ranks
# needs a GPU per rank and mpirun: not run here.
if (( gpus >= 1 )) && [[ -f $M/train-dist.so ]]; then
  log="$LOG/train-dist.txt"
  if timeout 300 "$RUN" "$M/train-dist.so" --train-steps 5 --random-inputs --seed 1 \
       > "$log" 2>&1 &&
     paste "$M/train.cpu-losses.txt" "$log" | awk '$1 == "step" {
         d = $4 - $8; if (d < 0) d = -d; s = $4 < 0 ? -$4 : $4;
         if (d > 1e-4 * s + 1e-6) bad = 1 } END { exit bad }'; then
    rows+=("train mlp --distributed|h200|OK|one rank, its sums on the GPU's copy stream; 5 steps' losses as the CPU plan's")
  else
    rows+=("train mlp --distributed|h200|FAIL|$(grep -m1 -E 'error|step' "$log" | cut -c1-150)")
    failed=1
  fi
fi

# PyTorch on the same GPU: eager, from host inputs to host outputs as a
# modelc run (bench/torch_eager.py --include-copies), and cuBLAS alone.
if [[ -f $KIT/emulation ]]; then
  rows+=("torch|-|-|not run: the kit's GPU code is host-emulated (a test kit)")
elif (( gpus >= 1 )) && python3 -c 'import torch, torchvision' 2>/dev/null; then
  for dtype in float32 float16; do
    python3 bench/torch_eager.py --device cuda --dtype "$dtype" --include-copies \
      --models mlp,transformer > "$LOG/torch_$dtype.txt" 2>&1
    rc=$?
    if (( rc == 0 )); then
      while read -r _ name dev dt _ med _ _ p90 _; do
        ours=""
        key=$name
        [[ $dt == float16 ]] && key=${name}16
        mine=$(sed -n "s/^$key //p" "$LOG/modelc_gpu_medians.txt" 2>/dev/null)
        [[ -n $mine ]] && ours="; modelc h200 $mine ms = $(python3 -c "print(f'{$mine / $med:.2f}')")x PyTorch"
        rows+=("torch $name|$dt|-|median $med ms (eager, with copies)$ours")
      done < "$LOG/torch_$dtype.txt"
    else
      rows+=("torch-eager|$dtype|FAIL|$(tail -1 "$LOG/torch_$dtype.txt")")
      failed=1
    fi
  done
  # The MLP's training step in PyTorch eager on the same GPU, timed as
  # modelc-run --train-steps times one (issue 24: a step against PyTorch).
  if python3 tests/gpu/torch_train_step.py --device cuda > "$LOG/torch_train.txt" 2>&1; then
    tt=$(sed -n 's/^torch-train mlp cuda median \([0-9.]*\) ms.*/\1/p' "$LOG/torch_train.txt")
    ours=""
    [[ -n ${train_h200_ms:-} ]] &&
      ours="; modelc h200 $train_h200_ms ms = $(python3 -c "print(f'{$train_h200_ms / $tt:.2f}')")x PyTorch (modelc's step: two replicas of 32 on the GPU)"
    rows+=("torch train mlp|f32|-|PyTorch eager $tt ms per step (batch 64, SGD momentum)$ours")
  else
    rows+=("torch train mlp|f32|FAIL|$(tail -1 "$LOG/torch_train.txt")")
  fi
  if python3 tests/gpu/torch_gemm.py "$gemm_n" > "$LOG/torch_gemm.txt" 2>&1; then
    tm=$(sed -n 's/^torch-gemm matmul median \([0-9.]*\) ms/\1/p' "$LOG/torch_gemm.txt")
    tmodel=$(sed -n 's/^torch-gemm model median \([0-9.]*\) ms/\1/p' "$LOG/torch_gemm.txt")
    rows+=("torch gemm|f16|-|torch.matmul $tm ms; same model in PyTorch $tmodel ms; modelc model / PyTorch model = $(python3 -c "print(f'{${gemm_ms:-0} / $tmodel:.2f}')")")
  else
    rows+=("torch gemm|f16|FAIL|$(tail -1 "$LOG/torch_gemm.txt")")
  fi
else
  rows+=("torch|-|-|not run: no GPU, or python3 cannot import torch and torchvision")
fi

{
  echo
  printf '%-18s %-8s %-8s %s\n' model plan result detail
  for row in "${rows[@]}"; do
    IFS='|' read -r a b c d <<< "$row"
    printf '%-18s %-8s %-8s %s\n' "$a" "$b" "$c" "$d"
  done
  if (( failed )); then
    echo "RESULT: FAIL"
  else
    echo "RESULT: PASS"
  fi
  echo
  if [[ -f $KIT/emulation ]]; then
    echo "Host-emulated kit (the stand-in driver): none of the checks below ran on a GPU."
  else
    echo "Checks that only this hardware makes (the stand-in driver cannot show them):"
  fi
  echo "  - kernels compiled by nvcc for the GPU, and their speed (every plan, per-op cost, gemm)"
  echo "  - CUDA graphs replayed by the GPU, streams running truly at once (graph, 8 thr, 8 graph)"
  echo "  - what cuBLASLt's epilogues do with NaN (nan, relu epilogue)"
  echo "  - out-of-bounds and misaligned accesses (memcheck), PyTorch on the same GPU (torch)"
} | tee "$LOG/summary.txt"
exit "$failed"
