#!/usr/bin/python3
"""Dropout in training (p > 0) against PyTorch (tests/training/dropout.test).

    dropout_train.py export --out DIR [--export-batch N]
        An MLP (Linear(20, 32), ReLU, Dropout(0.3), Linear(32, 5)) exported
        by torch.onnx in TRAINING mode: DIR/model.onnx, init.safetensors,
        x.npy, target.npy (a batch of 16), ones.npy ([16, 32]) and
        step0.npy (the int64 scalar 0). The model takes a batch of N
        (default 16): one rank's part for `modelc --distributed`.
    dropout_train.py reference --out DIR --masks MASKDIR [--steps 5]
        PyTorch's training of that MLP (CrossEntropyLoss, SGD lr 0.1,
        momentum 0.9) with modelc's masks (MASKDIR/output<K>.npy: the
        dropout of ones at step K, from dropout_masks.ir's `masks`) as the
        dropout: h * mask, which is what torch's dropout computes with its
        own mask. Writes DIR/losses.txt and DIR/final.safetensors.
    dropout_train.py stats MASKDIR
        The statistics of dropout_masks.ir's `big` masks (65536 elements,
        ratio 0.3) against torch.nn.functional.dropout's on as many: the
        kept value (bit for bit), the fraction dropped (overall and per
        Philox word), and independence between steps, sites, seeds and
        neighbouring elements, each within 5 standard deviations.
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st import load_safetensors, save_safetensors  # noqa: E402

P = 0.3


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Dropout(P),
                         nn.Linear(32, 5))


def export(out, export_batch=16):
    os.makedirs(out, exist_ok=True)
    model = mlp()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 20, generator=g)
    target = torch.randint(0, 5, (16,), generator=g)
    save_safetensors(os.path.join(out, "init.safetensors"),
                     {k: v.numpy() for k, v in model.state_dict().items()})
    np.save(os.path.join(out, "x.npy"), x.numpy())
    np.save(os.path.join(out, "target.npy"), target.numpy())
    np.save(os.path.join(out, "ones.npy"), np.ones((16, 32), np.float32))
    np.save(os.path.join(out, "step0.npy"), np.array(0, np.int64))
    torch.onnx.export(model, x[:export_batch], os.path.join(out, "model.onnx"),
                      input_names=["x"], output_names=["y"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)


def reference(out, masks, steps):
    model = mlp()
    init = load_safetensors(os.path.join(out, "init.safetensors"))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    x = torch.from_numpy(np.load(os.path.join(out, "x.npy")))
    target = torch.from_numpy(np.load(os.path.join(out, "target.npy")))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    lines = []
    for k in range(steps):
        mask = torch.from_numpy(np.load(os.path.join(masks, f"output{k}.npy")))
        opt.zero_grad()
        h = model[1](model[0](x)) * mask
        loss = nn.functional.cross_entropy(model[3](h), target)
        loss.backward()
        opt.step()
        lines.append(f"step {k + 1} loss {loss.item():.9g}\n")
    with open(os.path.join(out, "losses.txt"), "w") as f:
        f.writelines(lines)
    save_safetensors(os.path.join(out, "final.safetensors"),
                     {k: v.detach().numpy()
                      for k, v in model.state_dict().items()})


def within(what, value, expected, sigma):
    ok = abs(value - expected) <= 5 * sigma
    print(f"{what}: {value:.5f}, expected {expected:.5f} +- {5 * sigma:.5f}"
          f"{'' if ok else '  FAILS'}")
    return ok


def stats(masks):
    a, b, c, d = (np.load(os.path.join(masks, f"output{k}.npy")).ravel()
                  for k in range(4))
    n = a.size
    torch.manual_seed(0)
    theirs = nn.functional.dropout(torch.ones(n), P, training=True).numpy()
    scale = theirs.max()
    ok = True
    for name, m in [("step 0", a), ("step 1", b), ("site 1", c), ("seed 7", d)]:
        values = set(np.unique(m).tolist())
        if not values <= {0.0, float(scale)}:
            print(f"{name}: values {sorted(values)[:4]} are not 0 and "
                  f"torch's kept value {scale!r}")
            ok = False
    sigma = math.sqrt(P * (1 - P) / n)
    dropped = lambda m: float(np.mean(m == 0))  # noqa: E731
    ok &= within("torch: fraction dropped", dropped(theirs), P, sigma)
    for name, m in [("step 0", a), ("step 1", b), ("site 1", c), ("seed 7", d)]:
        ok &= within(f"{name}: fraction dropped", dropped(m), P, sigma)
    ok &= within("step 0 against torch: difference of the fractions",
                 dropped(a) - dropped(theirs), 0.0, math.sqrt(2) * sigma)
    for word in range(4):
        ok &= within(f"step 0, Philox word {word}: fraction dropped",
                     dropped(a[word::4]), P, 2 * sigma)
    both = P * P
    sigma2 = math.sqrt(both * (1 - both) / n)
    for name, u, v in [("steps 0 and 1", a, b), ("sites 0 and 1", a, c),
                       ("seeds 0 and 7", a, d),
                       ("neighbours i, i + 1", a[:-1], a[1:]),
                       ("neighbours i, i + 4", a[:-4], a[4:])]:
        ok &= within(f"{name}: fraction dropped in both",
                     float(np.mean((u == 0) & (v == 0))), both, sigma2)
    ok &= within("mean of the dropout of ones", float(a.mean()), 1.0,
                 math.sqrt(P / (1 - P) / n))
    if not ok:
        sys.exit("dropout_train.py: the masks' statistics are off")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["export", "reference", "stats"])
    p.add_argument("dir", nargs="?")
    p.add_argument("--out")
    p.add_argument("--masks")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--export-batch", type=int, default=16)
    args = p.parse_args()
    if args.mode == "export":
        export(args.out, args.export_batch)
    elif args.mode == "reference":
        reference(args.out, args.masks, args.steps)
    else:
        stats(args.dir)


if __name__ == "__main__":
    main()
