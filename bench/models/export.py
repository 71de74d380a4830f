#!/usr/bin/python3
"""Builds the benchmark models in PyTorch (fixed seeds), exports each to
ONNX, writes an input and PyTorch's output, and times PyTorch eager.
modelc and ONNX Runtime then read the very same .onnx file.

    /usr/bin/python3 bench/models/export.py OUT_DIR [--threads 2] [--runs 50]
                                            [--only NAME,...] [--opset N]

Needs Debian's python3-torch, python3-torchvision, python3-onnx. Writes per
model NAME: NAME.onnx, NAME.input.npy, NAME.input.bin (raw little-endian),
NAME.torch.npy, and OUT_DIR/models.json with each model's input (name,
dtype, shape), FLOPs and PyTorch's median time.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torchvision

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "onnx"))
from real_models import Gpt2Block, perturb_norms, unit_scale  # noqa: E402


class MLP(torch.nn.Module):
    """examples/mlp.ir: 784 -> 1024 -> 1024 -> 10 with ReLUs."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 1024)
        self.fc2 = torch.nn.Linear(1024, 1024)
        self.fc3 = torch.nn.Linear(1024, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def encoder_flops(batch, seq, dim, ff):
    # Q/K/V and output projections, the two FFN layers, scores and A*V.
    return 2 * batch * seq * (4 * dim * dim + 2 * dim * ff) + 4 * batch * seq * seq * dim


def image(seed, shape):
    torch.manual_seed(seed)
    return torch.randn(shape)


def models():
    """(name, module, input, FLOPs of one run)."""
    torch.manual_seed(0)
    yield ("mlp", MLP(), torch.rand(64, 784) * 2 - 1,
           2 * 64 * (784 * 1024 + 1024 * 1024 + 1024 * 10))
    torch.manual_seed(1)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=512, nhead=8, dim_feedforward=2048, dropout=0.0,
        activation="gelu", batch_first=True, norm_first=True)
    yield ("transformer", layer, image(101, (1, 128, 512)),
           encoder_flops(1, 128, 512, 2048))
    torch.manual_seed(2)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
        batch_first=True)
    yield ("encoder", layer, image(102, (4, 64, 256)),
           encoder_flops(4, 64, 256, 1024))
    x = image(103, (1, 3, 224, 224))
    torch.manual_seed(3)
    resnet = torchvision.models.resnet18()
    perturb_norms(resnet)
    unit_scale(resnet, x)
    yield "resnet18", resnet, x, 2 * 1.814e9
    torch.manual_seed(4)
    mobilenet = torchvision.models.mobilenet_v2()
    perturb_norms(mobilenet)
    unit_scale(mobilenet, x)
    yield "mobilenet_v2", mobilenet, x, 2 * 0.300e9
    torch.manual_seed(5)
    gpt2 = Gpt2Block(vocab=2048, ctx=128, dim=256, heads=4)
    ids = torch.randint(0, 2048, (4, 128))
    yield ("gpt2", gpt2, ids,
           encoder_flops(4, 128, 256, 1024) + 2 * 4 * 128 * 256 * 2048)


def time_torch(model, x, runs):
    with torch.inference_mode():
        for _ in range(5):
            model(x)
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            model(x)
            samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--opset", type=int, default=0,
                        help="the ONNX opset to export at (default: "
                             "torch.onnx.export's own, what users get)")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(args.threads)
    from torch.onnx import _constants
    info = {"torch_version": torch.__version__, "models": {},
            "opset": args.opset or _constants.ONNX_DEFAULT_OPSET}
    for name, model, x, flops in models():
        if only and name not in only:
            continue
        model.eval()
        base = os.path.join(args.out, name)
        np.save(base + ".input.npy", x.numpy())
        x.numpy().astype(x.numpy().dtype.newbyteorder("<")).tofile(base + ".input.bin")
        with torch.inference_mode():
            y = model(x)
        np.save(base + ".torch.npy", y.numpy())
        opset = {"opset_version": args.opset} if args.opset else {}
        torch.onnx.export(model, (x,), base + ".onnx", input_names=["x"],
                          output_names=["y"], **opset)
        median = time_torch(model, x, args.runs)
        info["models"][name] = {
            "input": {"name": "x", "dtype": str(x.numpy().dtype),
                      "shape": list(x.shape)},
            "output": "y", "flops": flops, "torch_ms": median}
        print(f"{name}: exported; PyTorch median {median:.3f} ms", flush=True)
    with open(os.path.join(args.out, "models.json"), "w") as f:
        json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
