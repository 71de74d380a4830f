#!/usr/bin/python3
"""Writes the ONNX models tests/onnx/*.test import, into the folder given.

PyTorch exports (random weights from fixed seeds, no downloads), each with
its input and PyTorch's output as NAME.x.npy / NAME.y.npy:
  mlp.onnx   Linear, LayerNorm, exact GELU, Linear; dynamic batch (opset 17)
  cnn.onnx   Conv, BatchNorm (folded by the exporter), ReLU, MaxPool, strided
             Conv, ConvTranspose, adaptive average pool, flatten, Linear,
             Softmax (opset 13)
  tel.onnx   nn.TransformerEncoderLayer(64, 4, 128, batch_first, norm_first),
             with the exporter's shape computations (opset 17)
Models built with onnx.helper for the errors:
  unsupported.onnx  op types modelc does not support, one of them twice
  autopad.onnx      a ConvTranspose with auto_pad SAME_UPPER, a Relu reading it, and
                    an independent cubic Resize
  dynamic.onnx      two inputs with dynamic dimensions
  tied.onnx         two inputs whose first dimension is 'batch' in both
  shapes.onnx       a MatMul whose shapes do not agree
  floatmod.onnx     a Mod of floats without fmod=1
  conv_rank.onnx    a Conv on rank-2 tensors
  undefined.onnx    a node reading a tensor nothing defines
  truncated.onnx    the first half of cnn.onnx
External data (initializers in a file beside the model):
  external/mlp.onnx + mlp.data       the MLP, every initializer outside
  external/escape.onnx               a location outside the model's folder
  external/missing.onnx              a data file that does not exist
  external/short.onnx + short.data   a data file shorter than its offsets
  external/link.onnx + link.data     a link to a data file outside the folder
  garbage.onnx      text, not a protobuf
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np
import onnx
from onnx import TensorProto, helper
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(16, 32)
        self.ln = nn.LayerNorm(32)
        self.l2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.l2(F.gelu(self.ln(self.l1(x))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1,
                                     output_padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = F.max_pool2d(torch.relu(self.bn(self.c1(x))), 2)
        y = self.up(torch.relu(self.c2(y)))
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.fc(y), -1)


def export(out, name, module, x, opset, dynamic=None):
    module.eval()
    torch.onnx.export(module, (x,), os.path.join(out, name + ".onnx"),
                      input_names=["x"], output_names=["y"],
                      opset_version=opset, dynamic_axes=dynamic)
    np.save(os.path.join(out, name + ".x.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, name + ".y.npy"), module(x).numpy())


def save(out, name, graph, opset=17):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


def error_models(out):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    save(out, "unsupported", helper.make_graph([
        helper.make_node("Det", ["x"], ["a"], name="det1"),
        helper.make_node("Unique", ["a"], ["b"], name="unique"),
        helper.make_node("Det", ["b"], ["y"], name="det2"),
    ], "g", [x], [y]))

    img = helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 2, 5, 5])
    res = helper.make_tensor_value_info("res", TensorProto.FLOAT, [1, 3, 5, 5])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 3, 3, 3],
                           np.ones(54, np.float32).tolist())
    big = helper.make_tensor_value_info("big", TensorProto.FLOAT,
                                        [1, 2, 10, 10])
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4],
                                [1, 1, 2, 2])
    save(out, "autopad", helper.make_graph([
        helper.make_node("ConvTranspose", ["img", "w"], ["conv"],
                         name="convt_same", auto_pad="SAME_UPPER"),
        helper.make_node("Relu", ["conv"], ["res"], name="after_conv"),
        helper.make_node("Resize", ["img", "", "scales"], ["big"],
                         name="resize_crop",
                         coordinate_transformation_mode="tf_crop_and_resize")],
        "g", [img], [res, big], [w, scales]))

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 8])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [None, "T", 8])
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N", "T", 8])
    save(out, "dynamic", helper.make_graph([
        helper.make_node("Add", ["a", "b"], ["s"], name="add")],
        "g", [a, b], [s]))

    u = helper.make_tensor_value_info("u", TensorProto.FLOAT, ["batch", 8])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, ["batch", 8])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, ["batch", 8])
    save(out, "tied", helper.make_graph([
        helper.make_node("Add", ["u", "v"], ["w"], name="add")],
        "g", [u, v], [w]))

    p = helper.make_tensor_value_info("p", TensorProto.FLOAT, [2, 3])
    q = helper.make_tensor_value_info("q", TensorProto.FLOAT, [4, 5])
    r = helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 5])
    save(out, "shapes", helper.make_graph([
        helper.make_node("MatMul", ["p", "q"], ["r"], name="mm")],
        "g", [p, q], [r]))

    # ONNX requires fmod=1 for floats; the default 0 is an error.
    save(out, "floatmod", helper.make_graph([
        helper.make_node("Mod", ["p", "p"], ["m"], name="mod")],
        "g", [p], [helper.make_tensor_value_info("m", TensorProto.FLOAT,
                                                 [2, 3])]))

    flat = helper.make_tensor("flat", TensorProto.FLOAT, [3, 4],
                              np.ones(12, np.float32).tolist())
    save(out, "conv_rank", helper.make_graph([
        helper.make_node("Conv", ["x", "flat"], ["y"], name="conv_flat")],
        "g", [x], [y], [flat]))

    save(out, "undefined", helper.make_graph([
        helper.make_node("Relu", ["nowhere"], ["y"], name="relu")],
        "g", [x], [y]))

    with open(os.path.join(out, "cnn.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[:len(data) // 2])
    with open(os.path.join(out, "garbage.onnx"), "w") as f:
        f.write("this is not an ONNX model\n")


def external_models(out):
    folder = os.path.join(out, "external")
    os.makedirs(folder, exist_ok=True)
    model = onnx.load(os.path.join(out, "mlp.onnx"))
    onnx.save_model(model, os.path.join(folder, "mlp.onnx"),
                    save_as_external_data=True, all_tensors_to_one_file=True,
                    location="mlp.data", size_threshold=0)

    def with_location(name, location, data=None):
        m = onnx.load(os.path.join(folder, "mlp.onnx"),
                      load_external_data=False)
        for t in m.graph.initializer:
            for entry in t.external_data:
                if entry.key == "location":
                    entry.value = location
        onnx.save(m, os.path.join(folder, name + ".onnx"))
        if data is not None:
            with open(os.path.join(folder, location), "wb") as f:
                f.write(data)

    with open(os.path.join(folder, "mlp.data"), "rb") as f:
        data = f.read()
    with_location("escape", "../mlp.data")
    with_location("missing", "nowhere.data")
    with_location("short", "short.data", data[:len(data) // 2])
    # A link in the folder to a file outside it.
    outside = os.path.join(out, "outside.data")
    with open(outside, "wb") as f:
        f.write(data)
    link = os.path.join(folder, "link.data")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(outside, link)
    with_location("link", "link.data")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    export(out, "mlp", Mlp(), torch.randn(5, 16), 17, {"x": {0: "batch"}})
    cnn = Cnn()
    with torch.no_grad():  # statistics that are not the identity
        cnn.bn.running_mean.uniform_(-0.5, 0.5)
        cnn.bn.running_var.uniform_(0.5, 1.5)
    export(out, "cnn", cnn, torch.randn(2, 3, 16, 16), 13)
    tel = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0,
                                     batch_first=True, norm_first=True)
    export(out, "tel", tel, torch.randn(2, 8, 64), 17)
    error_models(out)
    external_models(out)


if __name__ == "__main__":
    main()
