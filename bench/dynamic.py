#!/usr/bin/python3
"""A model.so with dynamic dimensions (modelc --dim batch=1..64) against
one built statically for each size (--dim batch=N..N, the same ONNX
file), in one run, on the same machine: latency as the ratio dynamic /
static (min over alternating rounds), and the arena bytes of both.
Models, exported by PyTorch with dynamic_axes at torch.onnx.export's
default opset: an MLP (784-1024-1024-10) and torchvision's ResNet-18
(3x224x224) at batch 1, 8 and 64; nn.TransformerEncoderLayer(256, 4,
1024, batch_first=True) with a dynamic batch and sequence at batch 1, 8
and 64 and sequence 16 and 128. Prints a table and appends it, dated, to
bench/RESULTS.md (docs/dynamic.md).

--target T --data-parallel: both builds split the batch over T's
accelerators (the dynamic one at run time, graph.batch_part, one plan:
--dim batch=2..64 --regimes=1; the static ones by slices), at batch 2, 8
and 64.
"""
import argparse
import datetime
import os
import re

import numpy as np

from results import ROOT, cpu_flags, record, run

SIZES = [1, 8, 64]
ENCODER_SIZES = [(n, s) for s in (16, 128) for n in SIZES]


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
    # The encoder: a dynamic batch and sequence.
    encoder = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0,
                                               batch_first=True).eval()
    path = os.path.join(out, "encoder_dynamic.onnx")
    torch.onnx.export(encoder, (torch.randn(2, 16, 256),), path,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"},
                                    "y": {0: "batch", 1: "seq"}})
    for n, s in ENCODER_SIZES:
        np.save(os.path.join(out, f"encoder.x{n}_{s}.npy"),
                np.random.default_rng(n * s).standard_normal(
                    (n, s, 256)).astype(np.float32))
    paths["encoder"] = path
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
    parser.add_argument("--models", default="mlp,resnet18,encoder",
                        help="comma-separated: mlp, resnet18, encoder")
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--data-parallel", action="store_true")
    args = parser.parse_args()
    global SIZES, ENCODER_SIZES
    target = [f"--target={args.target}"]
    if args.data_parallel:
        # A batch of 1 cannot be split.
        SIZES = [2, 8, 64]
        ENCODER_SIZES = [(n, s) for s in (16, 128) for n in SIZES]
        target += ["--data-parallel"]
    os.makedirs(args.out, exist_ok=True)
    paths = export(args.out)
    rows = []
    for name, onnx in paths.items():
        if name not in args.models.split(","):
            continue
        dynamic = os.path.join(args.out, name + "_dynamic.so")
        encoder = name == "encoder"
        dims = ["--dim", f"batch={SIZES[0]}..{SIZES[-1]}@8"]
        if encoder:
            dims += ["--dim", "seq=1..128@64"]
        if args.data_parallel:
            dims += ["--regimes=1"]
        run(["build/bin/modelc", onnx, *target, *dims, "-o", dynamic])
        for size in ENCODER_SIZES if encoder else SIZES:
            n, seq = size if encoder else (size, None)
            tag = f"{n}_{seq}" if encoder else f"{n}"
            static = os.path.join(args.out, f"{name}_static{tag}.so")
            fixed = ["--dim", f"batch={n}..{n}"]
            if encoder:
                fixed += ["--dim", f"seq={seq}..{seq}"]
            run(["build/bin/modelc", onnx, *target, *fixed, "-o", static])
            x = os.path.join(args.out, f"{name}.x{tag}.npy")
            # Fewer runs for the heavy cases; rounds alternate the two.
            weight = {"resnet18": 40, "encoder": (seq or 1) / 4}.get(name, 1)
            runs = max(3, min(200, int(2000 / (n * weight))))
            best = {"dynamic": float("inf"), "static": float("inf")}
            for _ in range(args.rounds):
                for kind, so in (("dynamic", dynamic), ("static", static)):
                    best[kind] = min(best[kind], bench(so, x, runs, args.threads))
            rows.append((name, tag.replace("_", "x"), best["dynamic"],
                         best["static"],
                         arena(dynamic), arena(static)))
            print(rows[-1], flush=True)
    cpu, flags = cpu_flags(["avx2", "avx512f", "amx_tile"])
    split = (f", --target={args.target} --data-parallel (the dynamic build "
             f"splits at run time, one plan)" if args.data_parallel else "")
    lines = [f"### {datetime.date.today()}: dynamic batch (--dim batch="
             f"{SIZES[0]}..64@8; the encoder also --dim seq=1..128@64) against "
             f"static builds{split} (bench/dynamic.py)", "",
             f"Machine: {cpu} ({', '.join(flags) or 'no avx2'}), "
             f"{args.threads} threads, min of {args.rounds} alternating rounds.",
             "", "| model | batch (x sequence) | dynamic ms | static ms | dynamic / static "
             "| arena dynamic | arena static |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, n, d, s, ad, as_ in rows:
        lines.append(f"| {name} | {n} | {d:.3f} | {s:.3f} | {d / s:.2f} | "
                     f"{ad} | {as_} |")
    record("\n".join(lines) + "\n", args.no_record)


if __name__ == "__main__":
    main()
