#!/usr/bin/env python3
"""Compile-time benchmark: generated models of 1k and 10k ops through modelc,
with the time of each stage (modelc --time-stages; the pass manager's own
report is available with --mlir-timing).

    python3 bench/compile_time.py [--sizes 1000,10000] [--build-so]

The models are DAGs on 8x64 activations: every 8th op a linear layer (one of
four shared 64x64 weights), the rest elementwise ops, some reading a value
several ops back (residual edges), so fusion, liveness and placement all
have work to do.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T = "tensor<8x64xf32>"
W = "tensor<64x64xf32>"


def generate(ops, seed=0):
    rng = random.Random(seed)
    lines = [f"graph.weight @w{i} : {W}" for i in range(4)]
    lines.append(f"func.func @forward(%x: {T}) -> {T} {{")
    for i in range(4):
        lines.append(f"  %w{i} = graph.weight_ref @w{i} : {W}")
    values = ["%x"]
    for i in range(ops):
        v = f"%v{i}"
        a = values[-1]
        if i % 8 == 7:
            lines.append(f"  {v} = graph.linear {a}, %w{rng.randrange(4)} : {T}, {W}")
        elif i % 3 == 0:
            b = values[max(0, len(values) - 1 - rng.randrange(1, 16))]
            op = rng.choice(["add", "mul", "max"])
            lines.append(f"  {v} = graph.{op} {a}, {b} : {T}, {T}")
        else:
            op = rng.choice(["relu", "tanh", "neg", "sigmoid"])
            lines.append(f"  {v} = graph.{op} {a} : {T}")
        values.append(v)
    lines.append(f"  return {values[-1]} : {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def stages(text):
    return {m.group(1).strip(): float(m.group(2))
            for m in re.finditer(r"^  (.+?)\s+([0-9.]+) ms$", text, re.M)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--build-so", action="store_true",
                        help="also run the C++ compiler (slow for 10k ops)")
    args = parser.parse_args()
    modelc = os.path.join(ROOT, "build", "bin", "modelc")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in map(int, args.sizes.split(",")):
            path = os.path.join(tmp, f"gen{n}.ir")
            open(path, "w").write(generate(n))
            emit = ["--emit=so", "-o", os.path.join(tmp, f"gen{n}.so")] \
                if args.build_so else ["--emit=cpp", "-o", os.devnull]
            result = subprocess.run([modelc, path, "--random-weights", "--target=cpu",
                                     "--time-stages"] + emit,
                                    capture_output=True, text=True)
            if result.returncode:
                sys.exit(result.stderr)
            rows.append((n, stages(result.stderr)))
    names = [k for k in rows[0][1] if k != "total"] + ["total"]
    print("| ops | " + " | ".join(names) + " |")
    print("| --- " * (len(names) + 1) + "|")
    for n, s in rows:
        print(f"| {n} | " + " | ".join(f"{s.get(k, 0):.1f} ms" for k in names) + " |")
    if len(rows) >= 2:
        (n0, s0), (n1, s1) = rows[0], rows[-1]
        print(f"\ntotal grows {s1['total'] / s0['total']:.1f}x for "
              f"{n1 / n0:.0f}x the ops")


if __name__ == "__main__":
    main()
