#!/usr/bin/python3
"""Writes inputs with NaNs for Inputs/nan.ir and PyTorch's outputs.

    nan_cases.py OUTDIR

The NaNs sit in either operand (and in both), so an implementation that
drops a NaN in its second operand (std::max, x86's maxps) is caught. The
weight of @product_clamp goes to w.safetensors.
"""
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

out = sys.argv[1]
rng = np.random.default_rng(7)
nan = np.float32("nan")


def save(name, value):
    np.save(os.path.join(out, name + ".npy"),
            np.ascontiguousarray(value, dtype=np.float32))


a = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
b = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
a[0, 1] = a[2, 5] = a[3, 3] = nan
b[1, 2] = b[2, 6] = b[3, 3] = nan
save("a", a)
save("b", b)
ta, tb = torch.from_numpy(a), torch.from_numpy(b)
save("max", torch.maximum(ta, tb))
save("min", torch.minimum(ta, tb))
save("relu", torch.relu(ta))
# What a relu that drops NaNs gives, and one with an infinity where relu
# gives a finite value: the comparisons must call both mismatches.
save("relu_dropped", np.nan_to_num(torch.relu(ta).numpy(), nan=0.0))
relu_inf = torch.relu(ta).numpy().copy()
relu_inf[0, 0] = np.inf
save("relu_inf", relu_inf)
save("clamp", torch.clamp(ta + tb, -0.5, 0.5))

x = rng.uniform(-1, 1, (2, 4, 6, 6)).astype(np.float32)
x[0, 0, 5, 5] = x[1, 2, 0, 3] = x[1, 3, 4, 1] = nan
save("x", x)
tx = torch.from_numpy(x)
save("rmax", torch.amax(tx, dim=(2, 3)))
save("pool", F.max_pool2d(tx, 2, 2))

w = rng.uniform(-1, 1, (6, 8)).astype(np.float32)
p = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
p[1, 4] = nan
save("p", p)
save("clamped", torch.clamp(torch.from_numpy(p) @ torch.from_numpy(w).T,
                            0.0, 0.25))
header = json.dumps({"w": {"dtype": "F32", "shape": [6, 8],
                           "data_offsets": [0, w.nbytes]}}).encode()
with open(os.path.join(out, "w.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + w.tobytes())
