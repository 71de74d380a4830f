#!/usr/bin/python3
"""Writes inputs for Inputs/nan_products.ir and PyTorch's outputs.

    nan_products.py OUTDIR

Each input holds finite rows or pixels, a NaN, infinities, and (in the
linear's x, f32 only) a finite value whose product overflows to +inf.
(A sum of products that overflow to +inf and to -inf is NaN or an
infinity by the order and the FMAs of each implementation: not compared.)
PyTorch
computes in f32 from the values as stored: the f16 variant of the IR
(files *16.npy, weights w16.safetensors) is compared with PyTorch's f32
result of its f16 inputs and weights.
"""
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

out = sys.argv[1]
rng = np.random.default_rng(11)
nan, inf = np.float32("nan"), np.float32("inf")

weights = {
    "w": np.concatenate([np.full((6, 1), 2.0), rng.uniform(-1, 1, (6, 7))],
                        axis=1),
    "b": rng.uniform(-1, 1, (6,)),
    "k1": rng.uniform(-0.5, 0.5, (8, 4, 3, 3)),
    "kb1": rng.uniform(-0.5, 0.5, (8,)),
    "k2": rng.uniform(-0.3, 0.3, (8, 8, 3, 3)),
    "k3": rng.uniform(-0.3, 0.3, (8, 8, 3, 3)),
}
# The weights as f32 and f16 hold them: the f64 reference uses the same.
weights32 = {k: v.astype(np.float32) for k, v in weights.items()}
weights16 = {k: v.astype(np.float16) for k, v in weights.items()}

x = rng.uniform(-1, 1, (5, 8)).astype(np.float32)
x[1, 3] = nan
x[2, 0] = inf
x[3, 5] = -inf
# Row 4: 3e38 * 2 (w's first column) overflows.
x[4, 0] = np.float32(3e38)
o = rng.uniform(-1, 1, (5, 6)).astype(np.float32)
o[0, 2] = o[2, 4] = nan
# Apart, so the three convolutions spread each to its own corner.
img = rng.uniform(-1, 1, (1, 4, 16, 16)).astype(np.float32)
img[0, 1, 1, 1] = nan
img[0, 3, 14, 14] = inf
img[0, 0, 1, 14] = -inf


def run(ws, x, o, img):
    t = {k: torch.from_numpy(v.astype(np.float32)) for k, v in ws.items()}
    tx, to, ti = (torch.from_numpy(a.astype(np.float32)) for a in (x, o, img))
    r = torch.relu(F.linear(tx, t["w"], t["b"]))
    m = torch.maximum(F.linear(tx, t["w"]), to)
    r1 = torch.relu(F.conv2d(ti, t["k1"], t["kb1"], padding=1))
    r2 = torch.relu(F.conv2d(r1, t["k2"], padding=1))
    block = torch.relu(F.conv2d(r2, t["k3"], padding=1) + r1)
    return r.numpy(), m.numpy(), block.numpy()


def save(name, value, dtype):
    np.save(os.path.join(out, name + ".npy"),
            np.ascontiguousarray(value, dtype=dtype))


def safetensors(path, ws, tag):
    header, blob = {}, b""
    for name, value in ws.items():
        data = np.ascontiguousarray(value).tobytes()
        header[name] = {"dtype": tag, "shape": list(value.shape),
                        "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)


for suffix, dtype, ws, tag in (("", np.float32, weights32, "F32"),
                               ("16", np.float16, weights16, "F16")):
    with np.errstate(over="ignore"):  # 3e38 is inf in f16
        xs, os_, imgs = (a.astype(dtype) for a in (x, o, img))
    if dtype == np.float16:  # f16 products accumulate in f32: no overflow
        xs[4, 0] = np.float16(1.0)
    save("x" + suffix, xs, dtype)
    save("o" + suffix, os_, dtype)
    save("img" + suffix, imgs, dtype)
    r, m, block = run(ws, xs, os_, imgs)
    save("relu" + suffix, r, dtype)
    save("max" + suffix, m, dtype)
    save("block" + suffix, block, dtype)
    safetensors(os.path.join(out, "w%s.safetensors" % suffix), ws, tag)
