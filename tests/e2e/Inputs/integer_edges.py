#!/usr/bin/python3
"""Writes the inputs of Inputs/integer-edges.ir and numpy's results.

numpy is the reference here: Debian's torch 1.13 itself dies with SIGFPE on
INT_MIN // -1. Division truncates toward zero (torch.div rounding_mode
'trunc', ONNX Div); graph.mod takes the divisor's sign (torch.remainder),
with fmod the dividend's (torch.fmod); by zero, both are 0 (docs/ir.md).
Overflows wrap, as two's complement arithmetic (and PyTorch on CPU) does.

    integer_edges.py OUTDIR
"""
import os
import sys

import numpy as np

out = sys.argv[1]


def trunc_div(a, b):
    with np.errstate(all="ignore"):
        q = np.where(b == 0, 0, np.abs(a) // np.where(b == 0, 1, np.abs(b)))
        # |INT_MIN| wraps to INT_MIN: the quotient of INT_MIN by -1 or 1 is
        # then computed from it, and the sign below wraps it back.
        sign = np.where((a < 0) != (b < 0), -1, 1).astype(a.dtype)
        return (q * sign).astype(a.dtype)


def remainder(a, b, fmod):
    with np.errstate(all="ignore"):
        safe = np.where((b == 0) | (b == -1), 1, b)
        r = np.fmod(a, safe) if fmod else np.remainder(a, safe)
        return np.where((b == 0) | (b == -1), 0, r).astype(a.dtype)


for bits, dtype in ((32, np.int32), (64, np.int64)):
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    a = np.array([lo, lo, lo, hi, -7, 7, 5, 1 << 20], dtype=dtype)
    b = np.array([-1, 1, 0, -1, 2, -2, 0, 3], dtype=dtype)
    np.save(os.path.join(out, f"a{bits}.npy"), a)
    np.save(os.path.join(out, f"b{bits}.npy"), b)
    q = trunc_div(a, b)
    assert q[0] == lo and q[3] == -hi and q[4] == -3 and q[5] == -3
    np.save(os.path.join(out, f"q{bits}.npy"), q)
    np.save(os.path.join(out, f"r{bits}.npy"), remainder(a, b, False))
    np.save(os.path.join(out, f"f{bits}.npy"), remainder(a, b, True))
    if bits == 32:
        with np.errstate(all="ignore"):
            p = (a.astype(np.int64) ** 3).astype(np.uint64).astype(np.uint32)
        np.save(os.path.join(out, "p32.npy"), p.view(np.int32))
