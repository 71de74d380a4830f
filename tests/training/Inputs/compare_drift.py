#!/usr/bin/python3
"""Judges a float32 training run by its distance from a float64 one.

    compare_drift.py OURS TORCH32.safetensors TORCH64.safetensors
        [--factor 2] [--atol 1e-6]

OURS is a safetensors file or a directory of NAME.npy files (modelc-run
--output-dir of the gradients entry point).

For a model whose float32 trajectory is ill-conditioned (ResNet-18 with
BatchNorm over a few samples: PyTorch's own float32 run ends as far from
its float64 run as from ours), "within 1e-4 of PyTorch" measures rounding
order, not correctness. Here each tensor of TORCH64 (PyTorch in float64,
the same initial weights and batch) must be as near to OURS as to PyTorch's
float32 run: max|ours - f64| <= factor * max|torch32 - f64| + atol. Prints
one line per tensor and "N passed, M failed"; exits 1 on a failure.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st import load_tensors  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ours")
    p.add_argument("torch32")
    p.add_argument("torch64")
    p.add_argument("--factor", type=float, default=2.0)
    p.add_argument("--atol", type=float, default=1e-6)
    a = p.parse_args()
    ours, t32, t64 = (load_tensors(f) for f in (a.ours, a.torch32, a.torch64))
    passed = failed = 0
    for name in sorted(t64):
        if name not in ours or name not in t32:
            print(f"{name} missing FAIL")
            failed += 1
            continue
        ref = t64[name].astype(np.float64)
        ours_err = float(np.abs(ours[name].astype(np.float64) - ref).max())
        torch_err = float(np.abs(t32[name].astype(np.float64) - ref).max())
        ok = ours_err <= a.factor * torch_err + a.atol  # NaN fails
        print(f"{name} ours={ours_err:.3g} torch32={torch_err:.3g} "
              f"{'OK' if ok else 'FAIL'}")
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
