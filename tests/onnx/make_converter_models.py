#!/usr/bin/python3
"""Writes ONNX models for converters the backend node tests do not reach
(their cases use types modelc does not take, such as double), with inputs
and numpy's expected outputs as NAME.<input>.npy / NAME.y.npy:
  int_matmul.onnx   MatMul of i32 (broadcast batch) whose products overflow
  int_gemm.onnx     Gemm of i64, transA, alpha 3, beta -2, a row C
  cumsum.onnx       CumSum of f32 along a constant axis, exclusive, reverse
  int_cumsum.onnx   CumSum of i64 along a negative constant axis
  reduce_prod.onnx  ReduceProd of i32 (overflowing), axes [1], keepdims 0
  cumsum_axis.onnx  CumSum whose axis is a graph input (not supported)
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {np.dtype(np.float32): TensorProto.FLOAT,
         np.dtype(np.float16): TensorProto.FLOAT16,
         np.dtype(np.int32): TensorProto.INT32,
         np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.uint8): TensorProto.UINT8,
         np.dtype(np.int8): TensorProto.INT8,
         np.dtype(np.bool_): TensorProto.BOOL}


def save(out, name, node, inputs, y, initializers=(), opset=17):
    """A one-node model reading `inputs` (name -> array), writing y."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(k, TYPES[v.dtype], v.shape)
         for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", TYPES[y.dtype], y.shape)],
        list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    for k, v in inputs.items():
        np.save(os.path.join(out, "%s.%s.npy" % (name, k)), v)
    np.save(os.path.join(out, name + ".y.npy"), y)


def wrapping(values, dtype):
    """Python integers modulo the width of dtype, as dtype."""
    bits = np.iinfo(dtype).bits
    wrapped = [(int(v) + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)
               for v in np.asarray(values, dtype=object).ravel()]
    return np.array(wrapped, dtype=dtype).reshape(np.shape(values))


def cumsum(x, axis, exclusive=False, reverse=False):
    x = np.asarray(x, dtype=object)
    if reverse:
        x = np.flip(x, axis)
    y = np.cumsum(x, axis)
    if exclusive:
        y = y - x
    return np.flip(y, axis) if reverse else y


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    big32 = lambda shape: rng.integers(-2 ** 30, 2 ** 30, shape).astype(
        np.int32)
    big64 = lambda shape: rng.integers(-2 ** 62, 2 ** 62, shape).astype(
        np.int64)

    a, b = big32((2, 1, 3, 4)), big32((3, 4, 5))
    exact = np.matmul(a.astype(object), b.astype(object))
    save(out, "int_matmul", helper.make_node("MatMul", ["a", "b"], ["y"]),
         {"a": a, "b": b}, wrapping(exact, np.int32))

    a, b, c = big64((4, 3)), big64((4, 5)), big64((5,))
    exact = 3 * np.matmul(a.T.astype(object), b.astype(object)) - 2 * c.astype(
        object)
    save(out, "int_gemm",
         helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, alpha=3.0,
                          beta=-2.0),
         {"a": a, "b": b, "c": c}, wrapping(exact, np.int64))

    x = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    axis = numpy_helper.from_array(np.array(1, np.int64), "axis")
    save(out, "cumsum",
         helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=1,
                          reverse=1),
         {"x": x},
         cumsum(x.astype(np.float64), 1, True, True).astype(np.float32),
         [axis])

    x = big64((3, 4))
    axis = numpy_helper.from_array(np.array(-1, np.int32), "axis")
    save(out, "int_cumsum", helper.make_node("CumSum", ["x", "axis"], ["y"]),
         {"x": x}, wrapping(cumsum(x, -1), np.int64), [axis])

    x = big32((2, 3, 4))
    exact = np.prod(x.astype(object), axis=1)
    save(out, "reduce_prod",
         helper.make_node("ReduceProd", ["x"], ["y"], axes=[1], keepdims=0),
         {"x": x}, wrapping(exact, np.int32))

    # ScatterND adding into i64 (sums wrap around), rows repeated and
    # counted from the end: every row's update is added, in order.
    x = big64((3, 4))
    rows = np.array([[1], [-2], [0]], np.int64)
    updates = big64((3, 4))
    exact = x.astype(object)
    for r, u in zip(rows[:, 0] % 3, updates.astype(object)):
        exact[r] = exact[r] + u
    save(out, "scatter_nd_add",
         helper.make_node("ScatterND", ["x", "rows", "updates"], ["y"],
                          reduction="add"),
         {"x": x, "rows": rows, "updates": updates},
         wrapping(exact, np.int64), opset=16)

    # GatherND with one batch dimension: row b takes the elements of
    # x[b] at its own index pairs.
    x = big32((2, 3, 4))
    pairs = np.array([[[0, 1], [2, -1]], [[-3, 0], [1, 3]]], np.int64)
    y = np.stack([x[b][tuple(pairs[b].T)] for b in range(2)])
    save(out, "gather_nd", helper.make_node("GatherND", ["x", "pairs"], ["y"],
                                            batch_dims=1),
         {"x": x, "pairs": pairs}, y)

    # A GatherND index out of range in its own dimension (4 of 4) whose
    # flattened row would still lie inside the data: a run-time error.
    bad = np.array([[0, 4]], np.int64)
    save(out, "gather_nd_range",
         helper.make_node("GatherND", ["x", "bad"], ["y"]),
         {"x": x, "bad": bad}, np.zeros((1, 4), np.int32))

    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    save(out, "scatter_nd_reduction",
         helper.make_node("ScatterND", ["x", "rows", "u"], ["y"],
                          reduction="maximum"),
         {"x": x, "rows": np.array([[1]], np.int64),
          "u": np.zeros((1, 3), np.float32)}, x, opset=16)

    # GatherND whose batch dimension differs between data and indices.
    save(out, "gather_nd_batch",
         helper.make_node("GatherND", ["x", "pairs"], ["y"], batch_dims=1),
         {"x": big32((2, 3, 4)), "pairs": np.zeros((3, 1, 2), np.int64)},
         np.zeros((3, 1), np.int32))

    # ScatterElements whose updates do not have the indices' shape.
    save(out, "scatter_elements_shape",
         helper.make_node("ScatterElements", ["x", "index", "u"], ["y"],
                          axis=1),
         {"x": np.zeros((2, 3), np.float32),
          "index": np.zeros((2, 2), np.int64),
          "u": np.zeros((2, 1), np.float32)}, np.zeros((2, 3), np.float32))

    # QuantizeLinear to int8 per channel (axis 1): ties round to even,
    # values beyond the range saturate; then DequantizeLinear back, with
    # scales and zero points given at run time.
    x = np.array([[0.5, 1.5, 2.5, -0.5, 300.0, -300.0],
                  [0.25, -1.25, 7.0, 100.0, -2.5, 0.0]], np.float32)
    x = np.stack([x, x * 2, x / 4], axis=1)  # [2, 3, 6]
    scale = np.array([0.5, 1.0, 0.25], np.float32)
    zero = np.array([0, 3, -5], np.int8)
    q = np.clip(np.round(x / scale[None, :, None]) + zero[None, :, None],
                -128, 127).astype(np.int8)
    save(out, "quantize_int8",
         helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1),
         {"x": x, "s": scale, "z": zero}, q, opset=13)
    d = ((q.astype(np.float32) - zero[None, :, None]) *
         scale[None, :, None]).astype(np.float32)
    save(out, "dequantize_int8",
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1),
         {"q": q, "s": scale, "z": zero}, d, opset=13)
    # A zero point of a type QuantizeLinear does not quantize to, a per-axis
    # scale of the wrong size, QLinearMatMul with per-row scales.
    save(out, "quantize_zero_type",
         helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"]),
         {"x": np.zeros((2, 3), np.float32), "s": np.ones((), np.float32),
          "z": np.zeros((), np.int32)}, np.zeros((2, 3), np.int32), opset=13)
    save(out, "quantize_axis",
         helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1),
         {"x": np.zeros((2, 3), np.float32), "s": np.ones(4, np.float32)},
         np.zeros((2, 3), np.uint8), opset=13)
    u8 = np.zeros((2, 2), np.uint8)
    save(out, "qlinear_scales",
         helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz",
                                            "ys", "yz"], ["y"]),
         {"a": u8, "as": np.ones(2, np.float32), "az": np.zeros(1, np.uint8),
          "b": u8, "bs": np.ones(1, np.float32), "bz": np.zeros(1, np.uint8),
          "ys": np.ones(1, np.float32), "yz": np.zeros(1, np.uint8)}, u8,
         opset=13)

    # ConvTranspose with output_shape: pads computed from it (2 rows,
    # one each side) and, past what the windows cover, output padding (the
    # bias only there), against loops over the definition.
    def conv_transpose(x, w, b, stride, pads, out):
        n, ci, h, wd = x.shape
        co, k = w.shape[1], w.shape[2]
        full = np.zeros((n, co, (h - 1) * stride + k, (wd - 1) * stride + k))
        for i in range(h):
            for j in range(wd):
                full[:, :, i * stride:i * stride + k, j * stride:j * stride + k] += \
                    np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
        y = np.zeros((n, co) + tuple(out))
        crop = full[:, :, pads[0]:, pads[1]:][:, :, :out[0], :out[1]]
        y[:, :, :crop.shape[2], :crop.shape[3]] = crop
        return (y + b[None, :, None, None]).astype(np.float32)

    x = rng.uniform(-1, 1, (1, 2, 4, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, 3).astype(np.float32)
    # Height: 2 * 3 + 3 = 9 covered, 7 asked: pads 1 and 1. Width: 2 * 2 + 3
    # = 7 covered, 8 asked: one row of output padding.
    save(out, "convtranspose_output_shape",
         helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2],
                          output_shape=[7, 8]),
         {"x": x}, conv_transpose(x.astype(np.float64), w.astype(np.float64),
                                  b.astype(np.float64), 2, (1, 0), (7, 8)),
         initializers=[numpy_helper.from_array(w, "w"),
                       numpy_helper.from_array(b, "b")])
    save(out, "convtranspose_output_shape_rank",
         helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                          output_shape=[1, 3, 7]),
         {"x": x}, np.zeros((1, 3, 6, 5), np.float32),
         initializers=[numpy_helper.from_array(w, "w")])

    # A non-positive size in output_shape.
    save(out, "convtranspose_output_shape_zero",
         helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                          output_shape=[0, 5]),
         {"x": x}, np.zeros((1, 3, 6, 5), np.float32),
         initializers=[numpy_helper.from_array(w, "w")])
    # Resize's cubic mode before opset 11 defined it (opset 10's Resize:
    # X and scales).
    save(out, "resize_cubic_opset10",
         helper.make_node("Resize", ["x", "scales"], ["y"], mode="cubic"),
         {"x": np.zeros((1, 1, 2, 2), np.float32)},
         np.zeros((1, 1, 4, 4), np.float32),
         initializers=[numpy_helper.from_array(
             np.array([1, 1, 2, 2], np.float32), "scales")], opset=10)
    # QuantizeLinear of f16 data.
    save(out, "quantize_f16",
         helper.make_node("QuantizeLinear", ["x", "s"], ["y"]),
         {"x": np.zeros((2, 3), np.float16), "s": np.ones((), np.float32)},
         np.zeros((2, 3), np.uint8), opset=13)

    # GridSample beyond what is supported: a mode ONNX does not define, a
    # volumetric (5-D) input.
    save(out, "gridsample_mode",
         helper.make_node("GridSample", ["x", "g"], ["y"], mode="area"),
         {"x": np.zeros((1, 1, 3, 3), np.float32),
          "g": np.zeros((1, 2, 2, 2), np.float32)},
         np.zeros((1, 1, 2, 2), np.float32), opset=16)
    save(out, "gridsample_padding",
         helper.make_node("GridSample", ["x", "g"], ["y"],
                          padding_mode="wrap"),
         {"x": np.zeros((1, 1, 3, 3), np.float32),
          "g": np.zeros((1, 2, 2, 2), np.float32)},
         np.zeros((1, 1, 2, 2), np.float32), opset=16)
    save(out, "gridsample_int",
         helper.make_node("GridSample", ["x", "g"], ["y"]),
         {"x": np.zeros((1, 1, 3, 3), np.int32),
          "g": np.zeros((1, 2, 2, 2), np.float32)},
         np.zeros((1, 1, 2, 2), np.int32), opset=16)
    save(out, "gridsample_rank",
         helper.make_node("GridSample", ["x", "g"], ["y"]),
         {"x": np.zeros((1, 1, 2, 3, 3), np.float32),
          "g": np.zeros((1, 2, 2, 2, 3), np.float32)},
         np.zeros((1, 1, 2, 2, 2), np.float32), opset=16)

    # More quantization errors: an axis out of range, DequantizeLinear of a
    # type it does not take, MatMulInteger of floats, DynamicQuantizeLinear
    # of integers.
    save(out, "quantize_axis_range",
         helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=3),
         {"x": np.zeros((2, 3), np.float32), "s": np.ones(3, np.float32)},
         np.zeros((2, 3), np.uint8), opset=13)
    save(out, "dequantize_scale_f16",
         helper.make_node("DequantizeLinear", ["x", "s"], ["y"]),
         {"x": np.zeros((2, 3), np.uint8), "s": np.ones((), np.float16)},
         np.zeros((2, 3), np.float32), opset=13)
    save(out, "qlinear_zero_type",
         helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz",
                                            "ys", "yz"], ["y"]),
         {"a": np.zeros((2, 2), np.uint8), "as": np.ones(1, np.float32),
          "az": np.zeros(1, np.uint8), "b": np.zeros((2, 2), np.uint8),
          "bs": np.ones(1, np.float32), "bz": np.zeros(1, np.uint8),
          "ys": np.ones(1, np.float32), "yz": np.zeros(1, np.int32)},
         np.zeros((2, 2), np.int32), opset=13)
    save(out, "dequantize_type",
         helper.make_node("DequantizeLinear", ["x", "s"], ["y"]),
         {"x": np.zeros((2, 3), np.int64), "s": np.ones((), np.float32)},
         np.zeros((2, 3), np.float32), opset=13)
    save(out, "matmul_integer_type",
         helper.make_node("MatMulInteger", ["a", "b"], ["y"]),
         {"a": np.zeros((2, 3), np.uint8), "b": np.zeros((3, 2), np.int32)},
         np.zeros((2, 2), np.int32), opset=13)
    save(out, "dynamic_quantize_type",
         helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"]),
         {"x": np.zeros((2, 3), np.int32)}, np.zeros((2, 3), np.uint8),
         opset=13)

    # BitShift with a direction ONNX does not define.
    save(out, "bitshift_direction",
         helper.make_node("BitShift", ["x", "n"], ["y"], direction="UP"),
         {"x": np.zeros(3, np.uint8), "n": np.ones(3, np.uint8)},
         np.zeros(3, np.uint8))

    # Constant in its string form, and with two values.
    save(out, "constant_string",
         helper.make_node("Constant", [], ["c"], value_string="modelc"),
         {}, np.zeros(1, np.float32))
    save(out, "constant_two_values",
         helper.make_node("Constant", [], ["y"], value_int=1, value_float=2.0),
         {}, np.zeros((), np.int64))

    # Dropout in training mode whose mask is read (the output y).
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    save(out, "dropout_mask",
         helper.make_node("Dropout", ["x", "ratio", "train"], ["out", "y"]),
         {"x": x}, np.zeros((2, 3), np.bool_),
         initializers=[numpy_helper.from_array(np.array(0.5, np.float32),
                                               "ratio"),
                       numpy_helper.from_array(np.array(True), "train")])

    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    save(out, "cumsum_axis", helper.make_node("CumSum", ["x", "axis"], ["y"]),
         {"x": x, "axis": np.array(0, np.int64)}, cumsum(x, 0).astype(
             np.float32))


if __name__ == "__main__":
    main()
