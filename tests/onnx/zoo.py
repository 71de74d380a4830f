#!/usr/bin/python3
"""The torchvision zoo through modelc: every constructor of
torchvision.models and torchvision.models.segmentation (Debian's
torchvision 0.14), random weights from a fixed seed, at its default input
size, exported with torch.onnx.export's defaults (what users get),
compiled for the CPU and checked against PyTorch.

    /usr/bin/python3 tests/onnx/zoo.py --modelc build/bin/modelc \\
        --modelc-run build/bin/modelc-run --workdir /tmp/zoo \\
        [--only resnet18,vit_b_16] [--max-params 30e6] [--timeout 1800] \\
        [--table docs/onnx-zoo.md]

Each model ends as one of:
  pass         compiled, and the output matches PyTorch's within 1e-3 of
               the output's scale (max |modelc - PyTorch| / max |PyTorch|)
  mismatch     compiled, the output differs
  error        modelc or modelc-run failed (the first error line is kept)
  timeout      past --timeout seconds
  constant output  every output element equal (compared, but it checks
               next to nothing)
Results are kept in WORKDIR/results.json, so a long run can be resumed
(a model already there is not run again unless --rerun); --table writes
the markdown table of every result kept. The exit status is 1 when a model
ends in mismatch (a wrong result is a bug; an error is a gap).
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True

import numpy as np
import torch
import torchvision
import torchvision.models as models

TOLERANCE = 1e-3


def constructors():
    """(name, kind) of every model, the smaller first."""
    names = [(n, "classification") for n in models.list_models(module=models)]
    names += [(n, "segmentation")
              for n in models.list_models(module=models.segmentation)]
    return names


def input_size(name, kind):
    """The default input size of a model: what its weights' transforms
    give (crop_size; resize_size for segmentation), 224 without them."""
    try:
        weights = models.get_model_weights(name).DEFAULT
        transforms = weights.transforms()
        if kind == "segmentation":
            size = transforms.resize_size
        else:
            size = transforms.crop_size
        return int(size[0] if isinstance(size, (list, tuple)) else size)
    except Exception:  # no weights known: the usual ImageNet crop
        return 224


class Out(torch.nn.Module):
    """A segmentation model's 'out' (the dict's main output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def build(name, kind, size):
    torch.manual_seed(0)
    # No downloads: random weights, the segmentation backbones' too.
    extra = {"weights_backbone": None} if kind == "segmentation" else {}
    if name.startswith("vit_"):
        # A vision transformer's position embeddings are made for one
        # size: its weights' (vit_h_14: 518), not the constructor's 224.
        extra["image_size"] = size
    model = models.get_model(name, weights=None, **extra)
    model.eval()
    # Parameters torchvision initialises to zeros (a vision transformer's
    # head) would make the output a constant that checks nothing: they get
    # small random values.
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 1 and not p.any():
                p.normal_(0.0, 0.02)
    return Out(model) if kind == "segmentation" else model


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:300]
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1][:300] if lines else "no output"


def run_one(args, name, kind):
    size = input_size(name, kind)
    model = build(name, kind, size)
    params = sum(p.numel() for p in model.parameters())
    result = {"name": name, "kind": kind, "input": [1, 3, size, size],
              "params": params}
    if args.max_params and params > args.max_params:
        result["status"] = "skipped"
        result["why"] = f"{params / 1e6:.0f}M parameters > --max-params"
        return result
    # A folder per model: a model over 2 GB is exported with its weights
    # in files of their own (ONNX's external data) next to the .onnx.
    folder = os.path.join(args.workdir, name)
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, name)
    torch.manual_seed(1)
    x = torch.rand(1, 3, size, size)
    with torch.no_grad():
        want = model(x).numpy()
    np.save(base + ".x.npy", x.numpy())
    torch.onnx.export(model, (x,), base + ".onnx", input_names=["x"],
                      output_names=["y"])
    start = time.time()
    try:
        compiled = subprocess.run(
            [args.modelc, base + ".onnx", "--target=cpu", "-o", base + ".so"],
            capture_output=True, text=True, timeout=args.timeout)
        result["compile_s"] = round(time.time() - start, 1)
        if compiled.returncode != 0:
            result["status"] = "error"
            result["why"] = first_error(compiled.stderr)
            return result
        ran = subprocess.run(
            [args.modelc_run, base + ".so", "--input", f"x={base}.x.npy",
             "--output", f"y={base}.y.npy"],
            capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        result["status"] = "timeout"
        result["why"] = f"past {args.timeout} s"
        return result
    if ran.returncode != 0:
        result["status"] = "error"
        result["why"] = first_error(ran.stderr)
        return result
    got = np.load(base + ".y.npy")
    result["output_scale"] = float(np.abs(want).max())
    result["output_spread"] = float(want.max() - want.min())
    scale = float(np.abs(want).max()) or 1.0
    error = float(np.abs(got.astype(np.float64) - want).max()) / scale
    result["error"] = error
    result["status"] = "pass" if error <= TOLERANCE else "mismatch"
    if result["output_spread"] == 0:
        # Every output element equal: the comparison checks next to nothing.
        result["status"] = "constant output"
    if not args.keep:
        shutil.rmtree(folder)
    return result


def table(results):
    lines = ["| model | input | parameters | status | compile s | max error / output scale |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in sorted(results.values(), key=lambda r: (r["kind"], r["name"])):
        status = r["status"]
        if r.get("why"):
            status += ": " + r["why"].replace("|", "\\|")
        error = f"{r['error']:.1e}" if "error" in r else ""
        lines.append(f"| {r['name']} | {'x'.join(map(str, r['input']))} | "
                     f"{r['params'] / 1e6:.1f}M | {status} | "
                     f"{r.get('compile_s', '')} | {error} |")
    counts = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    return "\n".join(lines) + "\n", summary


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--modelc", default="modelc")
    parser.add_argument("--modelc-run", default="modelc-run")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--max-params", type=float, default=0)
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--rerun", action="store_true")
    parser.add_argument("--keep", action="store_true",
                        help="keep each model's files in the workdir")
    parser.add_argument("--table", default="")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    torch.set_num_threads(2)
    path = os.path.join(args.workdir, "results.json")
    results = json.load(open(path)) if os.path.exists(path) else {}
    only = set(filter(None, args.only.split(",")))
    todo = [(n, k) for n, k in constructors() if not only or n in only]
    for name, kind in todo:
        if (name in results and results[name]["status"] != "skipped" and
                not args.rerun):
            continue
        try:
            result = run_one(args, name, kind)
        except Exception as e:  # a model PyTorch itself cannot build or export
            result = {"name": name, "kind": kind, "input": [], "params": 0,
                      "status": "error", "why": f"export: {e}"[:300]}
        results[name] = result
        json.dump(results, open(path, "w"), indent=1)
        print(f"{name}: {result['status']} {result.get('why', '')} "
              f"{result.get('error', '')}", flush=True)
    text, summary = table(results)
    print(f"zoo: {len(results)} models: {summary}")
    if args.table:
        with open(args.table, "w") as f:
            f.write("# The torchvision zoo through modelc\n\n"
                    f"Written by `tests/onnx/zoo.py --table` "
                    f"({datetime.date.today().isoformat()}, PyTorch "
                    f"{torch.__version__}, torchvision "
                    f"{torchvision.__version__}): every constructor of "
                    "torchvision.models and torchvision.models.segmentation, "
                    "random weights from a fixed seed, its default input "
                    "size, exported with torch.onnx.export's defaults (opset "
                    "14), compiled for the CPU plan and compared with "
                    "PyTorch's output (max error relative to the output's "
                    "scale; pass: at most 1e-3). Compile seconds are "
                    "`modelc`'s wall time on the machine of the run (2 "
                    f"cores). Totals: {summary}.\n\n" + text)
    if any(r["status"] == "mismatch" for r in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
