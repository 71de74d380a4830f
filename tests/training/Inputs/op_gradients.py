#!/usr/bin/python3
"""Checks each graph op's gradient rule against torch.autograd, in float32.

    op_gradients.py OUTDIR [--target=cpu] [--place-all=DEVICE] [--cuda-emulation]
        [--modelc modelc] [--modelc-run modelc-run]

Builds one OUTDIR/model.ir whose entry point @loss returns
    sum over the cases i of reduce_sum(op_i(operands) * R_i),
where each case's float operands are weights named CASE.OPERAND (so modelc
takes gradients with respect to them) and R_i is a fixed random frozen
weight CASE.r (frozen weights get no gradient; class weights of
cross_entropy are frozen too). Integer targets of cross_entropy are inputs
of @loss (%CASE_t). Writes every weight to w.safetensors, computes the same
loss with torch, calls backward(), then compiles with
    modelc model.ir --train --weights w.safetensors -o t.so --target=...
runs `modelc-run t.so --entry gradients --output-dir OUT` and compares each
OUT/NAME.npy (and OUT/loss.npy) with torch's: |a - e| <= 1e-5 + 1e-4 |e|.
Prints a line per parameter and "N passed, M failed"; exit status 1 on any
failure.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st import save_safetensors  # noqa: E402

ATOL, RTOL = 1e-5, 1e-4
# oneDNN's Winograd F(4x4, 3x3) (cases named *winograd*): each element
# within this share of the gradient's largest magnitude.
WINOGRAD_SCALE_TOL = 1e-5
rng = np.random.default_rng(0)


# Operand kinds. A shape alone (a tuple) is a normal(0, 1) parameter.
def P(*shape):  # positive parameter (log, sqrt, rsqrt)
    return ("param", rng.uniform(0.5, 2.0, shape))


def A(*shape):  # parameter away from 0 (relu kinks, div denominators)
    return ("param", rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 1.5, shape))


def W(*shape):  # frozen weight in [0.5, 1.5) (cross_entropy class weights)
    return ("frozen", rng.uniform(0.5, 1.5, shape))


def T(*targets):  # i64 targets: an input of @loss
    return ("input", np.array(targets, dtype=np.int64))


def ce(**kw):  # F.cross_entropy with the op's attributes
    return lambda x, t, w=None: F.cross_entropy(x, t, weight=w, **kw)


# (case name, operands, the op in IR (%NAME is an operand, $NAME its type), torch).
CASES = [
    ("neg", dict(x=(3, 4)), "graph.neg %x : $x", lambda x: -x),
    ("relu", dict(x=A(3, 4)), "graph.relu %x : $x", F.relu),
    ("leaky_relu", dict(x=A(3, 4)), "graph.leaky_relu %x alpha 0.2 : $x",
     lambda x: F.leaky_relu(x, 0.2)),
    ("exp", dict(x=(3, 4)), "graph.exp %x : $x", torch.exp),
    ("log", dict(x=P(3, 4)), "graph.log %x : $x", torch.log),
    ("sqrt", dict(x=P(3, 4)), "graph.sqrt %x : $x", torch.sqrt),
    ("rsqrt", dict(x=P(3, 4)), "graph.rsqrt %x : $x", torch.rsqrt),
    ("tanh", dict(x=(3, 4)), "graph.tanh %x : $x", torch.tanh),
    ("sigmoid", dict(x=(3, 4)), "graph.sigmoid %x : $x", torch.sigmoid),
    ("silu", dict(x=(3, 4)), "graph.silu %x : $x", F.silu),
    ("erf", dict(x=(3, 4)), "graph.erf %x : $x", torch.erf),
    ("gelu", dict(x=(3, 4)), "graph.gelu %x : $x", F.gelu),
    ("gelu_tanh", dict(x=(3, 4)), "graph.gelu %x approximate tanh : $x",
     lambda x: F.gelu(x, approximate="tanh")),
    # Elementwise binary ops: same shapes, a row [4] and a column [3, 1].
    ("add", dict(a=(3, 4), b=(3, 4)), "graph.add %a, %b : $a, $b", torch.add),
    ("add_row", dict(a=(3, 4), b=(4,)), "graph.add %a, %b : $a, $b", torch.add),
    ("add_col", dict(a=(3, 1), b=(3, 4)), "graph.add %a, %b : $a, $b", torch.add),
    ("sub_row", dict(a=(3, 4), b=(4,)), "graph.sub %a, %b : $a, $b", torch.sub),
    ("sub_col", dict(a=(3, 1), b=(3, 4)), "graph.sub %a, %b : $a, $b", torch.sub),
    ("mul_row", dict(a=(3, 4), b=(4,)), "graph.mul %a, %b : $a, $b", torch.mul),
    ("mul_col", dict(a=(3, 4), b=(3, 1)), "graph.mul %a, %b : $a, $b", torch.mul),
    ("div", dict(a=(3, 4), b=A(3, 4)), "graph.div %a, %b : $a, $b", torch.div),
    ("div_row", dict(a=(3, 4), b=A(4,)), "graph.div %a, %b : $a, $b", torch.div),
    ("div_col", dict(a=(3, 1), b=A(3, 4)), "graph.div %a, %b : $a, $b", torch.div),
    # Matrix products.
    ("matmul", dict(a=(3, 4), b=(4, 5)), "graph.matmul %a, %b : $a, $b", torch.matmul),
    ("matmul_bcast", dict(a=(2, 3, 4), b=(4, 5)), "graph.matmul %a, %b : $a, $b",
     torch.matmul),
    ("matmul_batched", dict(a=(2, 1, 3, 4), b=(3, 4, 5)), "graph.matmul %a, %b : $a, $b",
     torch.matmul),
    # b's batch dimensions all 1 (one product over every row of a), and
    # more of them than a has.
    ("matmul_bcast_ones", dict(a=(2, 3, 4), b=(1, 4, 5)), "graph.matmul %a, %b : $a, $b",
     torch.matmul),
    ("matmul_bcast_rank", dict(a=(3, 4), b=(1, 1, 4, 5)), "graph.matmul %a, %b : $a, $b",
     torch.matmul),
    ("linear", dict(x=(3, 4), w=(5, 4), b=(5,)), "graph.linear %x, %w, %b : $x, $w, $b",
     F.linear),
    ("linear_3d", dict(x=(2, 3, 4), w=(5, 4)), "graph.linear %x, %w : $x, $w", F.linear),
    ("gemm", dict(a=(4, 3), b=(5, 4), c=(3, 5)),
     "graph.gemm %a, %b, %c {transpose_a = true, transpose_b = true, alpha = 0.5 : f32,"
     " beta = 2.0 : f32} : $a, $b, $c",
     lambda a, b, c: 0.5 * (a.T @ b.T) + 2.0 * c),
    ("gemm_row", dict(a=(3, 4), b=(5, 4), c=(5,)),
     "graph.gemm %a, %b, %c {transpose_b = true, beta = -1.5 : f32} : $a, $b, $c",
     lambda a, b, c: a @ b.T - 1.5 * c),
    ("gemm_col", dict(a=(4, 3), b=(4, 5), c=(3, 1)),
     "graph.gemm %a, %b, %c {transpose_a = true, alpha = 3.0 : f32} : $a, $b, $c",
     lambda a, b, c: 3.0 * (a.T @ b) + c),
    # Softmax along the last axis and along axis 0.
    ("softmax", dict(x=(3, 4)), "graph.softmax %x : $x", lambda x: F.softmax(x, -1)),
    ("softmax_0", dict(x=(3, 4)), "graph.softmax %x {axis = 0} : $x",
     lambda x: F.softmax(x, 0)),
    ("log_softmax", dict(x=(3, 4)), "graph.log_softmax %x : $x",
     lambda x: F.log_softmax(x, -1)),
    ("log_softmax_0", dict(x=(3, 4)), "graph.log_softmax %x {axis = 0} : $x",
     lambda x: F.log_softmax(x, 0)),
    # Shapes.
    ("reshape", dict(x=(2, 3, 4)), "graph.reshape %x to [4, -1] : $x",
     lambda x: x.reshape(4, -1)),
    ("flatten", dict(x=(2, 3, 4)), "graph.flatten %x : $x", lambda x: x.flatten(1)),
    ("flatten_01", dict(x=(2, 3, 4)), "graph.flatten %x {start_dim = 0, end_dim = 1} : $x",
     lambda x: x.flatten(0, 1)),
    ("transpose", dict(x=(3, 4)), "graph.transpose %x perm [1, 0] : $x", lambda x: x.T),
    ("transpose_3d", dict(x=(2, 3, 4)), "graph.transpose %x perm [2, 0, 1] : $x",
     lambda x: x.permute(2, 0, 1)),
    # Reductions: one axis, keepdims, several axes, all axes.
    ("reduce_sum_1", dict(x=(3, 4)), "graph.reduce_sum %x {axes = array<i64: 1>} : $x",
     lambda x: x.sum(1)),
    ("reduce_sum_0k", dict(x=(3, 4)),
     "graph.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : $x",
     lambda x: x.sum(0, keepdim=True)),
    ("reduce_sum_02k", dict(x=(2, 3, 4)),
     "graph.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = true} : $x",
     lambda x: x.sum((0, 2), keepdim=True)),
    ("reduce_sum_all", dict(x=(3, 4)), "graph.reduce_sum %x : $x", torch.sum),
    ("reduce_mean_1", dict(x=(3, 4)), "graph.reduce_mean %x {axes = array<i64: -1>} : $x",
     lambda x: x.mean(-1)),
    ("reduce_mean_0k", dict(x=(3, 4)),
     "graph.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : $x",
     lambda x: x.mean(0, keepdim=True)),
    ("reduce_mean_02", dict(x=(2, 3, 4)),
     "graph.reduce_mean %x {axes = array<i64: 0, 2>} : $x", lambda x: x.mean((0, 2))),
    ("reduce_mean_all", dict(x=(3, 4)), "graph.reduce_mean %x : $x", torch.mean),
    # cross_entropy: class weights, ignore_index, each reduction.
    ("ce", dict(x=(5, 4), t=T(1, 0, 3, 2, 1)), "graph.cross_entropy %x, %t : $x, $t", ce()),
    ("ce_w", dict(x=(5, 4), t=T(1, 0, 3, 2, 1), w=W(4)),
     "graph.cross_entropy %x, %t weight %w : $x, $t, $w", ce()),
    ("ce_w_sum", dict(x=(5, 4), t=T(3, 0, 3, 2, 1), w=W(4)),
     "graph.cross_entropy %x, %t weight %w reduction sum : $x, $t, $w", ce(reduction="sum")),
    ("ce_w_none", dict(x=(5, 4), t=T(2, 0, 1, 2, 3), w=W(4)),
     "graph.cross_entropy %x, %t weight %w reduction none : $x, $t, $w",
     ce(reduction="none")),
    ("ce_ignore", dict(x=(5, 4), t=T(1, -100, 3, -100, 0)),
     "graph.cross_entropy %x, %t : $x, $t", ce()),
    ("ce_ignore_w", dict(x=(5, 4), t=T(-100, 2, 3, 0, -100), w=W(4)),
     "graph.cross_entropy %x, %t weight %w : $x, $t, $w", ce()),
    ("ce_ignore2_sum", dict(x=(5, 4), t=T(2, 0, 2, 3, 1)),
     "graph.cross_entropy %x, %t reduction sum {ignore_index = 2} : $x, $t",
     ce(reduction="sum", ignore_index=2)),
    ("ce_ignore_w_none", dict(x=(5, 4), t=T(1, -100, 3, 2, 0), w=W(4)),
     "graph.cross_entropy %x, %t weight %w reduction none : $x, $t, $w",
     ce(reduction="none")),
    # Piecewise-linear ops (no ties, nothing at 0).
    ("abs", dict(x=A(3, 4)), "graph.abs %x : $x", torch.abs),
    ("max_row", dict(a=(3, 4), b=(4,)), "graph.max %a, %b : $a, $b", torch.maximum),
    ("min_col", dict(a=(3, 1), b=(3, 4)), "graph.min %a, %b : $a, $b", torch.minimum),
    # Convolutions: padding, groups, depthwise, stride, dilation, bias.
    ("conv2d", dict(x=(2, 3, 6, 6), w=(4, 3, 3, 3), b=(4,)),
     "graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : $x, $w, $b",
     lambda x, w, b: F.conv2d(x, w, b, padding=1)),
    ("conv2d_grouped", dict(x=(2, 4, 7, 7), w=(6, 2, 3, 3)),
     "graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>,"
     " dilations = array<i64: 1, 2>, groups = 2} : $x, $w",
     lambda x, w: F.conv2d(x, w, stride=2, padding=(1, 0), dilation=(1, 2), groups=2)),
    ("conv2d_depthwise", dict(x=(2, 4, 6, 6), w=(4, 1, 3, 3), b=(4,)),
     "graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>,"
     " groups = 4} : $x, $w, $b",
     lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=4)),
    ("conv2d_asym", dict(x=(1, 2, 5, 6), w=(3, 2, 2, 3)),
     "graph.conv2d %x, %w {padding = array<i64: 0, 1, 2, 1>} : $x, $w",
     lambda x, w: F.conv2d(F.pad(x, (1, 1, 0, 2)), w)),
    ("conv_transpose2d", dict(x=(2, 4, 5, 5), w=(4, 3, 3, 3), b=(3,)),
     "graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>,"
     " output_padding = array<i64: 1, 1>} : $x, $w, $b",
     lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)),
    ("conv_transpose2d_grouped", dict(x=(2, 4, 4, 4), w=(4, 2, 3, 3)),
     "graph.conv_transpose2d %x, %w {dilations = array<i64: 2, 2>, groups = 2} : $x, $w",
     lambda x, w: F.conv_transpose2d(x, w, dilation=2, groups=2)),
    # 16 or more channels on the CPU and sim devices: oneDNN's primitives
    # (modelc-select-conv-algorithms' sched.dnnl_conv), Winograd for the
    # first (3x3, stride 1, an output of 14x14), direct for the others: a
    # strided one whose last row is in no window, a grouped dilated one, a
    # transposed one with output padding (its backward-data primitive).
    ("conv2d_onednn_winograd", dict(x=(2, 16, 14, 14), w=(16, 16, 3, 3), b=(16,)),
     "graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : $x, $w, $b",
     lambda x, w, b: F.conv2d(x, w, b, padding=1)),
    ("conv2d_onednn_strided", dict(x=(2, 16, 9, 9), w=(32, 16, 3, 3)),
     "graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : $x, $w",
     lambda x, w: F.conv2d(F.pad(x, (1, 0, 1, 0)), w, stride=2)),
    ("conv2d_onednn_grouped", dict(x=(1, 32, 8, 8), w=(32, 16, 3, 3)),
     "graph.conv2d %x, %w {padding = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>,"
     " groups = 2} : $x, $w",
     lambda x, w: F.conv2d(x, w, padding=2, dilation=2, groups=2)),
    ("conv_transpose2d_onednn", dict(x=(2, 32, 5, 5), w=(32, 16, 3, 3)),
     "graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>,"
     " output_padding = array<i64: 1, 1>} : $x, $w",
     lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)),
    # Pooling.
    ("max_pool2d", dict(x=(2, 3, 7, 7)),
     "graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,"
     " padding = array<i64: 1, 1, 1, 1>} : $x",
     lambda x: F.max_pool2d(x, 3, 2, 1)),
    ("max_pool2d_ceil", dict(x=(1, 2, 5, 5)),
     "graph.max_pool2d %x {kernel = array<i64: 2, 2>, ceil_mode = true} : $x",
     lambda x: F.max_pool2d(x, 2, ceil_mode=True)),
    ("avg_pool2d", dict(x=(2, 3, 7, 7)),
     "graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,"
     " padding = array<i64: 1, 1, 1, 1>} : $x",
     lambda x: F.avg_pool2d(x, 3, 2, 1)),
    ("avg_pool2d_nopad", dict(x=(2, 3, 7, 7)),
     "graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,"
     " padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : $x",
     lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
    ("avg_pool2d_ceil", dict(x=(1, 2, 5, 5)),
     "graph.avg_pool2d %x {kernel = array<i64: 2, 2>, ceil_mode = true} : $x",
     lambda x: F.avg_pool2d(x, 2, ceil_mode=True)),
    ("global_avg_pool", dict(x=(2, 3, 4, 5)), "graph.global_avg_pool %x : $x",
     lambda x: x.mean((2, 3), keepdim=True)),
    # Normalisation: layer_norm over the last axis and from axis 1;
    # batch_norm's inference form and (momentum set) its training form.
    ("layer_norm", dict(x=(2, 3, 4), g=(4,), b=(4,)),
     "graph.layer_norm %x scale %g bias %b : $x, $g, $b",
     lambda x, g, b: F.layer_norm(x, (4,), g, b)),
    ("layer_norm_1", dict(x=(2, 3, 4), g=(3, 4)),
     "graph.layer_norm %x scale %g {axis = 1} : $x, $g",
     lambda x, g: F.layer_norm(x, (3, 4), g)),
    ("batch_norm", dict(x=(2, 3, 4, 4), g=(3,), b=(3,), m=W(3), v=W(3)),
     "graph.batch_norm %x, %g, %b, %m, %v : $x, $g, $b, $m, $v",
     lambda x, g, b, m, v: F.batch_norm(x, m, v, g, b, training=False)),
    ("batch_norm_train", dict(x=(2, 3, 4, 4), g=(3,), b=(3,), m=W(3), v=W(3)),
     "graph.batch_norm %x, %g, %b, %m, %v {momentum = 0.1 : f32} : $x, $g, $b, $m, $v",
     lambda x, g, b, m, v: F.batch_norm(x, m.clone(), v.clone(), g, b, training=True)),
    # Data movement.
    ("concat", dict(a=(2, 3), b=(2, 2)), "graph.concat %a, %b {axis = 1} : $a, $b",
     lambda a, b: torch.cat([a, b], 1)),
    # Gather (an embedding lookup): repeated and negative indices add up.
    ("gather", dict(w=(6, 4), t=T(1, 3, 1, -1, 0)), "graph.gather %w, %t : $w, $t",
     lambda w, t: w[t]),
    ("gather_1", dict(w=(3, 5), t=T(4, 0, 4)), "graph.gather %w, %t {axis = 1} : $w, $t",
     lambda w, t: w[:, t]),
    ("slice", dict(x=(4, 6)),
     "graph.slice %x {axes = array<i64: 0, 1>, starts = array<i64: 1, 2>,"
     " ends = array<i64: 3, 5>} : $x",
     lambda x: x[1:3, 2:5]),
    # Steps: every other row from 1, every third column (the last step's
    # gaps run past the end).
    ("slice_steps", dict(x=(5, 7)),
     "graph.slice %x {axes = array<i64: 0, 1>, starts = array<i64: 1, 0>,"
     " ends = array<i64: 5, 7>, steps = array<i64: 2, 3>} : $x",
     lambda x: x[1:5:2, 0:7:3]),
]


def ir_type(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def build(cases):
    """Returns (model.ir text, weights, inputs, [(name, torch parameter)], torch loss)."""
    decls, args, body, terms = [], [], [], []
    weights, inputs, params, loss = {}, {}, [], 0
    for name, operands, op, fn in cases:
        ssa, types, tensors = {}, {}, []
        for k, spec in operands.items():
            kind, value = spec if isinstance(spec[0], str) else ("param", rng.standard_normal(spec))
            if kind == "input":
                ssa[k], types[k] = f"%{name}_{k}", ir_type(value.shape, "i64")
                args.append(f"{ssa[k]}: {types[k]}")
                inputs[f"{name}_{k}"] = value
                tensors.append(torch.from_numpy(value))
                continue
            value = value.astype(np.float32)
            wname, ssa[k], types[k] = f"{name}.{k}", f"%{name}_{k}", ir_type(value.shape)
            decls.append(f'graph.weight @"{wname}"{" {frozen}" if kind == "frozen" else ""}'
                         f" : {types[k]}")
            body.append(f'{ssa[k]} = graph.weight_ref @"{wname}" : {types[k]}')
            weights[wname] = value
            t = torch.tensor(value, requires_grad=kind == "param")
            if kind == "param":
                params.append((wname, t))
            tensors.append(t)
        y = fn(*tensors)
        r = rng.standard_normal(tuple(y.shape)).astype(np.float32)
        weights[f"{name}.r"] = r
        ty = ir_type(r.shape)
        decls.append(f'graph.weight @"{name}.r" {{frozen}} : {ty}')
        text = re.sub(r"%(\w+)", lambda m: ssa[m.group(1)], op)
        text = re.sub(r"\$(\w+)", lambda m: types[m.group(1)], text)
        body += [f"%{name} = {text}",
                 f'%{name}_r = graph.weight_ref @"{name}.r" : {ty}',
                 f"%{name}_p = graph.mul %{name}, %{name}_r : {ty}, {ty}"]
        term = y * torch.from_numpy(r)
        if r.ndim:
            body.append(f"%{name}_s = graph.reduce_sum %{name}_p : {ty}")
            terms.append(f"%{name}_s")
            term = term.sum()
        else:
            terms.append(f"%{name}_p")
        loss = loss + term
    total = terms[0]
    for i, term in enumerate(terms[1:]):
        body.append(f"%sum{i} = graph.add {total}, {term} : tensor<f32>, tensor<f32>")
        total = f"%sum{i}"
    ir = "\n".join(
        ["// Made by tests/training/Inputs/op_gradients.py: one term per op's case."] + decls
        + [f"func.func @loss({', '.join(args)}) -> tensor<f32> {{"]
        + ["  " + line for line in body]
        + [f"  return {total} : tensor<f32>", "}", ""])
    return ir, weights, inputs, params, loss


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.exit(f"op_gradients.py: failed (exit status {p.returncode}):\n{p.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--place-all")
    ap.add_argument("--cuda-emulation", action="store_true",
                    help="GPU kernels as host code (run under the stand-in driver)")
    ap.add_argument("--modelc", default="modelc")
    ap.add_argument("--modelc-run", default="modelc-run")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    path = lambda f: os.path.join(a.out, f)  # noqa: E731
    torch.set_num_threads(1)

    ir, weights, inputs, params, loss = build(CASES)
    loss.backward()
    with open(path("model.ir"), "w") as f:
        f.write(ir)
    save_safetensors(path("w.safetensors"), weights)
    feeds = []
    for k, v in inputs.items():
        np.save(path(k + ".npy"), v)
        feeds += ["--input", f"{k}={path(k + '.npy')}"]

    run([a.modelc, path("model.ir"), "--train", "--weights", path("w.safetensors"),
         "-o", path("t.so"), f"--target={a.target}"]
        + ([f"--place-all={a.place_all}"] if a.place_all else [])
        + (["--cuda-emulation"] if a.cuda_emulation else []))
    run([a.modelc_run, path("t.so"), "--entry", "gradients", "--output-dir", path("grads")]
        + feeds)

    expected = [("loss", loss.detach().numpy())]
    expected += [(n, t.grad.numpy()) for n, t in params]
    passed = failed = 0
    for n, e in expected:
        f = path(f"grads/{n}.npy")
        if not os.path.exists(f):
            print(f"FAIL {n}: no output {n}.npy")
            failed += 1
            continue
        g = np.load(f)
        if g.shape != e.shape:
            print(f"FAIL {n}: shape {list(g.shape)}, torch {list(e.shape)}")
            failed += 1
            continue
        err = np.abs(g.astype(np.float64) - e)
        atol = ATOL
        if "winograd" in n:
            # Winograd's transforms round differently from a direct sum:
            # bounded relative to the gradient's scale, not each element.
            atol = max(ATOL, WINOGRAD_SCALE_TOL * float(np.abs(e).max()))
        bad = ~(err <= atol + RTOL * np.abs(e))  # NaN is bad too
        if bad.any():
            i = np.unravel_index(np.argmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -1)),
                                 e.shape)
            print(f"FAIL {n}: {bad.sum()} of {e.size} differ; at {list(i)} modelc "
                  f"{g[i]!r}, torch {e[i]!r}\n  modelc {g.ravel().tolist()}\n"
                  f"  torch  {e.ravel().tolist()}")
            failed += 1
        else:
            print(f"PASS {n}: max |a-e| {err.max():.3g} (max |e| {np.abs(e).max():.3g})")
            passed += 1
    extra = sorted(set(f[:-4] for f in os.listdir(path("grads"))) - {n for n, _ in expected})
    for n in extra:  # frozen weights and targets get no gradient
        print(f"FAIL {n}: an output that is not a parameter")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
