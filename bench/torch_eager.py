#!/usr/bin/env python3
"""Times PyTorch eager on the benchmark models (bench/models/export.py) on a
device: the baseline modelc's CUDA plans are to meet (issue 5: the
transformer at least as fast as PyTorch eager on the same GPU).

    python3 bench/torch_eager.py --device cuda [--dtype float16] [--runs 100]

GPU timings use CUDA events around each run after warm-up. Prints one line
per model: "torch-eager NAME DEVICE DTYPE median MS ms p90 MS ms".
Exits 3 (no error) when the device is not available, so tests/gpu/check.sh
can say so.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "models"))
from export import models  # noqa: E402  (the same models, same seeds)


def time_with_copies(model, x_host, runs, device):
    """Wall time of what a modelc run does: inputs from host memory to the
    device, the model, outputs back to host memory."""
    with torch.inference_mode():
        for _ in range(10):
            model(x_host.to(device)).cpu()
        samples = []
        for _ in range(runs):
            t0 = time.perf_counter()
            model(x_host.to(device)).cpu()
            samples.append((time.perf_counter() - t0) * 1e3)
    samples.sort()
    return statistics.median(samples), samples[int(0.9 * (len(samples) - 1))]


def time_runs(model, x, runs, device):
    with torch.inference_mode():
        for _ in range(10):
            model(x)
        samples = []
        if device.type == "cuda":
            torch.cuda.synchronize()
            for _ in range(runs):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                model(x)
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end))
        else:
            for _ in range(runs):
                t0 = time.perf_counter()
                model(x)
                samples.append((time.perf_counter() - t0) * 1e3)
    samples.sort()
    return statistics.median(samples), samples[int(0.9 * (len(samples) - 1))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--models", default="mlp,transformer,resnet18")
    parser.add_argument("--include-copies", action="store_true",
                        help="time host -> device, the model and device -> "
                        "host by the wall clock, as a modelc run does")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("torch-eager: no CUDA device visible to PyTorch")
        return 3
    dtype = getattr(torch, args.dtype)
    wanted = set(args.models.split(","))
    for name, model, x, _ in models():
        if name not in wanted:
            continue
        model = model.eval().to(device=device, dtype=dtype)
        if x.is_floating_point():
            x = x.to(dtype=dtype)
        if args.include_copies:
            median, p90 = time_with_copies(model, x, args.runs, device)
        else:
            median, p90 = time_runs(model, x.to(device), args.runs, device)
        print(f"torch-eager {name} {args.device} {args.dtype} "
              f"median {median:.3f} ms p90 {p90:.3f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
