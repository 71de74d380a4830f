#!/usr/bin/python3
"""Exports small PyTorch modules the way users export them, for
tests/onnx/user-exports.test: torch.onnx.export with its defaults (no
opset_version: torch 1.13 writes opset 14) and at opset 13, each a pattern
that PyTorch writes for a common model and that once failed to import.

Each NAME.onnx (NAME = module.opsetN) comes with its inputs NAME.in0.npy,
... (named in0, in1, ... in the model) and PyTorch's output NAME.out.npy
(named out). The names are printed one a line. Fixed seeds.
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np
import torch
import torch.nn as nn

MODULES = {}


def module(*inputs, opsets=(13, None)):
    """Registers a module class whose forward takes these inputs, exported
    at each of `opsets` (None: torch.onnx.export's default, 14)."""
    def register(cls):
        MODULES[cls.__name__] = (cls, inputs, opsets)
        return cls
    return register


def normal(*shape):
    return lambda: torch.randn(*shape)


def padding_mask():
    # Batch 2, 6 positions; the second sequence has 2 padded positions.
    return lambda: torch.tensor([[False] * 6, [False] * 4 + [True] * 2])


@module(normal(2, 5, 8))
class cls_token(nn.Module):
    """A class token expanded to the batch, as vision transformers do:
    the export spells the shape of expand(n, -1, -1) as
    Where(Equal(c, Mul(ConstantOfShape(c), c)), ConstantOfShape(c), c)."""

    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, 8))
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        c = self.cls.expand(x.shape[0], -1, -1)
        return self.fc(torch.cat([c, x], 1))


@module(normal(2, 6, 16), padding_mask())
class mha_padding_mask(nn.Module):
    """nn.MultiheadAttention with a key_padding_mask."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x, mask):
        return self.mha(x, x, x, key_padding_mask=mask, need_weights=False)[0]


@module(normal(2, 6, 16), padding_mask())
class encoder_padding_mask(nn.Module):
    """nn.TransformerEncoder with a src_key_padding_mask (norm_first)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, x, mask):
        return self.enc(x, src_key_padding_mask=mask)


@module(normal(2, 6, 6))
class window_mask(nn.Module):
    """In-place assignment into a mask, as shifted-window attention builds
    its mask (mask[:, h, w] = k): ScatterND on constants, folded at import."""

    def forward(self, x):
        mask = torch.zeros(1, 6, 6)
        k = 0
        for h in (slice(0, -2), slice(-2, -1), slice(-1, None)):
            for w in (slice(0, -2), slice(-2, -1), slice(-1, None)):
                mask[:, h, w] = k
                k += 1
        return x + mask


@module(normal(2, 6, 3), normal(2, 2, 3))
class cache_update(nn.Module):
    """A slice of a key-value cache overwritten with new entries: ScatterND
    on run-time data."""

    def forward(self, cache, new):
        y = cache.clone()
        y[:, 2:4] = new
        return y * 2


@module(normal(3, 5), lambda: torch.tensor([[0, 1], [3, 2], [4, 0]]),
        normal(3, 2))
class scatter_elements(nn.Module):
    """torch.scatter and scatter_add along a dimension (ScatterElements).
    Before opset 16 the exporter writes scatter_add as a ScatterElements
    into zeros plus an Add, which keeps only the last of repeated indices
    (ONNX Runtime computes the same): the indices here do not repeat within
    a row."""

    def forward(self, x, index, src):
        return torch.scatter(x, 1, index, src) + \
            torch.scatter_add(x, 1, index, src)


@module(lambda: torch.randint(0, 256, (2, 8, 8, 3), dtype=torch.uint8))
class uint8_image(nn.Module):
    """An image as it arrives (uint8, channels last) normalised in the
    model, then a convolution: Cast from UINT8."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]))

    def forward(self, x):
        x = x.permute(0, 3, 1, 2).float() / 255.0
        return self.conv(x - self.mean.view(1, 3, 1, 1))


@module(normal(1, 2, 5, 6))
class bicubic(nn.Module):
    """F.interpolate with mode='bicubic' (Resize, mode cubic, A = -0.75),
    up and down, with and without align_corners."""

    def forward(self, x):
        up = nn.functional.interpolate(x, scale_factor=2, mode="bicubic")
        down = nn.functional.interpolate(up, size=(4, 9), mode="bicubic",
                                         align_corners=True)
        return down


@module(normal(2, 3, 5, 6), lambda: torch.rand(2, 4, 7, 2) * 2.6 - 1.3,
        opsets=(16,))
class grid_sample(nn.Module):
    """F.grid_sample (GridSample, opset 16: PyTorch exports it from there)
    in every mode, padding mode and align_corners, at points inside and
    outside [-1, 1]: 18 samplings side by side."""

    def forward(self, x, grid):
        outs = []
        for mode in ("bilinear", "nearest", "bicubic"):
            for padding in ("zeros", "border", "reflection"):
                for align in (False, True):
                    outs.append(nn.functional.grid_sample(
                        x, grid, mode=mode, padding_mode=padding,
                        align_corners=align))
        return torch.cat(outs, 1)


def main():
    out = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    for name, (cls, makers, opsets) in MODULES.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        m = cls().eval()
        torch.manual_seed(1)
        inputs = tuple(make() for make in makers)
        with torch.no_grad():
            expected = m(*inputs).numpy()
        names = ["in%d" % i for i in range(len(inputs))]
        for opset in opsets:
            tag = "%s.opset%d" % (name, opset or 14)
            kwargs = {} if opset is None else {"opset_version": opset}
            torch.onnx.export(m, inputs, os.path.join(out, tag + ".onnx"),
                              input_names=names, output_names=["out"],
                              **kwargs)
            for n, x in zip(names, inputs):
                np.save(os.path.join(out, "%s.%s.npy" % (tag, n)), x.numpy())
            np.save(os.path.join(out, tag + ".out.npy"), expected)
            print(tag)


if __name__ == "__main__":
    main()
