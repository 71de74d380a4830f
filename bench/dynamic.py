#!/usr/bin/python3
"""A model.so with a dynamic batch (modelc --dim batch=1..64) against one
built statically for each size (--dim batch=N..N, the same ONNX file), in
one run, on the same machine: latency at batch 1, 8 and 64 as the ratio
dynamic / static (min over alternating rounds), and the arena bytes of
both. Models: an MLP (784-1024-1024-10) and torchvision's ResNet-18
(3x224x224), exported by PyTorch with dynamic_axes at torch.onnx.export's
default opset. Prints a table and appends it, dated, to bench/RESULTS.md
(docs/dynamic.md).
"""
import argparse
import datetime
import os
import re

import numpy as np

from results import ROOT, cpu_flags, record, run

SIZES = [1, 8, 64]


def export(out):
    import torch
    import torchvision
    torch.manual_seed(0)
    models = {
        "mlp": (torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 1024),
                                    torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 10)), (784,)),
        "resnet18": (torchvision.models.resnet18(), (3, 224, 224)),
    }
    paths = {}
    for name, (module, shape) in models.items():
        module.eval()
        path = os.path.join(out, name + "_dynamic.onnx")
        torch.onnx.export(module, (torch.randn(2, *shape),), path,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        for n in SIZES:
            np.save(os.path.join(out, f"{name}.x{n}.npy"),
                    np.random.default_rng(n).standard_normal(
                        (n, *shape)).astype(np.float32))
        paths[name] = path
    return paths


def bench(so, x, runs, threads):
    text = run(["build/bin/modelc-run", so, "--input", f"x={x}",
                "--bench", str(runs), "--threads", str(threads)])
    return float(re.search(r"min ([0-9.]+) ms", text).group(1))


def arena(so):
    info = run(["build/bin/modelc-run", so, "--info"])
    return int(re.search(r"arena ([0-9]+) bytes", info).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    paths = export(args.out)
    rows = []
    for name, onnx in paths.items():
        dynamic = os.path.join(args.out, name + "_dynamic.so")
        run(["build/bin/modelc", onnx, "--target=cpu", "--dim",
             f"batch=1..{SIZES[-1]}@8", "-o", dynamic])
        for n in SIZES:
            static = os.path.join(args.out, f"{name}_static{n}.so")
            run(["build/bin/modelc", onnx, "--target=cpu", "--dim",
                 f"batch={n}..{n}", "-o", static])
            x = os.path.join(args.out, f"{name}.x{n}.npy")
            # Fewer runs for the heavy cases; rounds alternate the two.
            runs = max(3, min(200, int(2000 / (n * (40 if name == "resnet18" else 1)))))
            best = {"dynamic": float("inf"), "static": float("inf")}
            for _ in range(args.rounds):
                for kind, so in (("dynamic", dynamic), ("static", static)):
                    best[kind] = min(best[kind], bench(so, x, runs, args.threads))
            rows.append((name, n, best["dynamic"], best["static"],
                         arena(dynamic), arena(static)))
            print(rows[-1], flush=True)
    cpu, flags = cpu_flags(["avx2", "avx512f", "amx_tile"])
    lines = [f"### {datetime.date.today()}: dynamic batch (--dim batch=1..64@8) "
             f"against static builds (bench/dynamic.py)", "",
             f"Machine: {cpu} ({', '.join(flags) or 'no avx2'}), "
             f"{args.threads} threads, min of {args.rounds} alternating rounds.",
             "", "| model | batch | dynamic ms | static ms | dynamic / static "
             "| arena dynamic | arena static |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, n, d, s, ad, as_ in rows:
        lines.append(f"| {name} | {n} | {d:.3f} | {s:.3f} | {d / s:.2f} | "
                     f"{ad} | {as_} |")
    record("\n".join(lines) + "\n", args.no_record)


if __name__ == "__main__":
    main()
