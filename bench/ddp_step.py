#!/usr/bin/env python3
"""Data-parallel training across processes against PyTorch's
DistributedDataParallel on the same machine (issue 25): time per step.

    python3 bench/ddp_step.py [--models mlp,resnet18] [--ranks 2]
        [--threads N] [--steps 10] [--shard-optimizer-state]
        [--out /tmp/modelc-ddp-bench] [--no-record]

Per model (bench/train_step.py's modules and batches): PyTorch's module
exported in training mode for one rank's part of the batch is compiled
with `modelc --train --loss=... --optimizer=sgd --lr 0.01 --momentum 0.9
--distributed`, and run by `mpirun --bind-to none -np RANKS` (the MPI
plugin; Open MPI) through the Python module, each rank on its part of the
batch; PyTorch runs the same module under DistributedDataParallel (the
gloo backend, its default bucketing) in RANKS processes. Every process
uses --threads threads (default: the machine's CPUs / RANKS); three
warm-up steps, then --steps timed ones on one fixed batch. Time: rank 0's
median step (a step ends when its gradients are summed and the update is
done, so the ranks keep pace). Ratio: modelc / PyTorch DDP.

--shard-optimizer-state (ZeRO stage 1): modelc builds with
`--shard-optimizer-state` (each parameter's momentum and update on one
rank, the new value broadcast), PyTorch wraps SGD in
torch.distributed.optim.ZeroRedundancyOptimizer; the table adds the
momentum bytes rank 0 holds (modelc's Model::state_shards).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import ROOT, record, torch_blas, training_machine  # noqa: E402
from train_step import BUILD, MODELS, TIMED, TORCH_STEP  # noqa: E402

# The batch of rank `rank` of `ranks`: its rows of the whole batch.
SHARD = r'''
def shard(t, rank, ranks):
    n = t.shape[0] // ranks
    return t[rank * n:(rank + 1) * n]
'''

EXPORT = BUILD + SHARD + r'''
import os, sys
import numpy as np
name, out, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
model, x, target, _ = build(name)
torch.onnx.export(model, (shard(x, 0, ranks),), os.path.join(out, "model.onnx"),
                  input_names=["x"], output_names=["y"],
                  training=torch.onnx.TrainingMode.TRAINING,
                  do_constant_folding=False)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "target.npy"), target.numpy())
'''

MODELC_RANK = SHARD + TIMED + r'''
import json, sys
import numpy as np
import modelc
path, data, threads, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
m = modelc.load(path, threads=threads, distributed="mpi")
x = np.ascontiguousarray(shard(np.load(data + "/x.npy"), m.rank, m.world_size))
target = np.ascontiguousarray(shard(np.load(data + "/target.npy"), m.rank, m.world_size))
ms, loss = timed(lambda: m.train_step(x=x, target=target), steps)
if m.rank == 0:
    print(json.dumps({"ms": ms, "loss": loss,
                      "state": m.info()["state_shards"]}))
'''

TORCH_DDP = BUILD + SHARD + TIMED + TORCH_STEP + r'''
import json, sys
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

def rank_main(rank, name, ranks, threads, steps, port, zero, queue):
    torch.set_num_threads(threads)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=ranks)
    model, x, target, loss_fn = build(name)
    model.train()
    ddp = DDP(model)
    if zero:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(ddp.parameters(),
                                      optimizer_class=torch.optim.SGD,
                                      lr=0.01, momentum=0.9)
    else:
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    x, target = shard(x, rank, ranks), shard(target, rank, ranks)
    ms, loss = timed(lambda: torch_step(ddp, opt, loss_fn, x, target), steps)
    if rank == 0:
        queue.put({"ms": ms, "loss": loss})
    dist.destroy_process_group()

if __name__ == "__main__":
    name, ranks, threads, steps, port, zero = (
        sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
        int(sys.argv[5]), sys.argv[6] == "1")
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    mp.spawn(rank_main, args=(name, ranks, threads, steps, port, zero, queue),
             nprocs=ranks, join=True)
    print(json.dumps(queue.get()))
'''


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env,
                            cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd[:3])} ... failed:\n"
                 f"{result.stdout}{result.stderr}")
    return result.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="mlp,resnet18")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--shard-optimizer-state", action="store_true",
                   help="ZeRO stage 1 on both sides")
    p.add_argument("--out", default="/tmp/modelc-ddp-bench")
    p.add_argument("--modelc", default=os.path.join(ROOT, "build", "bin", "modelc"))
    p.add_argument("--no-record", action="store_true")
    a = p.parse_args()
    blas = torch_blas()  # before any timing: refuses the reference BLAS
    threads = a.threads or max(1, (os.cpu_count() or 1) // a.ranks)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "build", "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    zero = a.shard_optimizer_state
    lines = ["| model | batch (per rank) | modelc ms | PyTorch DDP ms | ratio |"
             + (" modelc rank 0's state |" if zero else ""),
             "| --- | --- | --- | --- | --- |" + (" --- |" if zero else "")]
    os.makedirs(a.out, exist_ok=True)
    script = os.path.join(a.out, "torch_ddp.py")
    with open(script, "w") as f:
        f.write(TORCH_DDP)
    for port, name in enumerate(a.models.split(","), start=29571):
        out = os.path.join(a.out, name)
        run([sys.executable, "-c", EXPORT, name, out, str(a.ranks)])
        so = os.path.join(out, "train.so")
        run([a.modelc, os.path.join(out, "model.onnx"), "--train",
             "--loss=" + MODELS[name], "--optimizer=sgd", "--lr", "0.01",
             "--momentum", "0.9", "--distributed", "-o", so]
            + (["--shard-optimizer-state"] if zero else []))
        ours = json.loads(run(["mpirun", "--oversubscribe", "--bind-to", "none",
                               "-np", str(a.ranks), sys.executable, "-c",
                               MODELC_RANK, so, out, str(threads), str(a.steps)],
                              env=env).strip().splitlines()[-1])
        theirs = json.loads(run([sys.executable, script, name, str(a.ranks),
                                 str(threads), str(a.steps), str(port),
                                 "1" if zero else "0"])
                            .strip().splitlines()[-1])
        import numpy as np
        batch = np.load(os.path.join(out, "x.npy")).shape[0]
        lines.append(f"| {name} | {batch} ({batch // a.ranks}) | {ours['ms']:.2f} | "
                     f"{theirs['ms']:.2f} | {ours['ms'] / theirs['ms']:.2f} |"
                     + (f" {ours['state']} |" if zero else ""))
        print(lines[-1], flush=True)
    mpi = run(["mpirun", "--version"], env=env).splitlines()[0]
    header = (f"## {datetime.date.today().isoformat()} — data-parallel training "
              f"across processes against PyTorch DDP (issue 25)\n\n"
              f"`bench/ddp_step.py`: {a.ranks} ranks on one machine, {threads} "
              f"thread(s) each, SGD with momentum"
              f"{' sharded over the ranks (ZeRO-1: modelc --shard-optimizer-state, PyTorch ZeroRedundancyOptimizer)' if zero else ''}"
              f", median of rank 0's {a.steps} "
              f"steps after 3 warm-up steps, one fixed batch; modelc "
              f"`--distributed` under `mpirun --bind-to none` ({mpi}), PyTorch "
              f"{__import__('torch').__version__} DistributedDataParallel over "
              f"gloo; {training_machine(blas)}. Ratio: modelc / PyTorch "
              f"DDP.\n")
    record(header + "\n" + "\n".join(lines) + "\n", a.no_record)


if __name__ == "__main__":
    main()
