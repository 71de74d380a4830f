#!/usr/bin/env python3
"""Compile-time benchmark: full builds of model.so (modelc, g++ included)
with the time of each stage (modelc --time-stages; the pass manager's own
report is available with --mlir-timing).

    python3 bench/compile_time.py [--models resnet50,dag1000,dag10000,chain10000,relu10000]
                                  [--no-build] [--jobs N]
    python3 bench/compile_time.py --generate dag:1000 > model.ir

The models:
* resnet50: torchvision's ResNet-50 (random weights from seed 0, 1x3x224x224),
  exported to ONNX by PyTorch (opset 17) and imported by modelc; needs
  /usr/bin/python3 with torch and torchvision (skipped with a note without).
* dagN: N ops on 8x64 activations: every 8th op a linear layer (one of four
  shared 64x64 weights), the rest elementwise ops, some reading a value
  several ops back (residual edges), so fusion, liveness and placement all
  have work to do.
* chainN: N elementwise ops in a row (relu, neg, add of the input, neg),
  each the only user of the one before: one fused group unless
  modelc-fuse-elementwise caps it.
* reluN: N relus in a row, the worst case for g++ as one loop body (before
  the cap, 3,000 took 15 s and 10,000 did not finish in 150 s).

Prints one row per model; exits non-zero only when a build fails (no timed
assertion: the figures go to bench/RESULTS.md).
"""
import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T = "tensor<8x64xf32>"
W = "tensor<64x64xf32>"


def generate_dag(ops, seed=0):
    rng = random.Random(seed)
    lines = [f"graph.weight @w{i} : {W}" for i in range(4)]
    lines.append(f"func.func @forward(%x: {T}) -> {T} {{")
    for i in range(4):
        lines.append(f"  %w{i} = graph.weight_ref @w{i} : {W}")
    # A constant read at the very end: long entry points are printed as
    # parts, and the last part reads the first part's constant.
    lines.append(f"  %c = graph.constant dense<0.5> : tensor<64xf32>")
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
    lines.append(f"  %y = graph.add {values[-1]}, %c : {T}, tensor<64xf32>")
    lines.append(f"  return %y : {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate_chain(ops, cycle=("relu", "neg", "add", "neg")):
    """`ops` elementwise ops in a row, each the only user of the one before;
    `add` adds the input. The default cycle computes v = relu(v) - x, which
    grows with the number of ops where x < 0: a missing or repeated op shows
    in the result."""
    lines = [f"func.func @forward(%x: {T}) -> {T} {{"]
    previous = "%x"
    for i in range(ops):
        op = cycle[i % len(cycle)]
        operands = f"{previous}, %x : {T}, {T}" if op == "add" else f"{previous} : {T}"
        lines.append(f"  %v{i} = graph.{op} {operands}")
        previous = f"%v{i}"
    lines.append(f"  return {previous} : {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate(kind, n):
    if kind == "dag":
        return generate_dag(n)
    if kind == "chain":
        return generate_chain(n)
    if kind == "relu":
        return generate_chain(n, ("relu",))
    sys.exit(f"unknown model kind '{kind}' (dag, chain, relu)")


EXPORT_RESNET50 = """
import sys, torch, torchvision
torch.manual_seed(0)
model = torchvision.models.resnet50().eval()
x = torch.randn(1, 3, 224, 224)
torch.onnx.export(model, (x,), sys.argv[1], input_names=["x"],
                  output_names=["y"], opset_version=17)
"""


def model_file(name, tmp):
    """The model file for `name`, or None (with a note) when it cannot be made."""
    if name == "resnet50":
        path = os.path.join(tmp, "resnet50.onnx")
        result = subprocess.run(["/usr/bin/python3", "-c", EXPORT_RESNET50, path],
                                capture_output=True, text=True)
        if result.returncode:
            print(f"note: resnet50 skipped: the export failed (needs torch and "
                  f"torchvision):\n{result.stderr[-2000:]}", file=sys.stderr)
            return None
        return path
    match = re.fullmatch(r"(dag|chain|relu)(\d+)", name)
    if not match:
        sys.exit(f"unknown model '{name}' (resnet50, dagN, chainN, reluN)")
    path = os.path.join(tmp, name + ".ir")
    with open(path, "w") as f:
        f.write(generate(match.group(1), int(match.group(2))))
    return path


def stages(text):
    return {m.group(1).strip(): float(m.group(2))
            for m in re.finditer(r"^  (.+?)\s+([0-9.]+) ms$", text, re.M)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet50,dag1000,dag10000,chain10000,relu10000")
    parser.add_argument("--no-build", action="store_true",
                        help="stop at the generated C++ (no C++ compiler)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="modelc --jobs (default: modelc's, one per hardware thread)")
    parser.add_argument("--modelc", default=os.path.join(ROOT, "build", "bin", "modelc"))
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop a build after this many seconds (a failure)")
    parser.add_argument("--generate", metavar="KIND:N",
                        help="print the model dag:N or chain:N and exit")
    args = parser.parse_args()
    if args.generate:
        kind, n = args.generate.split(":")
        sys.stdout.write(generate(kind, int(n)))
        return

    rows, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in filter(None, args.models.split(",")):
            path = model_file(name, tmp)
            if path is None:
                continue
            emit = ["--emit=cpp", "-o", os.devnull] if args.no_build else \
                ["-o", os.path.join(tmp, name + ".so")]
            weights = [] if path.endswith(".onnx") else ["--random-weights"]
            jobs = [f"--jobs={args.jobs}"] if args.jobs else []
            command = [args.modelc, path, "--target=cpu", "--time-stages"] + \
                jobs + weights + emit
            start = time.perf_counter()
            # A session of its own, so that a timeout stops the C++ compilers too.
            process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True,
                                       start_new_session=True)
            try:
                _, stderr = process.communicate(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                print(f"{name}: stopped after {args.timeout:.0f} s", file=sys.stderr)
                failed.append(name)
                continue
            wall = time.perf_counter() - start
            if process.returncode:
                print(f"{name}: modelc failed:\n{stderr[-4000:]}", file=sys.stderr)
                failed.append(name)
                continue
            rows.append((name, wall, stages(stderr)))
    if rows:
        print_table(rows)
    if failed:
        sys.exit("failed: " + ", ".join(failed))


def print_table(rows):
    names = []
    for _, _, s in rows:
        names += [k for k in s if k != "total" and k not in names]
    print("| model | wall | " + " | ".join(names) + " |")
    print("| --- " * (len(names) + 2) + "|")
    for name, wall, s in rows:
        cells = [f"{s[k]:.0f} ms" if k in s else "" for k in names]
        print(f"| {name} | {wall:.2f} s | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
