#!/usr/bin/python3
"""Checks the example models (examples/*.ir) against PyTorch modules that
mirror them.

Each model below is written in PyTorch with the state_dict keys of the IR's
weight declarations; its weights come from a fixed seed (PyTorch's default
initialization, then random norm parameters and batch-norm statistics),
are written as safetensors and compiled into the model. The script runs the
model on a random input on the CPU plan and on cpu+sim2 (checked; the
default placement, which splits mlp, transformer and resnet18 across the
simulated devices; the cnn, which that placement keeps on the CPU, also
with every op on sim:0) and compares the output with PyTorch's.

    /usr/bin/python3 tests/torch/check_examples.py --modelc build/bin/modelc \\
        --modelc-run build/bin/modelc-run --workdir /tmp/check-examples
"""
import argparse
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import numpy as np
import torch
from torch import nn

from torchcheck import Checker, Tools, read_entries, read_weights, \
    write_safetensors

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "examples")

CPU = ("cpu", ["--target=cpu"])
SIM = ("sim", ["--target=cpu+sim2", "--checked"])
SIM_ALL = ("sim-all", ["--target=cpu+sim2", "--place-all=sim:0", "--checked"])
# The dynamic batch split over sim:0 and sim:1 at run time (balanced parts:
# 3 is 2 and 1); a batch of 1 cannot be split, so the range starts at 2
# and the cases of batch 1 are left out.
SIM_DP = ("sim-dp", ["--target=cpu+sim2", "--data-parallel", "--dim",
                     "batch=2..4", "--checked"])


class MLP(nn.Module):
    """examples/mlp.ir: 784 -> 1024 -> 1024 -> 10 with ReLUs."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 1024)
        self.fc2 = nn.Linear(1024, 1024)
        self.fc3 = nn.Linear(1024, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class BasicBlock(nn.Module):
    """torchvision's ResNet basic block: two 3x3 conv/batch-norm pairs and
    a shortcut, with a 1x1 conv/batch-norm projection when downsampling."""

    def __init__(self, inputs, outputs, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.downsample = None
        if stride != 1 or inputs != outputs:
            self.downsample = nn.Sequential(
                nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                nn.BatchNorm2d(outputs))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        shortcut = x if self.downsample is None else self.downsample(x)
        return torch.relu(y + shortcut)


class ResNet(nn.Module):
    """A ResNet with a conv/batch-norm/ReLU/max-pool stem, layers of basic
    blocks (layerN.M), global average pooling and a linear classifier."""

    def __init__(self, stem, layers, classes):
        super().__init__()
        width, kernel, stride = stem
        self.conv1 = nn.Conv2d(3, width, kernel, stride, kernel // 2,
                               bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        inputs = width
        for index, (outputs, blocks, first_stride) in enumerate(layers):
            chain = [BasicBlock(inputs, outputs, first_stride)]
            chain += [BasicBlock(outputs, outputs) for _ in range(blocks - 1)]
            setattr(self, f"layer{index + 1}", nn.Sequential(*chain))
            inputs = outputs
        self.layer_count = len(layers)
        self.fc = nn.Linear(inputs, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = nn.functional.max_pool2d(x, 3, 2, 1)
        for index in range(self.layer_count):
            x = getattr(self, f"layer{index + 1}")(x)
        return self.fc(torch.flatten(x.mean((2, 3), keepdim=True), 1))


def cnn():
    """examples/cnn.ir: 3x3 stem of 16, layer1.0 (16), layer2.0 (32, /2)."""
    return ResNet((16, 3, 1), [(16, 1, 1), (32, 1, 2)], 10)


def resnet18():
    """examples/resnet18.ir: torchvision's resnet18()."""
    return ResNet((64, 7, 2), [(64, 2, 1), (128, 2, 2), (256, 2, 2),
                               (512, 2, 2)], 1000)


def transformer():
    """examples/transformer.ir: a pre-norm encoder layer in eval mode."""
    return nn.TransformerEncoderLayer(
        d_model=512, nhead=8, dim_feedforward=2048, dropout=0.0,
        activation="gelu", batch_first=True, norm_first=True)


# Per model: the module, the input's shape, the plans, and the tolerance of
# the comparison: rtol, and atol as that fraction of the largest |output|
# (elements near zero carry the rounding of the larger terms they sum).
# Both sides compute in f32 with the same operations in another order
# (blocked GEMMs and convolutions: OpenBLAS/oneDNN here, PyTorch's own);
# the errors measured, as a fraction of the largest |output|, are 7e-7
# (mlp: K up to 1024), 4e-8 (cnn), 6e-7 (transformer: 4 chained GEMMs with
# K up to 2048, softmax, 2 layer norms) and 7e-7 (resnet18: 20 chained
# convolutions with K up to 4608, batch norms, residual sums). 1e-4 leaves
# a margin of more than 100 for other BLAS builds and thread counts.
MODELS = {
    "mlp": (MLP, (64, 784), [CPU, SIM], 1e-4),
    "cnn": (cnn, (1, 3, 32, 32), [CPU, SIM, SIM_ALL], 1e-4),
    "transformer": (transformer, (1, 128, 512), [CPU, SIM], 1e-4),
    "resnet18": (resnet18, (1, 3, 224, 224), [CPU, SIM], 1e-4),
    # Dynamic batch and sequence (docs/dynamic.md): one model.so, run at
    # the smallest sizes, two in between and the max.
    "transformer_dynamic": (transformer, [(1, 1, 512), (3, 17, 512),
                                          (2, 64, 512), (4, 128, 512)],
                            [CPU, SIM, SIM_DP], 1e-4),
}


def build(make_module, seed):
    """The module with weights from `seed`: PyTorch's initialization, then
    random norm scales/shifts and batch-norm statistics, as a trained model
    has (the defaults 1, 0, 0, 1 would hide a swapped operand)."""
    torch.manual_seed(seed)
    module = make_module().eval()
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    return module


def weights_of(module):
    """The state_dict as numpy arrays, without batch-norm bookkeeping."""
    return {name: t.detach().numpy().copy()
            for name, t in module.state_dict().items()
            if not name.endswith("num_batches_tracked")}


def placement_summary(verbose_output):
    """'cpu 23 ops, sim:0 0 ops, ...' from modelc -v's placement table."""
    rows = re.findall(r"^\s+(cpu|sim:\d+)\s+(\d+)\s", verbose_output, re.M)
    return ", ".join(f"{device} {ops} ops" for device, ops in rows)


def check_model(name, tools, checker, seed):
    """`name`'s module against the model at each of its input shapes."""
    make_module, input_shape, configs, tolerance = MODELS[name]
    ir = os.path.join(EXAMPLES, f"{name}.ir")
    module = build(make_module, seed)
    weights = weights_of(module)
    declared = read_weights(ir)
    for key in sorted(set(declared) ^ set(weights)):
        where = "the IR" if key in declared else "the PyTorch module"
        checker.fail(f"{name}: weight '{key}' is only in {where}")
    for key in sorted(set(declared) & set(weights)):
        if list(weights[key].shape) != declared[key][0]:
            checker.fail(f"{name}: weight '{key}' is {declared[key][0]} in "
                         f"the IR, {list(weights[key].shape)} in PyTorch")
    if set(declared) != set(weights):
        return
    weights_file = tools.path(f"{name}.safetensors")
    write_safetensors(weights_file, weights)

    rng = np.random.default_rng(seed)
    shapes = input_shape if isinstance(input_shape, list) else [input_shape]
    cases = []
    for shape in shapes:
        x = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        with torch.no_grad():
            want = module(torch.from_numpy(x)).numpy()
        cases.append((x, want))
    (entry,) = read_entries(ir)
    for tag, flags in configs:
        so, placement = tools.compile(
            ir, f"{name}-{tag}.so", ["--weights", weights_file, *flags, "-v"])
        if tag != "cpu":
            print(f"{name} {tag}: placement {placement_summary(placement)}")
        for x, want in cases:
            if tag == "sim-dp" and x.shape[0] < 2:
                continue
            atol = tolerance * float(np.abs(want).max())
            got = tools.run(so, entry, {"x": x}, ["output0"], tag)["output0"]
            label = f"{name} {tag} output0"
            if len(cases) > 1:
                label = f"{name} {tag} {'x'.join(map(str, x.shape))} output0"
            checker.compare(label, got, want, tolerance, atol)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modelc", required=True)
    parser.add_argument("--modelc-run", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    torch.set_num_threads(2)

    tools = Tools(args.modelc, args.modelc_run, args.workdir)
    checker = Checker()
    for name in args.models:
        # A fixed seed per model, whichever models are checked.
        check_model(name, tools, checker, seed=list(MODELS).index(name))
    return checker.finish()


if __name__ == "__main__":
    sys.exit(main())
