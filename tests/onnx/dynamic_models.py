#!/usr/bin/python3
"""Writes the PyTorch exports tests/onnx/dynamic.test compiles with a dynamic
batch (docs/dynamic.md), into the folder given, each with `dynamic_axes`
naming dimension 0 'batch' and PyTorch's outputs at several batch sizes
(NAME.x<N>.npy, NAME.y<N>.npy):
  mlp.onnx       Linear, ReLU, Linear, LayerNorm, GELU, Linear, Softmax
                 (opset 17); batches 1, 3, 16
  resnet18.onnx  torchvision ResNet-18 (random weights, eval), 3x64x64
                 images, at torch.onnx.export's default opset; batches 1,
                 7, 32
  flatview.onnx  a CNN flattening with x.view(x.size(0), -1): the exporter
                 reads the batch with Shape and Gather; batches 1, 2, 5
  batcharith.onnx  x.view(x.size(0) * 2, -1): arithmetic on the batch's
                 size, an output of 2*batch rows (not supported yet)
  encoder.onnx   nn.TransformerEncoderLayer(64, 4, 128, batch_first=True),
                 dynamic batch and sequence (the attention's shapes
                 computed from both); (batch, seq) 1x1, 3x17, 4x32
  positions.onnx  token embeddings plus embeddings of torch.arange(seq)
                 plus a positional table cut to seq (table[:, :seq]), a
                 dynamic batch and sequence; (batch, seq) 1x1, 3x17, 4x32
  stepped.onnx, offset.onnx  torch.arange(0, seq, 2) and table[:, 1:seq]
                 (not supported yet)
  fixedreshape.onnx  (onnx.helper) a Reshape of a dynamic batch to the
                 constant shape [4, -1]
  halfbatch.onnx, othervalue.onnx  (onnx.helper) the batch's size halved,
                 and given to the Reshape of an input without it
  contracted.onnx  (onnx.helper) Shape of a product over a dynamic sequence
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np
import torch
import torch.nn as nn


def export(out, name, module, example, sizes, opset=None, shape=()):
    module.eval()
    kwargs = {} if opset is None else {"opset_version": opset}
    torch.onnx.export(module, (example,), os.path.join(out, name + ".onnx"),
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                      **kwargs)
    for n in sizes:
        x = torch.randn(n, *shape)
        np.save(os.path.join(out, "%s.x%d.npy" % (name, n)), x.numpy())
        with torch.no_grad():
            np.save(os.path.join(out, "%s.y%d.npy" % (name, n)),
                    module(x).numpy())


class FlatView(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        return self.fc(h.view(h.size(0), -1))


class BatchArith(nn.Module):
    def forward(self, x):
        return x.view(x.size(0) * 2, -1) + 1


def export_encoder(out):
    """nn.TransformerEncoderLayer(64, 4, 128, batch_first=True) in eval
    mode, exported with a dynamic batch and sequence: the attention's
    shapes are computed from both with Shape, Gather, Mul and Div."""
    torch.manual_seed(3)
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0,
                                       batch_first=True).eval()
    torch.onnx.export(layer, (torch.randn(2, 16, 64),),
                      os.path.join(out, "encoder.onnx"),
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"},
                                    "y": {0: "batch", 1: "seq"}})
    for n, s in ((1, 1), (3, 17), (4, 32)):
        x = torch.randn(n, s, 64)
        np.save(os.path.join(out, "encoder.x%d_%d.npy" % (n, s)), x.numpy())
        with torch.no_grad():
            np.save(os.path.join(out, "encoder.y%d_%d.npy" % (n, s)),
                    layer(x).numpy())


class Positions(nn.Module):
    """A GPT-2-style input: token embeddings, embeddings of the positions
    torch.arange(seq), and a learned table cut to the sequence."""
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(100, 16)
        self.pos = nn.Embedding(32, 16)
        self.table = nn.Parameter(torch.randn(1, 32, 16))

    def forward(self, ids):
        pos = torch.arange(ids.size(1))
        return self.tok(ids) + self.pos(pos) + self.table[:, :ids.size(1)]


class Stepped(Positions):
    def forward(self, ids):
        return self.pos(torch.arange(0, ids.size(1), 2))


class Offset(Positions):
    def forward(self, ids):
        return self.table[:, 1:ids.size(1)] * ids.size(0)


def export_positions(out):
    """Positions, Stepped and Offset with a dynamic batch and sequence;
    Positions' outputs at three sizes."""
    torch.manual_seed(4)
    ids = torch.randint(0, 100, (2, 5))
    for name, cls in (("positions", Positions), ("stepped", Stepped),
                      ("offset", Offset)):
        module = cls().eval()
        axes = {"ids": {0: "batch", 1: "seq"}}
        if name == "positions":
            axes["y"] = {0: "batch", 1: "seq"}
        torch.onnx.export(module, (ids,), os.path.join(out, name + ".onnx"),
                          input_names=["ids"], output_names=["y"],
                          dynamic_axes=axes)
        if name != "positions":
            continue
        for n, s in ((1, 1), (3, 17), (4, 32)):
            x = torch.randint(0, 100, (n, s))
            np.save(os.path.join(out, "positions.ids%d_%d.npy" % (n, s)),
                    x.numpy())
            with torch.no_grad():
                np.save(os.path.join(out, "positions.y%d_%d.npy" % (n, s)),
                        module(x).numpy())


def main():
    import torchvision
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64),
                        nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 10),
                        nn.Softmax(dim=1))
    export(out, "mlp", mlp, torch.randn(4, 32), (1, 3, 16), opset=17,
           shape=(32,))
    torch.manual_seed(1)
    resnet = torchvision.models.resnet18(num_classes=100)
    export(out, "resnet18", resnet, torch.randn(2, 3, 64, 64), (1, 7, 32),
           shape=(3, 64, 64))
    torch.manual_seed(2)
    export(out, "flatview", FlatView(), torch.randn(2, 3, 8, 8), (1, 2, 5),
           shape=(3, 8, 8))
    export(out, "batcharith", BatchArith(), torch.randn(2, 4), (2,),
           shape=(4,))
    export_encoder(out)
    export_positions(out)
    from onnx import TensorProto, helper, save
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "fixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, None])],
        [helper.make_tensor("shape", TensorProto.INT64, [2], [4, -1])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "fixedreshape.onnx"))
    # Sizes used wrongly: batch / 2 (not exact at every size), and the
    # batch's size in the shape of a value without it.
    def size_of_batch():
        return [helper.make_node("Shape", ["x"], ["s"]),
                helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
                helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"])]
    consts = [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
              helper.make_tensor("zero1", TensorProto.INT64, [1], [0]),
              helper.make_tensor("two", TensorProto.INT64, [1], [2]),
              helper.make_tensor("rest", TensorProto.INT64, [1], [-1])]
    x6 = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])
    graph = helper.make_graph(
        size_of_batch() + [
            helper.make_node("Div", ["n1", "two"], ["h"]),
            helper.make_node("Concat", ["h", "rest"], ["shape"], axis=0),
            helper.make_node("Reshape", ["x", "shape"], ["y"])], "halfbatch",
        [x6], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                             [None, None])], consts)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "halfbatch.onnx"))
    graph = helper.make_graph(
        size_of_batch() + [
            helper.make_node("Concat", ["n1", "rest"], ["shape"], axis=0),
            helper.make_node("Reshape", ["z", "shape"], ["y"]),
            helper.make_node("Relu", ["x"], ["r"])], "othervalue",
        [x6, helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, ["batch", 6])],
        consts)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "othervalue.onnx"))
    # The shape of a value whose sizes do not follow (a product over the
    # dynamic sequence against a weight of 16 rows).
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]),
         helper.make_node("Shape", ["m"], ["s"])], "contracted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "seq"])],
        [helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor("w", TensorProto.FLOAT, [16, 4], [0.0] * 64)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "contracted.onnx"))
    # The shape itself as an output, read from axis -2 (that is, 0).
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"], start=-2),
         helper.make_node("Relu", ["x"], ["y"])], "shapeout",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 6]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "shapeout.onnx"))


if __name__ == "__main__":
    main()
