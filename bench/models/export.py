#!/usr/bin/python3
"""Builds the three reference models in PyTorch (fixed seeds), saves their
weights as safetensors (keys = state_dict keys), exports them to ONNX, writes
an input and PyTorch's output, and times PyTorch.

    /usr/bin/python3 bench/models/export.py OUT_DIR [--threads 2] [--runs 50]

Needs Debian's python3-torch, python3-torchvision, python3-onnx. Writes per
model NAME: NAME.safetensors, NAME.onnx, NAME.input.npy, NAME.input.bin,
NAME.torch.npy, and OUT_DIR/torch.json with the timings.
"""
import argparse
import json
import os
import statistics
import struct
import time

import numpy as np
import torch
import torchvision


class MLP(torch.nn.Module):
    """examples/mlp.ir: 784 -> 1024 -> 1024 -> 10 with ReLUs."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 1024)
        self.fc2 = torch.nn.Linear(1024, 1024)
        self.fc3 = torch.nn.Linear(1024, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def models():
    torch.manual_seed(0)
    yield "mlp", MLP(), (64, 784)
    torch.manual_seed(1)
    encoder = torch.nn.TransformerEncoderLayer(
        d_model=512, nhead=8, dim_feedforward=2048, dropout=0.0,
        activation="gelu", batch_first=True, norm_first=True)
    yield "transformer", encoder, (1, 128, 512)
    torch.manual_seed(2)
    resnet = torchvision.models.resnet18()
    # Random but non-trivial batch-norm statistics, as a trained model has.
    with torch.no_grad():
        for m in resnet.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    yield "resnet18", resnet, (1, 3, 224, 224)


def save_safetensors(path, state):
    """The safetensors format: 8-byte header length, JSON header, data."""
    header, chunks, offset = {}, [], 0
    for name, tensor in state.items():
        if name.endswith("num_batches_tracked"):
            continue  # training bookkeeping, not a weight
        data = tensor.detach().contiguous().numpy().astype(np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)


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
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(args.threads)
    timings = {}
    for name, model, shape in models():
        model.eval()
        base = os.path.join(args.out, name)
        save_safetensors(base + ".safetensors", model.state_dict())
        torch.manual_seed(100)
        x = torch.rand(shape) * 2 - 1
        np.save(base + ".input.npy", x.numpy())
        x.numpy().astype("<f4").tofile(base + ".input.bin")
        with torch.inference_mode():
            y = model(x)
        np.save(base + ".torch.npy", y.numpy())
        torch.onnx.export(model, (x,), base + ".onnx", input_names=["x"],
                          output_names=["y"], opset_version=14)
        timings[name] = time_torch(model, x, args.runs)
        print(f"{name}: exported; PyTorch median {timings[name]:.3f} ms")
    with open(os.path.join(args.out, "torch.json"), "w") as f:
        json.dump({"version": torch.__version__, "median_ms": timings}, f)


if __name__ == "__main__":
    main()
