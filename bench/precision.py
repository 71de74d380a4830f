#!/usr/bin/python3
"""modelc --precision=f16|bf16 against f32 on the bench models: the size of
model.so, the peak arena bytes of its CPU plan, the CPU latency, and the
largest error against the f32 PyTorch output. Uses the models
bench/models/export.py writes (the same files as bench/run.py). Prints a
table and appends it, dated, to bench/RESULTS.md.
"""
import argparse
import datetime
import json
import os
import re
import sys

import numpy as np

from results import ROOT, cpu_flags, record, run

PRECISIONS = ["f32", "bf16", "f16"]



def measure(base, model, precision, threads, runs):
    so = f"{base}.{precision}.so"
    run(["build/bin/modelc", base + ".onnx", "--target=cpu",
         f"--precision={precision}", "-o", so])
    info = run(["build/bin/modelc-run", so, "--info"])
    arena = int(re.search(r"arena ([0-9]+) bytes", info).group(1))
    x = model["input"]
    out = f"{base}.{precision}.npy"
    text = run(["build/bin/modelc-run", so, "--input",
                f"{x['name']}={base}.input.npy", "--output",
                f"{model['output']}={out}", "--threads", str(threads),
                "--bench", str(runs)])
    ms = float(re.search(r"median ([0-9.]+) ms", text).group(1))
    want = np.load(base + ".torch.npy")
    err = float(np.abs(np.load(out).astype(np.float64) - want).max() /
                np.abs(want).max())
    return os.path.getsize(so), arena, ms, err


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--only", default="",
                        help="comma-separated model names (default: all)")
    parser.add_argument("--no-record", action="store_true",
                        help="print the table without appending it to RESULTS.md")
    args = parser.parse_args()
    export = [sys.executable, "bench/models/export.py", args.out, "--threads",
              str(args.threads), "--runs", str(args.runs)]
    if args.only:
        export += ["--only", args.only]
    run(export)
    info = json.load(open(os.path.join(args.out, "models.json")))
    lines = ["| model | precision | model.so MB | arena KB | CPU ms | ratio to f32 "
             "(size, arena, time) | max error vs f32 PyTorch |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, model in info["models"].items():
        base = os.path.join(args.out, name)
        f32 = None
        for precision in PRECISIONS:
            size, arena, ms, err = measure(base, model, precision,
                                           args.threads, args.runs)
            f32 = f32 or (size, arena, ms)
            lines.append(f"| {name} | {precision} | {size / 1e6:.1f} | "
                         f"{arena / 1024:.0f} | {ms:.3f} | {size / f32[0]:.2f}, "
                         f"{arena / f32[1]:.2f}, {ms / f32[2]:.2f} | {err:.1e} |")
            print(lines[-1], flush=True)
    _, flags = cpu_flags(("avx512_bf16", "amx_bf16", "avx512_fp16"))
    header = (f"## {datetime.date.today().isoformat()} — `--precision` on the "
              f"bench models\n\n`bench/precision.py`: modelc's CPU plan of each "
              f"bench model in f32, bf16 and f16; {args.threads} threads, median of "
              f"{args.runs} runs after warm-up; this CPU has "
              f"{', '.join(flags) or 'neither AVX-512-BF16 nor AMX'} (oneDNN "
              f"computes bf16 products natively where it has them; f16 products "
              f"compute in f32 here). Error: max |out - PyTorch f32| / "
              f"max |PyTorch f32|.\n")
    table = header + "\n" + "\n".join(lines) + "\n"
    record(table, args.no_record)


if __name__ == "__main__":
    main()
