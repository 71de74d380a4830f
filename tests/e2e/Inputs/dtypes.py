#!/usr/bin/python3
"""Inputs and expected outputs of Inputs/dtypes.ir, from PyTorch (uint8,
int8, int16, f64 and their casts) and numpy (uint16, uint32, uint64, which
PyTorch 1.13 has no arithmetic for). Edge values are chosen on purpose:
sums and products that wrap, the minimum of a signed type negated and
divided by -1, unsigned subtraction below zero.

    dtypes.py OUTDIR   writes OUTDIR/<entry>_<name>.npy
"""
import os
import sys

import numpy as np
import torch

out = sys.argv[1]
rng = np.random.default_rng(27)


def save(entry, name, array):
    np.save(os.path.join(out, "%s_%s.npy" % (entry, name)),
            np.ascontiguousarray(array))


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


# image: uint8 HWC to normalised f32 CHW.
x = rng.integers(0, 256, size=(2, 4, 4, 3), dtype=np.uint8)
x.flat[:3] = [0, 255, 128]
mean = rng.random((3, 1, 1), dtype=np.float32)
tx = t(x).permute(0, 3, 1, 2)
scale = torch.tensor(0.00392156862745098, dtype=torch.float32)
save("image", "x", x)
save("image", "mean", mean)
save("image", "output0", (tx.float() * scale - t(mean)).numpy())
save("image", "output1", torch.div(tx, 2, rounding_mode="floor").numpy())

# unsigned8: wrapping arithmetic, unsigned division and order.
a = rng.integers(0, 256, size=(4, 8), dtype=np.uint8)
b = rng.integers(1, 256, size=(8,), dtype=np.uint8)
a[0, :4] = [0, 255, 200, 1]
b[:4] = [1, 255, 100, 255]
ta, tb = t(a), t(b)
save("unsigned8", "a", a)
save("unsigned8", "b", b)
expected = [ta + tb, ta - tb, ta * tb,
            torch.div(ta, tb, rounding_mode="floor"), torch.remainder(ta, tb),
            ta > tb, torch.maximum(ta, tb), torch.minimum(ta, tb)]
for i, e in enumerate(expected):
    save("unsigned8", "output%d" % i, e.numpy())

# unsigned_wide: numpy's uint16/32/64 arithmetic wraps around too.
a16 = rng.integers(0, 1 << 16, size=(3, 5), dtype=np.uint16)
b16 = rng.integers(1, 1 << 16, size=(3, 5), dtype=np.uint16)
a32 = rng.integers(0, 1 << 32, size=(3, 5), dtype=np.uint32)
b32 = rng.integers(1, 1 << 32, size=(3, 5), dtype=np.uint32)
# uint64 values within 2^53, where the reference interpreter's doubles are
# exact, but sums past 2^63 (signed overflow, unsigned not).
a64 = rng.integers(1 << 52, 1 << 53, size=(3, 5), dtype=np.uint64) * np.uint64(1024)
b64 = rng.integers(1, 1 << 40, size=(3, 5), dtype=np.uint64)
a64[0, 0] = np.uint64(2**64 - 4096)  # exact in double, as is the sum
b64[0, 0] = np.uint64(8192)
names = ["a16", "b16", "a32", "b32", "a64", "b64"]
for name, v in zip(names, [a16, b16, a32, b32, a64, b64]):
    save("unsigned_wide", name, v)
with np.errstate(over="ignore"):
    expected = [a16 - b16, a16 * b16, a32 - b32, a32 % b32, a64 + b64,
                a64 // b64, a32 < b32]
for i, e in enumerate(expected):
    save("unsigned_wide", "output%d" % i, e)

# signed_small: int8 and int16 with their edges.
a = rng.integers(-128, 128, size=(4, 6), dtype=np.int8)
b = rng.integers(-128, 128, size=(6,), dtype=np.int8)
b[b == 0] = 3
a[0, :3] = [-128, 127, -7]
b[:3] = [-1, 2, 2]
c = rng.integers(-(1 << 15), 1 << 15, size=(4, 6), dtype=np.int16)
d = rng.integers(-(1 << 15), 1 << 15, size=(4, 6), dtype=np.int16)
c[0, 0] = -(1 << 15)
d[0, 0] = 1
ta, tb, tc, td = t(a), t(b), t(c), t(d)
for name, v in zip("abcd", [a, b, c, d]):
    save("signed_small", name, v)
expected = [ta + tb, ta * tb, torch.div(ta, tb, rounding_mode="trunc"),
            torch.remainder(ta, tb), torch.fmod(ta, tb), torch.abs(tc),
            tc - td, td.to(torch.int8), ta.to(torch.int32)]
for i, e in enumerate(expected):
    save("signed_small", "output%d" % i, e.numpy())

# double: f64 all the way.
x = rng.standard_normal((3, 7))
y = rng.standard_normal((7,))
tx, ty = t(x), t(y)
third = torch.tensor(0.33333333333333331, dtype=torch.float64)
e = torch.exp(tx * third + ty)
both = (torch.nn.functional.gelu(tx) + torch.sigmoid(tx) +
        torch.relu(torch.nn.functional.leaky_relu(tx, 0.01)))
save("double", "x", x)
save("double", "y", y)
expected = [e, both, e.sum(1), torch.flip(torch.cumsum(torch.flip(tx, [1]), 1), [1]),
            tx.t(), e.float(), tx.amax(0, keepdim=True), e @ tx.t()]
for i, v in enumerate(expected):
    save("double", "output%d" % i, v.numpy())

# movement: data movement of uint8, an int8 product that wraps, uint16 sums.
a = rng.integers(0, 256, size=(2, 3, 4), dtype=np.uint8)
b = rng.integers(0, 256, size=(2, 2, 4), dtype=np.uint8)
ids = np.array([2, 0, 2], dtype=np.int64)
m = rng.integers(-128, 128, size=(3, 4), dtype=np.int8)
n = rng.integers(-128, 128, size=(4, 5), dtype=np.int8)
p = rng.integers(30000, 1 << 16, size=(3, 4), dtype=np.uint16)
for name, v in zip(["a", "b", "ids", "m", "n", "p"], [a, b, ids, m, n, p]):
    save("movement", name, v)
with np.errstate(over="ignore"):
    expected = [np.concatenate([a, b], axis=1), a[:, :, 1:4:2],
                a[:, ids, :], (m.astype(np.int64) @ n.astype(np.int64)).astype(np.int8),
                p.sum(0, dtype=np.uint16),
                (np.cumsum(p, axis=1, dtype=np.uint16) - p).astype(np.uint16),
                a.reshape(12, 2)]
for i, v in enumerate(expected):
    save("movement", "output%d" % i, v)

# shifts: numpy's shifts where C defines them; amounts of the width and
# beyond shift every bit out, negative amounts shift nothing (docs/ir.md).
a = rng.integers(0, 256, size=(2, 6), dtype=np.uint8)
n = np.array([0, 1, 3, 7, 8, 200], dtype=np.uint8)
b = rng.integers(-(1 << 15), 1 << 15, size=(2, 6), dtype=np.int16)
m = np.array([[0, 1, 5, 15, 16, -3], [2, 4, 14, 17, 30, 1]], dtype=np.int16)
b[0, 3] = -5
for name, v in zip("anbm", [a, n, b, m]):
    save("shifts", name, v)


def shift(x, k, right):
    bits = x.dtype.itemsize * 8
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape):
        v, s = x[idx], int(np.broadcast_to(k, x.shape)[idx])
        if s < 0:
            s = 0
        if s >= bits:
            out[idx] = -1 if (right and v < 0) else 0
        elif right:
            out[idx] = v >> s
        else:
            out[idx] = (int(v) << s) & ((1 << bits) - 1) if x.dtype.kind == "u" \
                else np.array((int(v) << s) & ((1 << bits) - 1)).astype(
                    np.uint16).view(np.int16)
    return out


expected = [shift(a, n, False), shift(a, n, True), shift(b, m, False),
            shift(b, m, True)]
# Where C defines them (amounts in [0, width)), the same as numpy's.
ok = (n < 8)
assert (expected[0][:, ok] == np.left_shift(a, n)[:, ok]).all()
assert (expected[1][:, ok] == np.right_shift(a, n)[:, ok]).all()
for i, v in enumerate(expected):
    save("shifts", "output%d" % i, v)
