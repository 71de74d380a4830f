#!/usr/bin/python3
"""Compares tensors a compiled training run wrote with PyTorch's.

    compare_weights.py ACTUAL.safetensors EXPECTED.safetensors
        [--rtol 1e-4] [--atol 1e-6] [--keys-from-expected]
        [--skip-rows NAME:START:END ...]

ACTUAL may also be a directory of NAME.npy files (modelc-run --output-dir of
the gradients entry point). Every tensor of EXPECTED must be in ACTUAL with
the same shape and
|a - e| <= atol + rtol * |e| elementwise. ACTUAL may hold more (optimizer
state such as NAME.momentum_buffer, step), which is ignored. Prints
--skip-rows leaves rows START:END of tensor NAME out: values whose exact
gradient is 0 (an attention's key bias: softmax ignores a constant added
to every key) so that each run holds its own rounding noise, which Adam
scales to full steps. Prints
"NAME max_abs_err=... max_rel_err=... OK|FAIL" per tensor, then
"N passed, M failed"; exits 1 when a tensor fails or is missing.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st import load_safetensors, load_tensors  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("actual")
    p.add_argument("expected")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-6)
    p.add_argument("--keys-from-expected", action="store_true",
                   help="compare the keys of EXPECTED only (always the case; "
                        "ACTUAL's extra keys are ignored)")
    p.add_argument("--skip-rows", action="append", default=[],
                   metavar="NAME:START:END")
    a = p.parse_args()
    skip = {}
    for spec in a.skip_rows:
        name, start, end = spec.rsplit(":", 2)
        skip[name] = (int(start), int(end))
    actual = load_tensors(a.actual)
    expected = load_safetensors(a.expected)

    passed = failed = 0
    missing = [k for k in sorted(expected) if k not in actual]
    for name in sorted(expected):
        if name in missing:
            continue
        e = expected[name].astype(np.float64)
        x = actual[name].astype(np.float64)
        if x.shape != e.shape:
            print(f"{name} shape {list(x.shape)} != expected {list(e.shape)} FAIL")
            failed += 1
            continue
        if name in skip:
            keep = np.ones(e.shape[0], bool)
            keep[skip[name][0]:skip[name][1]] = False
            x, e = x[keep], e[keep]
        err = np.abs(x - e)
        ok = bool(np.all(err <= a.atol + a.rtol * np.abs(e)))  # NaN fails
        nz = e != 0
        abs_err = float(err.max()) if err.size else 0.0
        rel_err = float((err[nz] / np.abs(e[nz])).max()) if nz.any() else 0.0
        print(f"{name} max_abs_err={abs_err:.3g} max_rel_err={rel_err:.3g} "
              f"{'OK' if ok else 'FAIL'}")
        passed += ok
        failed += not ok
    for name in missing:
        print(f"{name} missing from {a.actual} FAIL")
    print(f"{passed} passed, {failed + len(missing)} failed")
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
