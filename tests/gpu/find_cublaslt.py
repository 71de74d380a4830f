#!/usr/bin/env python3
"""Prints the path of a libcublasLt outside the system library path (the one
PyTorch's wheels ship, or the CUDA toolkit's), for tests/gpu/check.sh to put
in MODELC_CUBLASLT; prints nothing when there is none."""
import glob
import os
import site

dirs = site.getsitepackages() + [site.getusersitepackages(), "/usr/local/cuda/lib64"]
for d in dirs:
    for pattern in ("nvidia/cublas/lib/libcublasLt.so*", "nvidia/cu13/lib/libcublasLt.so*",
                    "libcublasLt.so*"):
        hits = sorted(glob.glob(os.path.join(d, pattern)))
        if hits:
            print(hits[-1])
            raise SystemExit
