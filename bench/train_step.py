#!/usr/bin/env python3
"""A compiled training step against PyTorch eager on the same machine and
threads (issue 24 item 6): time per step and peak memory.

    python3 bench/train_step.py [--models mlp,encoder,resnet18] [--threads 2]
        [--steps 20] [--out /tmp/modelc-train-bench] [--no-record]

Per model: PyTorch's module exported in training mode (TrainingMode.TRAINING,
do_constant_folding=False) is compiled with `modelc --train --loss=...
--optimizer=sgd --lr 0.01 --momentum 0.9` (CPU plan); each framework then
runs in its own process: three warm-up steps, then --steps timed steps on
one fixed batch (modelc: Model.train_step through the Python module;
PyTorch: zero_grad, forward, loss, backward, SGD step). Time: the median
step. Memory: the process's peak resident set above its resident set after
the framework's import, before the model exists (weights, activations,
gradients, optimizer state and the frameworks' working memory together).

Models: mlp (784-1024-1024-10, batch 64, cross-entropy), encoder
(nn.TransformerEncoderLayer(256, 4, 1024, dropout=0, batch_first=True) on
[8, 64, 256], MSE), resnet18 (torchvision, 1000 classes, batch 8 of
224x224, cross-entropy).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import ROOT, record, torch_blas, training_machine  # noqa: E402

MODELS = {
    "mlp": "cross_entropy",
    "encoder": "mse",
    "resnet18": "cross_entropy",
}

# Builds (model, x, target, loss_fn) for one model; shared by the export and
# the PyTorch timing (the same seed: the same weights and batch).
BUILD = r'''
import torch
from torch import nn
def build(name):
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                              nn.ReLU(), nn.Linear(1024, 10))
        x, target = torch.randn(64, 784), torch.randint(0, 10, (64,))
        return model, x, target, nn.CrossEntropyLoss()
    if name == "encoder":
        model = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
        x, target = torch.randn(8, 64, 256), torch.randn(8, 64, 256)
        return model, x, target, nn.MSELoss()
    import torchvision
    model = torchvision.models.resnet18()
    x, target = torch.randn(8, 3, 224, 224), torch.randint(0, 1000, (8,))
    return model, x, target, nn.CrossEntropyLoss()
'''

PEAK = r'''
import resource
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
'''

# timed(step, steps): the median time in ms of `steps` calls of step() after
# 3 warm-up calls, and the last call's result (shared by both frameworks'
# runs here and in bench/ddp_step.py).
TIMED = r'''
import statistics, time
def timed(step, steps):
    times, result = [], None
    for i in range(steps + 3):
        t0 = time.perf_counter()
        result = step()
        if i >= 3:
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), result
'''

# One PyTorch eager step: zero_grad, forward, loss, backward, SGD step.
TORCH_STEP = r'''
def torch_step(model, opt, loss_fn, x, target):
    opt.zero_grad()
    loss = loss_fn(model(x), target)
    loss.backward()
    opt.step()
    return loss.item()
'''

TORCH_RUN = BUILD + PEAK + TIMED + TORCH_STEP + r'''
import json, sys
name, threads, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
base = rss_mb()
model, x, target, loss_fn = build(name)
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
ms, loss = timed(lambda: torch_step(model, opt, loss_fn, x, target), steps)
print(json.dumps({"ms": ms, "peak_mb": peak_mb() - base, "loss": loss}))
'''

MODELC_RUN = PEAK + TIMED + r'''
import json, sys
import numpy as np
import modelc
path, data, threads, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
x, target = np.load(data + "/x.npy"), np.load(data + "/target.npy")
base = rss_mb()
m = modelc.load(path, threads=threads)
ms, loss = timed(lambda: m.train_step(x=x, target=target), steps)
print(json.dumps({"ms": ms, "peak_mb": peak_mb() - base, "loss": loss}))
'''

EXPORT = BUILD + r'''
import os, sys
import numpy as np
name, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
model, x, target, _ = build(name)
torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"), input_names=["x"],
                  output_names=["y"], training=torch.onnx.TrainingMode.TRAINING,
                  do_constant_folding=False)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "target.npy"), target.numpy())
'''


def python(code, *args, env=None):
    result = subprocess.run([sys.executable, "-c", code, *map(str, args)],
                            capture_output=True, text=True, env=env, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"bench: failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--out", default="/tmp/modelc-train-bench")
    p.add_argument("--modelc", default=os.path.join(ROOT, "build", "bin", "modelc"))
    p.add_argument("--no-record", action="store_true")
    a = p.parse_args()
    blas = torch_blas()  # before any timing: refuses the reference BLAS
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "build", "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["MODELC"] = a.modelc
    lines = ["| model | modelc ms | PyTorch ms | time ratio | modelc peak MB | "
             "PyTorch peak MB | memory ratio | compile s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name in a.models.split(","):
        out = os.path.join(a.out, name)
        python(EXPORT, name, out)
        so = os.path.join(out, "train.so")
        import time
        t0 = time.perf_counter()
        subprocess.run([a.modelc, os.path.join(out, "model.onnx"), "--train",
                        "--loss=" + MODELS[name], "--optimizer=sgd", "--lr", "0.01",
                        "--momentum", "0.9", "-o", so], check=True, cwd=ROOT)
        compile_s = time.perf_counter() - t0
        ours = json.loads(python(MODELC_RUN, so, out, a.threads, a.steps, env=env))
        torch = json.loads(python(TORCH_RUN, name, a.threads, a.steps))
        lines.append(f"| {name} | {ours['ms']:.2f} | {torch['ms']:.2f} | "
                     f"{ours['ms'] / torch['ms']:.2f} | {ours['peak_mb']:.0f} | "
                     f"{torch['peak_mb']:.0f} | "
                     f"{ours['peak_mb'] / torch['peak_mb']:.2f} | {compile_s:.0f} |")
        print(lines[-1], flush=True)
    header = (f"## {datetime.date.today().isoformat()} — a training step against "
              f"PyTorch eager (issue 24)\n\n`bench/train_step.py`: SGD with momentum, "
              f"{a.threads} threads, median of {a.steps} steps after 3 warm-up "
              f"steps, one fixed batch; {training_machine(blas)}. "
              f"Peak: the process's peak "
              f"resident set above its resident set after the framework's import. "
              f"Ratios: modelc / PyTorch (the goal: time at most 0.7, memory at "
              f"most 1).\n")
    record(header + "\n" + "\n".join(lines) + "\n", a.no_record)


if __name__ == "__main__":
    main()
