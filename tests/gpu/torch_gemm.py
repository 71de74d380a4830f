#!/usr/bin/env python3
"""PyTorch's side of tests/gpu/check.sh's GEMM and per-op rows.

    python3 tests/gpu/torch_gemm.py N

Prints
  torch-gemm matmul median MS ms    torch.matmul of two N x N f16 matrices
                                    already on the GPU (cuBLAS), CUDA events
  torch-gemm model median MS ms     the whole of kit model gemm.ir (outer
                                    products, matmul, cast, sum) from host
                                    inputs to a host result, wall clock
Exits 3 when PyTorch sees no GPU.
"""
import statistics
import sys
import time

import torch


def main():
    n = int(sys.argv[1])
    if not torch.cuda.is_available():
        print("torch-gemm: no CUDA device visible to PyTorch")
        return 3
    dev = torch.device("cuda")
    torch.manual_seed(0)
    x = torch.rand(n, 1, dtype=torch.float16)
    y = torch.rand(1, n, dtype=torch.float16)
    a = (x * y).to(dev)
    b = (y.t() * x.t()).to(dev)
    with torch.inference_mode():
        for _ in range(5):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        samples = []
        for _ in range(20):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            torch.matmul(a, b)
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
        print(f"torch-gemm matmul median {statistics.median(samples):.3f} ms")

        def model(xh, yh):
            xd, yd = xh.to(dev), yh.to(dev)
            c = torch.matmul(xd * yd, yd * xd)
            return c.float().sum().cpu()

        for _ in range(5):
            model(x, y)
        samples = []
        for _ in range(20):
            t0 = time.perf_counter()
            model(x, y)
            samples.append((time.perf_counter() - t0) * 1e3)
        print(f"torch-gemm model median {statistics.median(samples):.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
