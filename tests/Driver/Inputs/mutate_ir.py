#!/usr/bin/python3
"""Writes mutated model.ir files for modelc-ir-fuzz's regression mode.

    mutate_ir.py OUTDIR COUNT SEED FILE...

Each mutant is one of the FILEs changed by a fixed-seed random edit:
truncated, bytes flipped, a line dropped or repeated, a number replaced by a
hostile one (0, -1, huge, beyond int64), an attribute renamed, or a type's
element type swapped. Besides those, the deep-nesting cases that overflowed
MLIR's parser (issue 15 item 4) are written as deep_*.ir.
"""
import os
import random
import re
import sys

out, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sources = [open(f, "rb").read() for f in sys.argv[4:]]
os.makedirs(out, exist_ok=True)
rng = random.Random(seed)

HOSTILE = [b"0", b"-1", b"1", b"4294967296", b"9223372036854775807",
           b"99999999999999999999999", b"-9223372036854775808", b"1e39"]
TYPES = [b"f32", b"f16", b"bf16", b"i32", b"i64", b"i1", b"f64", b"i8"]


def mutate(text):
    kind = rng.randrange(7)
    if kind == 0:
        return text[:rng.randrange(len(text))]
    if kind == 1:
        data = bytearray(text)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            data[i] = rng.randrange(256)
        return bytes(data)
    lines = text.split(b"\n")
    if kind == 2:
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)
    if kind == 3:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return b"\n".join(lines)
    if kind == 4:
        numbers = list(re.finditer(rb"\b\d+\b", text))
        if numbers:
            m = rng.choice(numbers)
            return text[:m.start()] + rng.choice(HOSTILE) + text[m.end():]
    if kind == 5:
        names = list(re.finditer(rb"\b([a-z_]+) = ", text))
        if names:
            m = rng.choice(names)
            name = bytearray(m.group(1))
            name[rng.randrange(len(name))] = rng.randrange(97, 123)
            return text[:m.start(1)] + bytes(name) + text[m.end(1):]
    types = list(re.finditer(rb"x(f32|f16|bf16|i32|i64|i1)>", text))
    if types:
        m = rng.choice(types)
        return text[:m.start(1)] + rng.choice(TYPES) + text[m.end(1):]
    return text


for n in range(count):
    with open(os.path.join(out, f"mutant{n:04d}.ir"), "wb") as f:
        f.write(mutate(rng.choice(sources)))

deep = {
    "modules": b"module {\n" * 4000 + b"}\n" * 4000,
    "array_attribute": b"func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> "
                       b"attributes {a = " + b"[" * 7000 + b"]" * 7000 +
                       b"} {\n  return %x : tensor<4xf32>\n}\n",
    "dense": b"func.func @f() -> tensor<1xf32> {\n  %c = graph.constant "
             b"dense<" + b"[" * 13000 + b"1.0" + b"]" * 13000 +
             b"> : tensor<1xf32>\n  return %c : tensor<1xf32>\n}\n",
    "types": b"func.func @f(%x: " + b"tensor<" * 14000 + b"f32" +
             b">" * 14000 + b") {\n  return\n}\n",
    "regions": b"func.func @f() {\n" + b"\"test.op\"() ({\n" * 5000 +
               b"}) : () -> ()\n" * 5000 + b"  return\n}\n",
    # Unary minus signs nest without brackets in affine expressions.
    "minus": b"func.func @f() attributes {t = affine_map<(d0) -> (" +
             b"- " * 20000 + b"d0)>} {\n  return\n}\n",
    # `>=` closes nothing: counted as a bracket, it would let `[` nest
    # without limit.
    "affine_sets": b"func.func @f() attributes {t = " +
                   b"[affine_set<(d0) : (d0 >= 0)>, " * 10000 + b"0" +
                   b"]" * 10000 + b"} {\n  return\n}\n",
}
for name, text in deep.items():
    with open(os.path.join(out, f"deep_{name}.ir"), "wb") as f:
        f.write(text)
