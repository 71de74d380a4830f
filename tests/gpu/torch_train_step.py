#!/usr/bin/env python3
"""PyTorch's side of tests/gpu/check.sh's training row: the kit's train.so
step (examples/mlp.ir: Linear 784-1024-1024-10 with ReLUs, batch 64,
cross-entropy, SGD lr 0.05 momentum 0.9) in PyTorch eager on one device,
timed as modelc-run --train-steps times a step: the batch copied from host
memory, forward, loss, backward, the optimizer step, the loss read back.

    python3 tests/gpu/torch_train_step.py [--device cuda] [--steps 50]

Prints "torch-train mlp DEVICE median MS ms p90 MS ms" (wall clock per
step after 10 warm-up steps). Exits 3 when the device is not available.
"""
import argparse
import statistics
import sys
import time

import torch
from torch import nn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=50)
    a = p.parse_args()
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print("torch-train: no CUDA device visible to PyTorch")
        return 3
    dev = torch.device(a.device)
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                          nn.ReLU(), nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(64, 784)
    target = torch.randint(0, 10, (64,))
    if dev.type == "cuda":
        x, target = x.pin_memory(), target.pin_memory()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x.to(dev, non_blocking=True)),
                       target.to(dev, non_blocking=True))
        loss.backward()
        opt.step()
        return loss.item()  # waits for the step, as a modelc run does

    for _ in range(10):
        step()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
    print(f"torch-train mlp {a.device} median {statistics.median(times):.3f} ms "
          f"p90 {p90:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
