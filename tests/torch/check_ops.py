#!/usr/bin/python3
"""Checks every entry point of tests/e2e/Inputs/ops.ir against PyTorch.

Each entry point found in ops.ir has a PyTorch function here, registered with
@entry("name"), that mirrors the IR op by op. The script writes random
weights (safetensors) for the ops.ir weight declarations, compiles ops.ir for
the CPU plan and with every op on a simulated device (cpu+sim2,
--place-all=sim:0, checked, weights external), runs each entry with
modelc-run on random inputs and compares every output with PyTorch's: f32
within rtol 1e-4 / atol 1e-5 unless the entry says otherwise, integers and
booleans exactly. An entry of ops.ir without a function here (or a function
without an entry) is a failure.

    /usr/bin/python3 tests/torch/check_ops.py --modelc build/bin/modelc \\
        --modelc-run build/bin/modelc-run --workdir /tmp/check-ops

Adding an op to ops.ir: write its function below, next to the others, with
the inputs' value ranges where [-1, 1] is not right for it.
"""
import argparse
import os
import sys
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import numpy as np
import torch
import torch.nn.functional as F

from torchcheck import NUMPY_DTYPES, Checker, Tools, read_entries, \
    read_weights, write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
OPS_IR = os.path.join(HERE, "..", "e2e", "Inputs", "ops.ir")
SEEDS = (0, 1)
F32_RTOL, F32_ATOL = 1e-4, 1e-5

# The plans each entry runs on: (tag, modelc flags besides the weights).
CONFIGS = [
    ("cpu", ["--target=cpu"]),
    ("sim", ["--target=cpu+sim2", "--place-all=sim:0", "--checked",
             "--external-weights"]),
]

# Value ranges of the weights that need one other than [-1, 1].
WEIGHT_RANGES = {"bn.running_var": (0.5, 1.5), "classes": (0.5, 2.0)}


# --- Input generators: (rng, shape, numpy dtype) -> array -------------------

def uniform(low, high):
    return lambda rng, shape, dtype: rng.uniform(low, high, shape).astype(dtype)


def away_from_zero(low, high):
    """Magnitude in [low, high], either sign (divisors)."""
    def generate(rng, shape, dtype):
        sign = rng.choice([-1.0, 1.0], shape)
        return (sign * rng.uniform(low, high, shape)).astype(dtype)
    return generate


def integers(low, high, nonzero=False):
    """Integers in [low, high]; without zero when nonzero."""
    def generate(rng, shape, dtype):
        values = np.array([v for v in range(low, high + 1)
                           if v != 0 or not nonzero])
        return rng.choice(values, shape).astype(dtype)
    return generate


def grid(step, low, high):
    """Multiples of step in [low, high] (exact ties for rounding)."""
    def generate(rng, shape, dtype):
        count = int(round((high - low) / step))
        return (low + step * rng.integers(0, count + 1, shape)).astype(dtype)
    return generate


def every_class(classes):
    """Targets covering every class in [0, classes), then repeating."""
    def generate(rng, shape, dtype):
        size = int(np.prod(shape))
        return rng.permutation(np.arange(size) % classes).reshape(
            shape).astype(dtype)
    return generate


DEFAULT_FLOAT = uniform(-1.0, 1.0)

# --- The PyTorch counterpart of each ops.ir entry ---------------------------

ENTRIES = {}


def entry(name, tolerances=None, **inputs):
    """Registers fn(w, **inputs) as the PyTorch version of entry point
    `name`: it returns the entry's outputs in order (a tuple, or one
    tensor). `w` holds the weights as tensors, by name. `inputs` maps an
    input to its generator (default: floats uniform in [-1, 1]; integer
    inputs need one); `tolerances` maps an output index to (rtol, atol)
    where the f32 default does not fit (say why next to it)."""
    def register(fn):
        ENTRIES[name] = (fn, inputs, tolerances or {})
        return fn
    return register


def pad2d(x, padding, value=0.0):
    """ops.ir padding [top, left, bottom, right] -> F.pad's order."""
    top, left, bottom, right = padding
    return F.pad(x, (left, right, top, bottom), value=value)


# output1 sums transcendental functions of values in (-1, 1): no
# accumulation, errors of a few ulp (2.4e-7 measured on |values| ~ 2), so
# 1e-5 is a margin of ~40 and still catches exact and tanh gelu swapped
# (they differ by up to 1.4e-4 there), which 1e-4 would not.
@entry("elementwise", tolerances={1: (1e-5, 1e-6)}, a=uniform(-2.0, 2.0),
       b=away_from_zero(0.5, 2.0), s=uniform(-3.0, 3.0))
def elementwise(w, a, b, c, s):
    v = torch.minimum(torch.maximum((((a + b) * c) - s) / b, a), c)
    out0 = torch.abs(-v)
    e = torch.exp(a)
    lg = torch.log(e)
    out1 = (F.gelu(torch.tanh(lg)) + F.gelu(torch.sigmoid(torch.sqrt(e)),
                                            approximate="tanh")
            + F.silu(torch.rsqrt(e)) + torch.erf(torch.pow(e, b)))
    sel = torch.where(a > c, a, s)
    le = a <= b
    cf = (a * s).to(torch.int32).to(torch.float32)  # truncation toward 0
    return out0, out1, sel, le, cf


@entry("leaky_relu")
def leaky_relu(w, a, b, x):
    h = F.linear(x, w["proj.weight"], w["proj.bias"])
    return (F.leaky_relu(a), torch.exp(F.leaky_relu(a + b, 0.2)),
            F.leaky_relu(h, 1.5))


@entry("integers", i=integers(-4, 4), j=integers(-4, 4, nonzero=True))
def integer_ops(w, i, j):
    two = torch.tensor(2, dtype=torch.int32)
    v0 = i + two
    v3 = torch.div(v0 * j - i, j, rounding_mode="trunc")
    v4 = -v3
    v7 = torch.minimum(torch.maximum(torch.abs(v4), i), v0)
    v8 = torch.pow(v0, two)
    eq = i == j
    return v7, v8, eq.to(torch.float32), torch.where(eq, v8, torch.relu(v4))


# The math functions on their arguments, over the ranges where they are
# defined and accurate in f32 (tan away from pi/2, asin/acos/atanh inside
# (-1, 1), acosh from 1).
@entry("sin", a=uniform(-4.0, 4.0))
def sin(w, a):
    return torch.sin(a)


@entry("cos", a=uniform(-4.0, 4.0))
def cos(w, a):
    return torch.cos(a)


@entry("tan", a=uniform(-1.4, 1.4))
def tan(w, a):
    return torch.tan(a)


@entry("asin", a=uniform(-0.99, 0.99))
def asin(w, a):
    return torch.asin(a)


@entry("acos", a=uniform(-0.99, 0.99))
def acos(w, a):
    return torch.acos(a)


@entry("atan", a=uniform(-5.0, 5.0))
def atan(w, a):
    return torch.atan(a)


@entry("sinh", a=uniform(-4.0, 4.0))
def sinh(w, a):
    return torch.sinh(a)


@entry("cosh", a=uniform(-4.0, 4.0))
def cosh(w, a):
    return torch.cosh(a)


@entry("asinh", a=uniform(-5.0, 5.0))
def asinh(w, a):
    return torch.asinh(a)


@entry("acosh", a=uniform(-2.0, 2.0))
def acosh(w, a):
    return torch.acosh(a + 3.0)


@entry("atanh", a=uniform(-0.99, 0.99))
def atanh(w, a):
    return torch.atanh(a)


# 4a on a grid of quarters (floor, ceil: integers and between) and of halves
# (round: ties, which go to even).
@entry("floor", a=grid(1 / 16, -1.0, 1.0))
def floor(w, a):
    return torch.floor(a * 4.0)


@entry("ceil", a=grid(1 / 16, -1.0, 1.0))
def ceil(w, a):
    return torch.ceil(a * 4.0)


@entry("round", a=grid(1 / 8, -1.0, 1.0))
def round_(w, a):
    return torch.round(a * 4.0)


# graph.mod is torch.remainder (the divisor's sign) and, with fmod,
# torch.fmod (the dividend's sign); divisors are never 0 here.
@entry("mod", a=uniform(-2.0, 2.0), b=away_from_zero(0.25, 1.5),
       i=integers(-9, 9), j=integers(-9, 9, nonzero=True),
       k=integers(-20, 20), l=integers(-6, 6, nonzero=True))
def mod(w, a, b, i, j, k, l):
    n = i * 7 - 3
    d = j * 5 - 2
    return (torch.fmod(a * 4.0, b), torch.remainder(n, d), torch.fmod(n, d),
            torch.remainder(n, j), torch.remainder(k, l), torch.fmod(k, l))


@entry("products")
def products(w, a, b, x, g, c):
    pw, pb = w["proj.weight"], w["proj.bias"]
    gemm = 0.5 * (g.t() @ pw.t()) + 2.0 * c
    return (torch.matmul(a, b), F.linear(x, pw, pb), F.linear(x, pw), gemm,
            g @ pw)


def wide_integers(bits):
    """Integers of magnitude up to 2^(bits - 2): their products overflow."""
    def generate(rng, shape, dtype):
        bound = 2 ** (bits - 2)
        return rng.integers(-bound, bound, shape, dtype=np.int64).astype(dtype)
    return generate


@entry("integer_products", a=wide_integers(32), b=wide_integers(32),
       g=wide_integers(64), h=wide_integers(64), c=wide_integers(64))
def integer_products(w, a, b, g, h, c):
    # PyTorch's integer products wrap around as modelc's do.
    return (torch.matmul(a, b), 3 * (g.t() @ h.t()) - 2 * c, g @ h)


@entry("norms")
def norms(w, x, g, img, p):
    return (torch.softmax(x, 1), torch.log_softmax(x, -1),
            F.layer_norm(x, (5, 6), g, g, eps=1e-5),
            F.layer_norm(x, (6,), eps=1e-3),
            F.batch_norm(img, p, w["bn.running_var"], p, p, training=False,
                         eps=1e-5))


@entry("convolutions")
def convolutions(w, x, b, w1):
    conv = F.conv2d(pad2d(x, (1, 2, 1, 0)), w["conv.weight"], b, stride=2,
                    dilation=(1, 2), groups=2)
    return (conv, F.conv2d(x, w1),
            F.max_pool2d(x, 3, 2, padding=1),
            F.avg_pool2d(x, 3, 2, padding=1, count_include_pad=False),
            F.avg_pool2d(x, 2), x.mean((2, 3), keepdim=True))


@entry("conv_transpose2d")
def conv_transpose2d(w, x, wt, b, wg):
    # PyTorch pads both sides alike: [1, 1, 1, 1] is padding=1. The second
    # pads [top 0, left 1, bottom 1, right 0]: pad symmetrically by the
    # larger amount (1) and keep the rows and columns of the smaller side
    # (a bottom/right padding of 0 adds back the one row/column the
    # symmetric padding removed there).
    first = F.conv_transpose2d(x, wt, b, stride=2, padding=1, output_padding=1)
    full = F.conv_transpose2d(x, wg, None, stride=(1, 2), padding=0,
                              output_padding=(1, 1), dilation=(2, 1),
                              groups=2)
    # full: H = 4 + 2 + 1 + 1 = 8 rows, W = 8 + 2 + 1 + 1 = 12 columns;
    # padding top 0 / bottom 1 drops the last row, left 1 / right 0 drops
    # the first column.
    return first, full[:, :, 0:7, 1:12]


@entry("ceil_mode")
def ceil_mode(w, x):
    return (F.max_pool2d(x, 3, 2, ceil_mode=True),)


@entry("shapes", ids=integers(0, 2))
def shapes(w, x, y, t, ids):
    return (x.reshape(4, -1), torch.flatten(x, 1), x.permute(2, 0, 1),
            torch.cat([x, y, x], 1), x[:, -2:100, 0:4:3], t[:, ids],
            x.sum((0, 2)), x.mean(1, keepdim=True), x.amax(-1))


@entry("fused_reductions", s=away_from_zero(0.25, 1.5))
def fused_reductions(w, x, b, s):
    mu = x.mean((0, 2, 3), keepdim=True)
    c = x - mu
    return ((c * c).mean((0, 2, 3), keepdim=True), (x * b).sum((1, 2, 3)),
            torch.exp(x).sum(), (x / s).sum(3), (x * 2.0).mean(-1, keepdim=True))


def cumsum(x, dim, exclusive=False, reverse=False):
    """ONNX CumSum's exclusive and reverse forms from torch.cumsum."""
    if reverse:
        x = x.flip(dim)
    y = torch.cumsum(x, dim, dtype=x.dtype)
    if exclusive:
        y = y - x
    return y.flip(dim) if reverse else y


# i and j: sums of values up to 2^(bits - 2) overflow; PyTorch's integer
# sums wrap around as modelc's do.
@entry("products_and_cumsums", i=wide_integers(32), j=wide_integers(64))
def products_and_cumsums(w, x, i, j):
    return (x.prod(1, keepdim=True), x.prod(),
            cumsum(x, 1), cumsum(x, -1, exclusive=True, reverse=True),
            cumsum(i, 0, exclusive=True), cumsum(j, 1, reverse=True))


# Indices from -3 to 2 repeat rows and address them from the end too. A
# plain assignment with repeated indices has no defined order in PyTorch
# (index_put_), so output0 applies the rows one by one as ScatterND
# defines; the reductions are PyTorch's own index_put_ (accumulate) and
# scatter_reduce.
@entry("scatters", i=integers(-3, 2), j=integers(-3, 2))
def scatters(w, d, i, u, j, v):
    rows = i[:, 0].long() % 3
    y = d.clone()
    for r in range(rows.shape[0]):
        y[rows[r]] = u[r]
    flat = (j[:, 0].long() % 3) * 4 + j[:, 1].long() % 4
    per_row = rows[:, None].expand(-1, 4)
    return (y, d.index_put((rows,), u, accumulate=True),
            d.flatten().scatter_reduce(0, flat, v, "prod").reshape(3, 4),
            d.flatten().scatter_reduce(0, flat, v, "amax").reshape(3, 4),
            d.scatter_reduce(0, per_row, u, "amin"))


@entry("loss", t=every_class(5), t32=integers(0, 4))
def loss(w, logits, t, t32):
    return (F.cross_entropy(logits, t, weight=w["classes"]),
            F.cross_entropy(logits, t32.long(), reduction="sum"),
            F.cross_entropy(logits, t, reduction="none", ignore_index=0))


# --- The check --------------------------------------------------------------

def random_weights(declarations, seed):
    rng = np.random.default_rng(seed)
    weights = {}
    for name, (shape, dtype) in declarations.items():
        if dtype != "f32":
            sys.exit(f"weight '{name}' is {dtype}: check_ops.py generates "
                     f"f32 weights only; add a range for it")
        low, high = WEIGHT_RANGES.get(name, (-1.0, 1.0))
        weights[name] = rng.uniform(low, high, shape).astype(np.float32)
    return weights


def random_inputs(name, signature, generators, seed):
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    inputs = {}
    for input_name, shape, dtype in signature:
        generate = generators.get(input_name)
        if generate is None:
            if dtype != "f32":
                sys.exit(f"entry '{name}': input '{input_name}' is {dtype}; "
                         f"give it a generator in @entry (its valid range)")
            generate = DEFAULT_FLOAT
        inputs[input_name] = generate(rng, shape, NUMPY_DTYPES[dtype])
    return inputs


def check_entry(tools, checker, so, tag, name, signature, weights, largest):
    """Runs entry `name` of model `so` for each seed and compares each
    output with its PyTorch function's; records the largest errors."""
    fn, generators, tolerances = ENTRIES[name]
    input_signature, output_names = signature
    for seed in SEEDS:
        inputs = random_inputs(name, input_signature, generators, seed)
        got = tools.run(so, name, inputs, output_names, f"{tag}.{seed}")
        with torch.no_grad():
            want = fn(weights, **{k: torch.from_numpy(v)
                                  for k, v in inputs.items()})
        if isinstance(want, torch.Tensor):
            want = (want,)
        if len(want) != len(output_names):
            checker.fail(f"{name}: the PyTorch function returns {len(want)} "
                         f"outputs, the entry has {len(output_names)}")
            continue
        for index, output in enumerate(output_names):
            rtol, atol = tolerances.get(index, (F32_RTOL, F32_ATOL))
            error = checker.compare(
                f"ops.ir {tag} {name} {output} (seed {seed})", got[output],
                want[index].numpy(), rtol, atol,
                note=f"inputs: {tools.path(f'{tag}.{seed}.{name}')}.in.*.npy")
            if error is not None:
                key = (name, output)
                largest[key] = max(largest.get(key, 0.0), error)


def check_registry(checker, names):
    """Every entry point has a PyTorch function, and every function an
    entry point."""
    for name in names:
        if name not in ENTRIES:
            checker.fail(f"entry '{name}' of ops.ir has no PyTorch "
                         f"counterpart: add one to tests/torch/check_ops.py "
                         f"(a function decorated @entry(\"{name}\"))")
    for name in ENTRIES:
        if name not in names:
            checker.fail(f"check_ops.py has a PyTorch function for '{name}', "
                         f"which ops.ir does not have (renamed?)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modelc", required=True)
    parser.add_argument("--modelc-run", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--ir", default=OPS_IR)
    args = parser.parse_args()
    torch.set_num_threads(2)

    tools = Tools(args.modelc, args.modelc_run, args.workdir)
    checker = Checker()
    names = read_entries(args.ir)
    check_registry(checker, names)

    weights = random_weights(read_weights(args.ir), seed=7)
    weights_file = tools.path("weights.safetensors")
    write_safetensors(weights_file, weights)
    print(f"weights: {weights_file}")
    torch_weights = {k: torch.from_numpy(v) for k, v in weights.items()}

    largest = {}
    for tag, flags in CONFIGS:
        so, _ = tools.compile(args.ir, f"ops-{tag}.so",
                              ["--weights", weights_file, *flags])
        signatures = tools.signatures(so)
        if list(signatures) != names:
            checker.fail(f"{tag}: the model's entries {list(signatures)} "
                         f"are not ops.ir's {names}")
        for name in names:
            if name in ENTRIES and name in signatures:
                check_entry(tools, checker, so, tag, name, signatures[name],
                            torch_weights, largest)
    print("largest absolute error per output, over plans and seeds:")
    for (name, output), error in largest.items():
        print(f"  {name} {output}: {error:.3g}")
    return checker.finish()


if __name__ == "__main__":
    sys.exit(main())
