#!/usr/bin/python3
"""Writes mutated copies of ONNX files: the fuzz target's regression corpus.

    mutate.py OUT_DIR COUNT SEED FILE...

Each mutation of a file is one of: a truncation, flipped bytes, a byte run
overwritten with 0xff or 0x00, a duplicated span, or (parsing the model
with python3-onnx) a model whose dims, attribute integers or input lists
were changed to hostile values. Fixed seed: the same corpus every run.
"""
import os
import random
import sys

sys.dont_write_bytecode = True

import onnx


def byte_mutation(data, rng):
    data = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(data[:rng.randrange(1, len(data))])
    if kind == 1:
        for _ in range(rng.randrange(1, 16)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        return bytes(data)
    if kind == 2:
        i = rng.randrange(len(data))
        data[i:i + rng.randrange(1, 9)] = bytes([rng.choice([0, 0xff])]) * 8
        return bytes(data)
    i = rng.randrange(len(data))
    j = min(len(data), i + rng.randrange(1, 64))
    return bytes(data[:j] + data[i:j] + data[j:])


HOSTILE = [0, -1, -7, 1 << 31, (1 << 62) + 3, -(1 << 62), 3]


def model_mutation(data, rng):
    model = onnx.ModelProto()
    model.ParseFromString(data)
    graph = model.graph
    kind = rng.randrange(4)
    if kind == 0 and graph.initializer:
        tensor = rng.choice(graph.initializer)
        if tensor.dims:
            tensor.dims[rng.randrange(len(tensor.dims))] = rng.choice(HOSTILE)
    elif kind == 1 and graph.node:
        node = rng.choice(graph.node)
        for attribute in node.attribute:
            if attribute.ints:
                attribute.ints[rng.randrange(len(attribute.ints))] = \
                    rng.choice(HOSTILE)
            elif attribute.type == onnx.AttributeProto.INT:
                attribute.i = rng.choice(HOSTILE)
    elif kind == 2 and graph.node:
        node = rng.choice(graph.node)
        if node.input and rng.random() < 0.5:
            del node.input[rng.randrange(len(node.input))]
        else:
            node.input.append(rng.choice(["", "nowhere", node.output[0]]))
    elif graph.input:
        dims = graph.input[0].type.tensor_type.shape.dim
        if dims:
            dims[rng.randrange(len(dims))].dim_value = rng.choice(HOSTILE[1:])
    return model.SerializeToString()


def main():
    out, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    sources = []
    for path in sys.argv[4:]:
        with open(path, "rb") as f:
            sources.append(f.read())
    for i in range(count):
        data = rng.choice(sources)
        try:
            mutated = (model_mutation(data, rng) if rng.random() < 0.5
                       else byte_mutation(data, rng))
        except Exception:  # a source python3-onnx cannot parse: bytes only
            mutated = byte_mutation(data, rng)
        with open(os.path.join(out, "mutant-%04d.onnx" % i), "wb") as f:
            f.write(mutated)


if __name__ == "__main__":
    main()
