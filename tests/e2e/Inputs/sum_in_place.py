#!/usr/bin/python3
"""Writes a chain of residual convolution blocks as PyTorch exports it
(ONNX, opset 14), an input, and PyTorch's output.

    sum_in_place.py OUTDIR

Each block ends in a convolution whose sum adds the block's input, read
there for the last time: modelc-plan-memory writes the block's output over
that input (the runtime adds to the residual where it lies). 16 channels,
so a residual kept in oneDNN's layout holds as many bytes as an NCHW
value: the first block's output, kept in oneDNN's layout, is written over
an NCHW residual (the runtime reorders it into place from a copy), the
second's over the first's in the same layout, and the last block's, a
function output in NCHW, over a kept residual. One block reads its
residual also as its convolution's input (no sum in place there). x.npy is finite; nan.npy holds a NaN and infinities (the exact
path, which reads the residual before it writes the output).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn

out = sys.argv[1]
torch.manual_seed(5)


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.a1 = nn.Conv2d(16, 16, 1)
        self.b1 = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.a2 = nn.Conv2d(16, 16, 1)
        self.b2 = nn.Conv2d(16, 16, 3, padding=1)
        self.b3 = nn.Conv2d(16, 16, 1)
        self.a4 = nn.Conv2d(16, 16, 1)
        self.b4 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        r0 = torch.abs(self.stem(x))  # NCHW: not a convolution's output
        r1 = r0 + self.b1(torch.clamp(self.a1(r0), 0, 6))
        r2 = self.b2(torch.relu(self.a2(r1))) + r1
        r3 = self.b3(r2) + r2  # the residual is the convolution's input too
        return self.b4(torch.relu(self.a4(r3))) + r3


model = Blocks().eval()
x = torch.randn(1, 3, 20, 20)
nan = x.clone()
nan[0, 0, 3, 4] = float("nan")
nan[0, 1, 10, 10] = float("inf")
nan[0, 2, 0, 0] = float("-inf")
with torch.no_grad():
    torch.onnx.export(model, x, os.path.join(out, "blocks.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=14)
    for name, value in (("x", x), ("nan", nan)):
        np.save(os.path.join(out, name + ".npy"), value.numpy())
        np.save(os.path.join(out, name + ".torch.npy"), model(value).numpy())
