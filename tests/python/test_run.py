"""Model.run and Model(...): inputs in order or by name, every dtype, numpy
and torch (DLPack) in, numpy and torch out, zero-copy both ways (checked
against the pointers at the runtime's boundary, modelc._core._last_run),
the documented copies, and every input error."""

import ctypes
import json
import gc
import os
import sys

import numpy as np
import pytest

import modelc
from modelc import _core
from conftest import ROOT, relu_linear

rng = np.random.default_rng(7)


def forward_reference(multi, x):
    w = multi[1]
    return relu_linear(np.asarray(x, np.float32), w["fc.weight"], w["fc.bias"])


def x16():
    return rng.standard_normal((4, 16), np.float32)


def mixed_inputs():
    mask = rng.integers(0, 2, (3, 4)).astype(bool)
    a = rng.integers(-5, 5, (3, 4)).astype(np.int64)
    b = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    return mask, a, b, np.int64(3)


def mixed_reference(mask, a, b, s):
    return np.where(mask, a * s, b.astype(np.int64)), a > b


# --- inputs and outputs -----------------------------------------------------

def test_run_in_order_by_name_and_call(multi, multi_model):
    x = x16()
    want = forward_reference(multi, x)
    for y in (multi_model.run(x), multi_model.run(x=x), multi_model(x),
              multi_model(x=x, entry="forward")):
        assert isinstance(y, np.ndarray)
        assert y.dtype == np.float32 and y.shape == (4, 8)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_integers_bools_and_scalars(multi_model):
    mask, a, b, s = mixed_inputs()
    sel, gt = multi_model.run(mask, a, b=b, s=s, entry="mixed")
    want_sel, want_gt = mixed_reference(mask, a, b, 3)
    assert sel.dtype == np.int64 and gt.dtype == np.bool_
    np.testing.assert_array_equal(sel, want_sel)
    np.testing.assert_array_equal(gt, want_gt)
    # A 0-d array works as well as a numpy scalar.
    sel2, _ = multi_model.run(mask, a, b, np.array(3), entry="mixed")
    np.testing.assert_array_equal(sel2, want_sel)


def test_float16_in_and_out(multi_model):
    torch = pytest.importorskip("torch")
    h = torch.rand(2, 3).half()
    g = torch.rand(2, 3).bfloat16()
    s16, prod, s32 = multi_model.run(h=h, g=g, entry="halves", out="dlpack")
    assert s16.dtype == torch.float16 and prod.dtype == torch.bfloat16
    assert s32.dtype == torch.float32
    want = h.float() + g.float().half().float()
    torch.testing.assert_close(s16.float(), want, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(s32, s16.float())
    torch.testing.assert_close(prod.float(), (h.float() * g.float()),
                               rtol=2e-2, atol=1e-2)
    # f16 from numpy, bf16 (numpy has none) from torch.
    s16_np, _, s32_np = multi_model.run(h.numpy(), g, entry="halves",
                                        out="dlpack")
    torch.testing.assert_close(s16_np, s16)


def test_bfloat16_output_needs_dlpack(multi_model):
    torch = pytest.importorskip("torch")
    with pytest.raises(modelc.Error, match="output 'output1' is bf16, which "
                       "numpy has no dtype for; run with out=\"dlpack\""):
        multi_model.run(np.zeros((2, 3), np.float16),
                        torch.zeros(2, 3, dtype=torch.bfloat16),
                        entry="halves")


def test_out_dlpack_gives_torch_tensors(multi, multi_model):
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(x16())
    y = multi_model.run(x, out="dlpack")
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    np.testing.assert_allclose(y.numpy(), forward_reference(multi, x.numpy()),
                               rtol=1e-5, atol=1e-6)
    mask, a, b, s = mixed_inputs()
    sel, gt = multi_model.run(torch.from_numpy(mask), torch.from_numpy(a),
                              torch.from_numpy(b), torch.tensor(3),
                              entry="mixed", out="dlpack")
    assert sel.dtype == torch.int64 and gt.dtype == torch.bool
    want_sel, want_gt = mixed_reference(mask, a, b, 3)
    np.testing.assert_array_equal(sel.numpy(), want_sel)
    np.testing.assert_array_equal(gt.numpy(), want_gt)


def test_out_dlpack_without_torch_fails_before_the_run(multi_model,
                                                      monkeypatch):
    multi_model(x16())
    before = _core._last_run()["started_ns"]
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
    with pytest.raises(modelc.Error, match='out="dlpack" returns torch '
                       "tensors, and torch cannot be imported"):
        multi_model(x16(), out="dlpack")
    assert _core._last_run()["started_ns"] == before  # it did not run


def test_bad_out(multi_model):
    with pytest.raises(ValueError, match='out must be "numpy" or "dlpack", '
                                         "got 'torch'"):
        multi_model.run(x16(), out="torch")


# --- zero-copy ---------------------------------------------------------------

def test_numpy_input_and_output_are_not_copied(multi_model):
    x = x16()
    y = multi_model(x)
    record = _core._last_run()
    assert record["inputs"] == [x.ctypes.data]
    assert record["copied"] == [False]
    assert record["outputs"] == [y.ctypes.data]
    assert not y.flags.owndata  # the array's base owns the runtime's tensor


def test_torch_input_and_output_are_not_copied(multi_model):
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(x16())
    y = multi_model.run(x, out="dlpack")
    record = _core._last_run()
    assert record["inputs"] == [x.data_ptr()]
    assert record["copied"] == [False]
    assert record["outputs"] == [y.data_ptr()]


def test_torch_views_with_an_offset_are_not_copied(multi_model):
    torch = pytest.importorskip("torch")
    big = torch.randn(6, 16)
    x = big[2:]  # contiguous, 2 rows into its storage
    y = multi_model(x)
    record = _core._last_run()
    assert record["inputs"] == [x.data_ptr()] and record["copied"] == [False]
    np.testing.assert_allclose(y, multi_model(x.numpy().copy()), rtol=1e-6)


def test_torch_bool_inputs_are_not_copied(multi_model):
    torch = pytest.importorskip("torch")
    mask, a, b, s = mixed_inputs()
    t = torch.from_numpy(mask)
    sel, _ = multi_model.run(t, a, b, s, entry="mixed")
    record = _core._last_run()
    assert record["inputs"][0] == t.data_ptr() and not record["copied"][0]
    np.testing.assert_array_equal(sel, mixed_reference(mask, a, b, 3)[0])


def test_bool_outputs_to_torch_are_not_copied(multi_model):
    pytest.importorskip("torch")
    _, gt = multi_model.run(*mixed_inputs(), entry="mixed", out="dlpack")
    assert _core._last_run()["outputs"][1] == gt.data_ptr()


def test_torch_outputs_outlive_the_model(multi):
    torch = pytest.importorskip("torch")
    m = modelc.load(multi[0])
    x = x16()
    y = m.run(x, out="dlpack")
    want = y.clone()
    del m
    gc.collect()
    torch.testing.assert_close(y, want)
    y.add_(1)  # the runtime's buffer is the tensor's, and writable
    torch.testing.assert_close(y, want + 1)


def test_unconsumed_output_capsules_free_their_tensors(multi_model):
    # _core.run(..., dlpack=True) returns the raw "dltensor" capsules; one
    # that nobody consumes owns the runtime's tensor and frees it when it
    # dies (the capsule's destructor calls the deleter).
    before = _core._exported_alive()
    capsules = multi_model._core.run("forward", [x16()], True)
    assert len(capsules) == 1 and type(capsules[0]).__name__ == "PyCapsule"
    assert _core._exported_alive() == before + 1
    del capsules
    gc.collect()
    assert _core._exported_alive() == before


def test_a_consumed_output_capsule_is_the_consumer_s(multi_model):
    torch = pytest.importorskip("torch")
    from torch.utils.dlpack import from_dlpack
    before = _core._exported_alive()
    (capsule,) = multi_model._core.run("forward", [x16()], True)
    y = from_dlpack(capsule)
    assert _core._exported_alive() == before + 1
    with pytest.raises(RuntimeError, match="consumed only once"):
        from_dlpack(capsule)
    del capsule  # renamed "used_dltensor": its destructor leaves the tensor
    gc.collect()
    assert _core._exported_alive() == before + 1
    y.add_(1)  # still the runtime's buffer, alive
    del y  # torch calls the deleter
    gc.collect()
    assert _core._exported_alive() == before


def test_non_contiguous_numpy_is_copied(multi, multi_model):
    x = np.asfortranarray(x16())
    y = multi_model(x)
    record = _core._last_run()
    assert record["copied"] == [True] and record["inputs"] != [x.ctypes.data]
    np.testing.assert_allclose(y, forward_reference(multi, x), rtol=1e-5,
                               atol=1e-6)
    strided = x16().repeat(2, axis=1)[:, ::2]
    np.testing.assert_allclose(multi_model(strided),
                               forward_reference(multi, strided),
                               rtol=1e-5, atol=1e-6)


def test_unaligned_numpy_is_copied(multi, multi_model):
    x = x16()
    raw = np.zeros(x.nbytes + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, np.float32, x.size, 1).reshape(4, 16)
    unaligned[...] = x
    assert not unaligned.flags.aligned
    y = multi_model(unaligned)
    assert _core._last_run()["copied"] == [True]
    np.testing.assert_allclose(y, forward_reference(multi, x), rtol=1e-5,
                               atol=1e-6)


def test_non_contiguous_torch_is_copied(multi, multi_model):
    torch = pytest.importorskip("torch")
    x = torch.randn(16, 4).t()  # shape [4, 16], strides [1, 4]
    assert not x.is_contiguous()
    y = multi_model(x)
    assert _core._last_run()["copied"] == [True]
    np.testing.assert_allclose(y, forward_reference(multi, x.numpy()),
                               rtol=1e-5, atol=1e-6)


# --- input errors ------------------------------------------------------------

def test_wrong_dtype_numpy(multi_model):
    # numpy's spelling on both sides (the runtime has none for complex64).
    with pytest.raises(modelc.Error, match=r"input 'x': expected "
                       r"float32\[4,16\], got complex64\[4,16\] \(modelc takes "
                       r".*convert it, e.g. with \.astype\('float32'\)\)$"):
        multi_model(np.zeros((4, 16), np.complex64))
    # float64 and uint8 are element types of the runtime: the input's own
    # check names them in the IR's spelling.
    with pytest.raises(modelc.Error, match=r"input 'x': expected f32\[4,16\], "
                                           r"got f64\[4,16\]"):
        multi_model(np.zeros((4, 16)))
    with pytest.raises(modelc.Error, match=r"input 'x': expected f32\[4,16\], "
                                           r"got ui8\[4,16\]"):
        multi_model(np.zeros((4, 16), np.uint8))


def test_wrong_dtype_numpy_for_bfloat16(multi_model):
    pytest.importorskip("torch")  # halves' bf16 output needs out="dlpack"
    # numpy has no bfloat16 to convert to.
    with pytest.raises(modelc.Error, match=r"input 'g': expected "
                       r"bfloat16\[2,3\], got uint16\[2,3\] .*numpy has no "
                       r"bfloat16: give a torch.Tensor"):
        multi_model.run(np.zeros((2, 3), np.float16),
                        np.zeros((2, 3), np.uint16), entry="halves",
                        out="dlpack")


def test_wrong_known_dtype(multi_model):
    with pytest.raises(modelc.Error, match=r"input 'x': expected f32\[4,16\], "
                                           r"got i32\[4,16\]"):
        multi_model(np.zeros((4, 16), np.int32))


def test_wrong_dtype_torch(multi_model):
    torch = pytest.importorskip("torch")
    with pytest.raises(modelc.Error, match=r"input 'x': expected "
                       r"f32\[4,16\], got ui8\[4,16\]"):
        multi_model(torch.zeros(4, 16, dtype=torch.uint8))
    with pytest.raises(modelc.Error, match=r"input 'x': expected "
                       r"f32\[4,16\], got f64\[4,16\]"):
        multi_model(torch.zeros(4, 16, dtype=torch.float64))
    # A dtype the runtime has no tensors of: PyTorch's conversion as hint.
    with pytest.raises(modelc.Error, match=r"input 'x': expected "
                       r"float32\[4,16\], got complex64\[4,16\] .*convert it, "
                       r"e.g. with \.to\(torch\.float32\)\)$"):
        multi_model(torch.zeros(4, 16, dtype=torch.complex64))


def test_wrong_shape(multi_model):
    with pytest.raises(modelc.Error, match=r"input 'x': expected f32\[4,16\], "
                                           r"got f32\[4,17\]"):
        multi_model(np.zeros((4, 17), np.float32))
    torch = pytest.importorskip("torch")
    with pytest.raises(modelc.Error, match=r"input 'x': expected f32\[4,16\], "
                                           r"got f32\[16\]"):
        multi_model(torch.zeros(16))


def test_byte_swapped_numpy(multi_model):
    with pytest.raises(modelc.Error, match=r"expected float32\[4,16\], "
                       r"got >f4\[4,16\] .*astype"):
        multi_model(np.zeros((4, 16), ">f4"))


def test_too_many_inputs(multi_model):
    x = x16()
    with pytest.raises(modelc.Error, match=r"entry point 'forward' takes 1 "
                                           r"inputs \('x'\), got 2"):
        multi_model(x, x)


def test_missing_input(multi_model):
    with pytest.raises(modelc.Error, match="entry point 'mixed' takes inputs "
                       "'mask', 'a', 'b', 's'; missing 'b', 's'"):
        multi_model.run(*mixed_inputs()[:2], entry="mixed")
    with pytest.raises(modelc.Error, match="missing 'x'"):
        multi_model()


def test_unknown_input_name(multi_model):
    with pytest.raises(modelc.Error, match="entry point 'forward' has no input "
                                           "'y'; its inputs are 'x'"):
        multi_model(y=x16())


def test_input_given_twice(multi_model):
    x = x16()
    with pytest.raises(modelc.Error, match="input 'x' of entry point 'forward' "
                                           "is given twice"):
        multi_model(x, x=x)


def test_not_a_tensor(multi_model):
    with pytest.raises(TypeError, match="input 'x': expected a numpy array or "
                                        "a tensor with __dlpack__.*got list"):
        multi_model([[0.0] * 16] * 4)


def test_dlpack_that_is_not_a_capsule(multi_model):
    class Fake:
        def __dlpack__(self):
            return 42

    with pytest.raises(TypeError, match="input 'x': __dlpack__.. did not "
                                        "return a DLPack capsule"):
        multi_model(Fake())


def test_dlpack_that_fails(multi_model):
    torch = pytest.importorskip("torch")
    x = torch.zeros(4, 16, requires_grad=True)
    with pytest.raises(modelc.Error, match="input 'x': its __dlpack__.. "
                                           "failed: .*detach"):
        multi_model(x)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _OnDevice:
    """A DLPack producer whose tensor is on a GPU (cuda:1), made by hand."""

    def __init__(self, shape, device_type=2, dtype=(2, 32, 1)):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.managed = _DLManagedTensor(
            data=0x1000, device=_DLDevice(device_type, 1), ndim=len(shape),
            dtype=_DLDataType(*dtype), shape=self.shape)

    def __dlpack__(self):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)


class _OnHost:
    """A DLPack producer over numpy memory, made by hand: `shape` and
    `strides` (in elements) from `byte_offset` bytes into `memory`, on
    `device_type` (1: cpu). torch always exports byte_offset 0, and gives a
    size-1 dimension a stride it computes; this gives any."""

    def __init__(self, memory, shape, strides, byte_offset, device_type=1):
        self.memory = memory  # kept alive while a capsule may point into it
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = (ctypes.c_int64 * len(strides))(*strides)
        self.managed = _DLManagedTensor(
            data=memory.ctypes.data, device=_DLDevice(device_type, 0),
            ndim=len(shape), dtype=_DLDataType(2, 32, 1), shape=self.shape,
            strides=self.strides, byte_offset=byte_offset)

    def __dlpack__(self):
        return _OnDevice.__dlpack__(self)


def test_byte_offset_and_a_size_1_dimension_are_not_copied(multi_model):
    memory = rng.standard_normal(100, np.float32)
    # [4, 1, 16] from element 5 on; the size-1 dimension's stride is odd
    # (999), so only a check that ignores it can borrow the memory.
    x = _OnHost(memory, (4, 1, 16), (16, 999, 1), byte_offset=5 * 4)
    y = multi_model.run(x, entry="column")
    record = _core._last_run()
    assert record["copied"] == [False]
    assert record["inputs"] == [memory.ctypes.data + 5 * 4]
    np.testing.assert_array_equal(y, 2 * memory[5:69].reshape(4, 1, 16))


def test_strided_dlpack_with_a_byte_offset_is_copied(multi_model):
    memory = rng.standard_normal(100, np.float32)
    # Element [i, 0, j] at 3 + i + 4 * j: a transposed view, 12 bytes in.
    x = _OnHost(memory, (4, 1, 16), (1, 7, 4), byte_offset=3 * 4)
    y = multi_model.run(x, entry="column")
    assert _core._last_run()["copied"] == [True]
    want = memory[3:67].reshape(16, 4).T.reshape(4, 1, 16)
    np.testing.assert_array_equal(y, 2 * want)
    # Rows of 16 contiguous elements 20 apart (runs copied whole).
    x = _OnHost(memory, (4, 1, 16), (20, 1, 1), byte_offset=2 * 4)
    y = multi_model.run(x, entry="column")
    assert _core._last_run()["copied"] == [True]
    want = np.stack([memory[2 + 20 * i:18 + 20 * i] for i in range(4)])
    np.testing.assert_array_equal(y, 2 * want.reshape(4, 1, 16))


def test_wrong_shape_is_refused_before_a_copy(multi_model):
    # Strides far past the memory: a copy made before the shape check would
    # read out of bounds; the check comes first, with the runtime's message.
    memory = np.zeros(4, np.float32)
    x = _OnHost(memory, (4, 1, 17), (1 << 40, 1 << 40, 1 << 40), 0)
    with pytest.raises(modelc.Error, match=r"input 'c': expected "
                                           r"f32\[4,1,16\], got f32\[4,1,17\]$"):
        multi_model.run(x, entry="column")
    f = np.asfortranarray(np.zeros((16, 4), np.float32))
    with pytest.raises(modelc.Error, match=r"input 'x': expected "
                                           r"f32\[4,16\], got f32\[16,4\]$"):
        multi_model(f)


def test_tensor_on_a_gpu(multi_model):
    with pytest.raises(modelc.Error, match="input 'x': expected a tensor on "
                                           "cpu, got one on cuda:1"):
        multi_model(_OnDevice((4, 16)))


def test_pinned_host_memory_is_borrowed(multi_model):
    # kDLCUDAHost (3) and kDLROCMHost (11): host memory a GPU can reach,
    # which the CPU reads as it is.
    memory = rng.standard_normal(64, np.float32)
    for device_type in (3, 11):
        x = _OnHost(memory, (4, 1, 16), (16, 16, 1), 0, device_type)
        y = multi_model.run(x, entry="column")
        record = _core._last_run()
        assert record["copied"] == [False]
        assert record["inputs"] == [memory.ctypes.data]
        np.testing.assert_array_equal(y, 2 * memory.reshape(4, 1, 16))
    with pytest.raises(modelc.Error, match="expected a tensor on cpu, got one "
                                           "on cuda_managed:1"):
        multi_model(_OnDevice((4, 16), device_type=13))


def test_vector_dtype(multi_model):
    with pytest.raises(modelc.Error, match=r"got float32x4\[4,16\]"):
        multi_model(_OnDevice((4, 16), device_type=1, dtype=(2, 32, 4)))


def test_run_time_error_in_the_model(modelc_tool, tmp_path):
    gather = os.path.join(ROOT, "tests", "e2e", "Inputs", "gather.ir")
    m = modelc.load(modelc.compile(gather, output=tmp_path / "gather.so"))
    with pytest.raises(modelc.Error, match="running 'forward' of model "
                       r"'.*gather.so' failed: graph.gather \(line \d+\): an "
                       "index is out of range"):
        m(np.zeros((4, 3), np.float32))


def test_trace(multi, tmp_path):
    """trace=True records every run: op slices on the device streams'
    tracks, copies, one "run" slice per run; write_trace writes the JSON."""
    m = modelc.load(multi[0], plan="cpu+sim2", trace=True)
    x = np.ones((4, 16), dtype=np.float32)
    m.run(x)
    m.run(x)
    slices = m.trace()
    runs = [s for s in slices if s["category"] == "run"]
    assert [s["run"] for s in runs] == [0, 1]
    assert all(s["track"] == "host" for s in runs)
    ops = [s for s in slices if s["category"] == "op"]
    assert ops and all(s["track"].endswith(" compute") for s in ops)
    assert all(s["duration_us"] >= 0 and s["estimate_us"] is not None
               for s in ops)
    tracks = {"host"} | {d + " " + s for d in ("cpu", "sim:0", "sim:1")
                         for s in ("compute", "copy")}
    assert {s["track"] for s in slices} <= tracks
    assert all(s["bytes"] > 0 for s in slices if s["category"] == "copy")
    path = tmp_path / "trace.json"
    m.write_trace(path)
    events = json.load(open(path))["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == len(slices)
    m.clear_trace()
    assert m.trace() == []


def test_trace_needs_trace_true(multi_model):
    with pytest.raises(modelc.Error, match="is not traced: load it with trace=True"):
        multi_model.trace()
    with pytest.raises(TypeError, match="trace must be a bool"):
        modelc.load(multi_model.path, trace="yes")
