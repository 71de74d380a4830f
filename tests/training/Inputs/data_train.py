#!/usr/bin/python3
"""Batches for modelc-run --data, and PyTorch's training on them
(tests/training/data.test).

    data_train.py --out DIR [--batches 3] [--steps 7]

Writes DIR/init.safetensors (Inputs/mlp.ir's MLP: Linear(20, 32), ReLU,
Linear(32, 5)), DIR/batches/K/x.npy and DIR/batches/K/target.npy for K = 0
.. batches - 1 (16 samples each), and PyTorch's run of `steps` SGD steps
(lr 0.1, momentum 0.9, CrossEntropyLoss) on batch K mod batches at step K:
DIR/losses.txt ("step K loss L") and DIR/final.safetensors.
"""
import argparse
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st import save_safetensors  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--batches", type=int, default=3)
    p.add_argument("--steps", type=int, default=7)
    args = p.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))
    os.makedirs(args.out, exist_ok=True)
    save_safetensors(os.path.join(args.out, "init.safetensors"),
                     {k: v.numpy() for k, v in model.state_dict().items()})
    batches = []
    for k in range(args.batches):
        x = torch.randn(16, 20)
        t = torch.randint(0, 5, (16,))
        d = os.path.join(args.out, "batches", str(k))
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), x.numpy())
        np.save(os.path.join(d, "target.npy"), t.numpy())
        batches.append((x, t))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    lines = []
    for step in range(args.steps):
        x, t = batches[step % args.batches]
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
        lines.append(f"step {step + 1} loss {loss.item():.9g}\n")
    with open(os.path.join(args.out, "losses.txt"), "w") as f:
        f.writelines(lines)
    save_safetensors(os.path.join(args.out, "final.safetensors"),
                     {k: v.detach().numpy()
                      for k, v in model.state_dict().items()})


if __name__ == "__main__":
    main()
