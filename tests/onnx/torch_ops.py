#!/usr/bin/python3
"""Exports small PyTorch modules, one per ONNX op family the importer builds
from several graph ops, for tests/onnx/ops.test.

Each NAME.onnx comes with its inputs NAME.in0.npy, NAME.in1.npy, ... (named
in0, in1, ... in the model) and PyTorch's output NAME.out.npy (named out).
The names are printed one a line, so the test can loop over them. Fixed
seeds; opset 17.
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = {}


def model(*inputs):
    """Registers a function of tensors as a model with these inputs."""
    def register(fn):
        MODELS[fn.__name__] = (fn, inputs)
        return fn
    return register


torch.manual_seed(0)
CLASS_WEIGHT = torch.rand(5) + 0.5
CONV1D = nn.Conv1d(3, 4, 3, stride=2, padding=1, dilation=1)
CONVT1D = nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1)
LSTM = nn.LSTM(6, 5, num_layers=2, batch_first=True, bidirectional=True)
GRU = nn.GRU(6, 4, batch_first=False)
RNN = nn.RNN(6, 3, nonlinearity="relu")
INSTANCE_SCALE, INSTANCE_BIAS = torch.randn(4), torch.randn(4)
GROUP_SCALE, GROUP_BIAS = torch.randn(6), torch.randn(6)


def image(*shape):
    return torch.randn(*shape)


@model(lambda: image(2, 3, 5, 7))
def argmax(x):
    # ArgMax and ArgMin (keepdims both ways), as float for one output.
    return (torch.argmax(x, dim=1).float() * 10 +
            torch.argmin(x, dim=1).float() +
            torch.argmax(x, dim=-1, keepdim=True)[:, 0].float() * 100)


@model(lambda: image(3, 4, 5), lambda: torch.randint(0, 4, (3, 2, 5)))
def gather_elements(x, index):
    return torch.gather(x, 1, index)


@model(lambda: image(2, 5, 6))
def trilu(x):
    return torch.tril(x, diagonal=1) - torch.triu(x, diagonal=-2) * 0.5


@model(lambda: torch.randn(6, 5), lambda: torch.randint(0, 5, (6,)))
def cross_entropy(x, target):
    # SoftmaxCrossEntropyLoss, 2-D, with class weights and ignore_index.
    target = torch.where(target == 3, torch.full_like(target, -1), target)
    return F.cross_entropy(x, target, weight=CLASS_WEIGHT, ignore_index=-1)


@model(lambda: torch.randn(2, 5, 3, 4), lambda: torch.randint(0, 5, (2, 3, 4)))
def nll_loss(x, target):
    # NegativeLogLikelihoodLoss on [N, C, H, W], per element.
    return F.nll_loss(F.log_softmax(x, 1), target, weight=CLASS_WEIGHT,
                      reduction="none")


@model(lambda: image(2, 4, 5, 6))
def instance_norm(x):
    return F.instance_norm(x, weight=INSTANCE_SCALE, bias=INSTANCE_BIAS)


@model(lambda: image(2, 6, 4, 5))
def group_norm(x):
    return F.group_norm(x, 3, GROUP_SCALE, GROUP_BIAS)


@model(lambda: image(1, 2, 5, 7))
def interpolate(x):
    near = F.interpolate(x, scale_factor=2, mode="nearest")
    lin = F.interpolate(x, size=(10, 14), mode="bilinear",
                        align_corners=False)
    corners = F.interpolate(x, size=(10, 14), mode="bilinear",
                            align_corners=True)
    return near + lin * 2 + corners * 3


@model(lambda: image(1, 2, 9, 11))
def interpolate_down(x):
    return F.interpolate(x, size=(4, 5), mode="bilinear", align_corners=False)


@model(lambda: image(1, 2, 5, 6))
def pad_modes(x):
    reflect = F.pad(x, (2, 1, 3, 0), mode="reflect")
    edge = F.pad(x, (2, 1, 3, 0), mode="replicate")
    return reflect + 2 * edge


@model(lambda: torch.randn(2, 3, 11))
def window_1d(x):
    # Conv1d, ConvTranspose1d, MaxPool1d, AvgPool1d: 1-D windows lifted to
    # 2-D with a unit height.
    y = F.max_pool1d(torch.relu(CONV1D(x)), 2, ceil_mode=True)
    return F.avg_pool1d(CONVT1D(y), 3, stride=1, padding=1)


@model(lambda: image(1, 8, 3, 4))
def depth_space(x):
    # DepthToSpace (CRD, as pixel_shuffle exports) then SpaceToDepth.
    return F.pixel_unshuffle(F.pixel_shuffle(x, 2) * 2 + 1, 2)


@model(lambda: torch.randn(2, 4, 6, 8), lambda: torch.randn(2, 4, 5, 8))
def einsum_attention(q, k):
    scores = torch.einsum("bhid,bhjd->bhij", q, k)
    return torch.einsum("bhij,bhjd->bhid", torch.softmax(scores, -1), k)


@model(lambda: image(3, 9))
def topk(x):
    # Ties included: the lower index first, as ONNX and torch do.
    x = torch.cat([x, x[:, :2]], dim=1)
    largest, where = torch.topk(x, 4, dim=1)
    smallest, _ = torch.topk(x, 3, dim=0, largest=False)
    return largest.sum() + where.float().sum(1, keepdim=True) + smallest[:, :4]


@model(lambda: torch.randn(3, 4), lambda: torch.randn(4, 5))
def einsum_misc(a, b):
    return (torch.einsum("ij,jk->ik", a, b) +
            torch.einsum("ij->j", a).sum() + torch.einsum("ij->ji", a)[0, 0])


@model(lambda: torch.randint(0, 6, (3, 4)))
def one_hot(ids):
    return F.one_hot(ids, 6).float() * 2


@model(lambda: image(3, 7))
def hard_ops(x):
    # Hardmax is not what torch exports; this is the other index family:
    # topk-free max with indices, as torch.max(dim) exports (ReduceMax,
    # ArgMax).
    values, index = torch.max(x, dim=1)
    return values + index.float()


@model(lambda: torch.randn(2, 7, 6))
def recurrent(x):
    # LSTM (two layers, bidirectional, batch first), GRU, RNN (relu).
    y, (h, c) = LSTM(x)
    g, gh = GRU(x.transpose(0, 1))
    r, rh = RNN(x.transpose(0, 1))
    return (y.sum() + h.sum() + c.sum() + g.transpose(0, 1).sum(-1, keepdim=True)
            + r.transpose(0, 1).sum(-1, keepdim=True) + gh.sum() + rh.sum())


for m in (CONV1D, CONVT1D, LSTM, GRU, RNN):
    m.requires_grad_(False)


def main():
    out = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    for name, (fn, makers) in MODELS.items():
        if only and name not in only:
            continue
        torch.manual_seed(1)
        inputs = tuple(make() for make in makers)

        class Wrapped(nn.Module):
            def forward(self, *args):
                return fn(*args)

        names = ["in%d" % i for i in range(len(inputs))]
        torch.onnx.export(Wrapped().eval(), inputs,
                          os.path.join(out, name + ".onnx"),
                          input_names=names, output_names=["out"],
                          opset_version=17)
        for n, x in zip(names, inputs):
            np.save(os.path.join(out, "%s.%s.npy" % (name, n)), x.numpy())
        with torch.no_grad():
            np.save(os.path.join(out, name + ".out.npy"),
                    fn(*inputs).numpy())
        print(name)


if __name__ == "__main__":
    main()
