#!/usr/bin/python3
"""modelc against ONNX Runtime and PyTorch, in one run, on the same machine,
with the same thread count. modelc and ONNX Runtime read the same .onnx
files, exported by PyTorch from fixed seeds (bench/models/export.py). Run
through bench/run.sh (which installs what this needs). Prints a table and
appends it, dated, to bench/RESULTS.md.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

import numpy as np

from results import ROOT, cpu_flags, record, run, torch_blas



def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating timing rounds of modelc and ONNX Runtime")
    parser.add_argument("--only", default="",
                        help="comma-separated model names (default: all)")
    parser.add_argument("--modelc-flag", action="append", default=[],
                        help="an extra modelc flag for every model (repeat)")
    parser.add_argument("--opset", type=int, default=0,
                        help="export at this ONNX opset (default: "
                             "torch.onnx.export's own, what users get)")
    parser.add_argument("--no-record", action="store_true",
                        help="print the table without appending it to RESULTS.md")
    args = parser.parse_args()
    torch_blas_name = torch_blas()  # before any timing: refuses the reference BLAS
    out = args.out
    env = dict(os.environ)
    export = [sys.executable, "bench/models/export.py", out, "--threads",
              str(args.threads), "--runs", str(args.runs)]
    if args.only:
        export += ["--only", args.only]
    if args.opset:
        export += ["--opset", str(args.opset)]
    run(export, env)
    info = json.load(open(os.path.join(out, "models.json")))

    rows = []
    for name, model in info["models"].items():
        base = os.path.join(out, name)
        x = model["input"]
        run(["build/bin/modelc", base + ".onnx", "--target=cpu"] + args.modelc_flag +
            ["-o", base + ".so"], env)
        # This machine's speed drifts (a shared VM): modelc and ONNX Runtime
        # are timed in alternating rounds and the best median of each kept.
        modelc_ms, ort_ms = [], []
        for _ in range(args.rounds):
            text = run(["build/bin/modelc-run", base + ".so", "--input",
                        f"{x['name']}={base}.input.npy", "--output",
                        f"{model['output']}={base}.modelc.npy", "--threads",
                        str(args.threads), "--bench", str(args.runs)], env)
            modelc_ms.append(float(re.search(r"median ([0-9.]+) ms", text).group(1)))
            ort = json.loads(run(["node", "bench/ort/bench.js", base + ".onnx",
                                  base + ".input.bin", ",".join(map(str, x["shape"])),
                                  str(args.threads), str(args.runs), x["dtype"]], env))
            ort_ms.append(ort["median_ms"])
        # The ratio of each round (modelc and ONNX Runtime timed back to
        # back), and their median: a burst of load on this shared machine
        # moves one round, not the median.
        round_ratios = sorted(m / o for m, o in zip(modelc_ms, ort_ms))
        ratio = round_ratios[len(round_ratios) // 2]
        modelc_ms = min(modelc_ms)
        ort["median_ms"] = min(ort_ms)
        want = np.load(base + ".torch.npy")
        got = np.load(base + ".modelc.npy")
        ort_out = np.fromfile(base + ".ort.bin", dtype="<f4").reshape(want.shape)
        # Relative to the output's scale, so that near-zero elements do not
        # dominate.
        scale = float(np.abs(want).max())
        err = float(np.abs(got - want).max()) / scale
        ort_err = float(np.abs(ort_out - want).max()) / scale
        times = {"modelc": modelc_ms, "onnxruntime": ort["median_ms"],
                 "pytorch": model["torch_ms"]}
        best_peer = min(times["onnxruntime"], times["pytorch"])
        rows.append((name, times, model["flops"], err, ort_err, best_peer, ratio))
        ort_version = ort["version"]
        print(f"{name}: modelc {modelc_ms:.3f} ms, ONNX Runtime {ort['median_ms']:.3f} ms, "
              f"PyTorch {model['torch_ms']:.3f} ms", flush=True)

    lines = []
    lines.append(f"| model | modelc ms | ONNX Runtime ms | PyTorch ms | modelc GFLOP/s "
                 f"| modelc / best peer | modelc / ORT (best of each) "
                 f"| modelc / ORT (median of the rounds' ratios) "
                 f"| max error vs PyTorch (modelc, ORT) |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, t, flops, err, ort_err, best, ratio in rows:
        lines.append(f"| {name} | {t['modelc']:.3f} | {t['onnxruntime']:.3f} | "
                     f"{t['pytorch']:.3f} | {flops / t['modelc'] / 1e6:.1f} | "
                     f"{t['modelc'] / best:.2f} | {t['modelc'] / t['onnxruntime']:.2f} | "
                     f"{ratio:.2f} | {err:.1e}, {ort_err:.1e} |")
    blas = (torch_blas_name + ", " +
            ("OPENBLAS_CORETYPE=" + env["OPENBLAS_CORETYPE"]
             if "OPENBLAS_CORETYPE" in env else "OPENBLAS_CORETYPE unset"))
    cpu, flags = cpu_flags(["avx2", "avx512f", "avx512_bf16", "amx_tile",
                            "amx_bf16"])
    header = (f"## {datetime.date.today().isoformat()} — CPU latency against peers "
              f"(opset {info['opset']})\n\n"
              f"{cpu} ({', '.join(flags) or 'none of avx2, avx512f, avx512_bf16, amx'}); "
              f"the models exported at ONNX opset {info['opset']}.\n\n"
              f"`bench/run.sh`: {args.threads} threads, f32, median of {args.runs} "
              f"runs after warm-up, {args.rounds} alternating rounds (modelc, ONNX "
              f"Runtime; PyTorch timed once): the times are the best round's, the "
              f"last ratio the median of the rounds' ratios; one machine; ONNX Runtime "
              f"{ort_version} (onnxruntime-node, CPU), PyTorch {info['torch_version']} "
              f"(Debian), {blas}. modelc and ONNX Runtime read the same .onnx files. "
              f"modelc is timed through its C++ API "
              f"(modelc-run --bench), without process start-up. Errors: max "
              f"|out - PyTorch| / max |PyTorch|.\n")
    table = header + "\n" + "\n".join(lines) + "\n"
    record(table, args.no_record)
    bad = [r[0] for r in rows if r[3] > 1e-4]
    if bad:
        sys.exit(f"bench: modelc's output differs from PyTorch's for {bad}")


if __name__ == "__main__":
    main()
