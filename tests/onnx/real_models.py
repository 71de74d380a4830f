#!/usr/bin/python3
"""Exports the real models tests/onnx/models.test compiles, into the folder given.

Random weights from fixed seeds (no downloads), each with its input and
PyTorch's output as NAME.x.npy / NAME.y.npy:
  resnet18.onnx      torchvision ResNet-18, 1x3x64x64 (opset 17)
  mobilenet_v2.onnx  torchvision MobileNetV2, 1x3x64x64 (ReLU6 as Clip)
  mobilenet_v3.onnx  torchvision MobileNetV3-small, 1x3x64x64 (HardSwish,
                     HardSigmoid)
  encoder.onnx       nn.TransformerEncoderLayer(128, 4, 256, batch_first,
                     norm_first) on 2x16x128
  gpt2.onnx          a GPT-2-style block: token and position embeddings,
                     causal mask with masked_fill(-inf), tanh GELU, LM head;
                     input int64 token ids 2x16
Batch-norm statistics are drawn so that no layer is the identity, and the
image models' classifiers are scaled so that their outputs are about 1. Names given as arguments after the folder limit what is written.
"""
import math
import os
import sys

sys.dont_write_bytecode = True

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Gpt2Block(nn.Module):
    def __init__(self, vocab=96, ctx=32, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(ctx, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)
        self.lnf = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)).bool())

    def forward(self, ids):
        b, t = ids.shape
        pos = torch.arange(t, device=ids.device).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        h = self.ln1(x)
        q, k, v = self.qkv(h).split(h.shape[-1], dim=-1)
        d = h.shape[-1] // self.heads
        q = q.view(b, t, self.heads, d).transpose(1, 2)
        k = k.view(b, t, self.heads, d).transpose(1, 2)
        v = v.view(b, t, self.heads, d).transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        s = s.masked_fill(~self.mask[:t, :t], float("-inf"))
        a = torch.softmax(s, dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, -1))
        x = x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return self.head(self.lnf(x))


def perturb_norms(module):
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


def unit_scale(module, x):
    """Scales the last Linear so that the output's largest magnitude is
    about 1: a 1e-5 tolerance is then 1e-5 of the output's scale (the
    MobileNets' classifiers start with outputs near 0.01)."""
    module.eval()
    last = [m for m in module.modules() if isinstance(m, nn.Linear)][-1]
    with torch.no_grad():
        scale = module(x).abs().max().item()
        last.weight.div_(scale)
        if last.bias is not None:
            last.bias.div_(scale)


def export(out, name, module, x, opset=17):
    module.eval()
    torch.onnx.export(module, (x,), os.path.join(out, name + ".onnx"),
                      input_names=["x"], output_names=["y"],
                      opset_version=opset)
    np.save(os.path.join(out, name + ".x.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, name + ".y.npy"), module(x).numpy())


def main():
    import torchvision
    out = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)

    def build(name, make, x):
        if only and name not in only:
            return
        torch.manual_seed(0)
        module = make()
        perturb_norms(module)
        if x.dtype == torch.float32 and x.dim() == 4:
            unit_scale(module, x)
        export(out, name, module, x)

    torch.manual_seed(1)
    image = torch.randn(1, 3, 64, 64)
    build("resnet18", lambda: torchvision.models.resnet18(num_classes=100),
          image)
    build("mobilenet_v2",
          lambda: torchvision.models.mobilenet_v2(num_classes=100), image)
    build("mobilenet_v3",
          lambda: torchvision.models.mobilenet_v3_small(num_classes=100),
          image)
    torch.manual_seed(2)
    build("encoder", lambda: nn.TransformerEncoderLayer(
        128, 4, 256, dropout=0.0, batch_first=True, norm_first=True),
        torch.randn(2, 16, 128))
    torch.manual_seed(3)
    build("gpt2", Gpt2Block, torch.randint(0, 96, (2, 16)))


if __name__ == "__main__":
    main()
