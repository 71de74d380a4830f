"""modelc.load and what a Model says about itself: entry points, inputs and
outputs, plans, info(); plan=, threads=, weights=; every load error."""

import gc

import numpy as np
import pytest

import modelc
from conftest import relu_linear, write_safetensors


def test_import_without_a_model():
    assert issubclass(modelc.Error, RuntimeError)
    assert issubclass(modelc.CompileError, modelc.Error)
    assert callable(modelc.load) and callable(modelc.compile)


def test_entry_points_inputs_outputs(multi_model):
    m = multi_model
    assert m.entry_points == ["forward", "mixed", "halves", "column"]
    assert m.inputs() == [modelc.TensorSpec("x", "float32", (4, 16))]
    assert m.inputs("forward") == m.inputs()
    assert m.outputs() == [("output0", "float32", (4, 8))]
    assert [(s.name, s.dtype, s.shape) for s in m.inputs("mixed")] == [
        ("mask", "bool", (3, 4)), ("a", "int64", (3, 4)),
        ("b", "int32", (3, 4)), ("s", "int64", ())]
    assert [s.dtype for s in m.inputs("halves")] == ["float16", "bfloat16"]
    assert [s.dtype for s in m.outputs("halves")] == [
        "float16", "bfloat16", "float32"]
    assert str(m.inputs()[0]) == "x: float32[4,16]"
    assert "forward(x: float32[4,16]) -> (output0: float32[4,8])" in repr(m)


def test_unknown_entry_point(multi_model):
    for call in (lambda: multi_model.inputs("backward"),
                 lambda: multi_model.outputs("backward"),
                 lambda: multi_model.run(entry="backward")):
        with pytest.raises(modelc.Error,
                           match="has no entry point 'backward'; it has "
                                 "'forward', 'mixed', 'halves', 'column'"):
            call()


def test_plans_and_info(multi, multi_model):
    m = multi_model
    assert m.plans == ["cpu", "cpu+sim2"]
    assert m.plan == "cpu"
    info = m.info()
    assert info["path"] == multi[0] == m.path
    assert info["plan"] == "cpu" and info["plans"] == ["cpu", "cpu+sim2"]
    assert info["plan_note"] == ""
    assert info["weights"] == ["fc.weight", "fc.bias"]
    assert info["gpu_kernels"] == 0
    assert info["compiler_version"]
    assert "--target=cpu+sim2" in info["compiler_flags"]
    assert info["threads"] >= 1
    forward = info["entry_points"]["forward"]
    assert forward["inputs"] == m.inputs("forward")
    assert forward["outputs"] == m.outputs("forward")
    assert forward["arena_bytes"] > 0
    assert list(info["entry_points"]) == m.entry_points


def test_plan_option(multi):
    path, weights = multi
    sim = modelc.load(path, plan="cpu+sim2")
    assert sim.plan == "cpu+sim2"
    x = np.random.default_rng(1).standard_normal((4, 16), np.float32)
    want = relu_linear(x, weights["fc.weight"], weights["fc.bias"])
    np.testing.assert_allclose(sim(x), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(modelc.load(path, plan="cpu")(x), want,
                               rtol=1e-5, atol=1e-6)


def test_unknown_plan(multi):
    with pytest.raises(modelc.Error, match="h200x8"):
        modelc.load(multi[0], plan="h200x8")


def test_threads_option(multi):
    assert modelc.load(multi[0], threads=1).info()["threads"] == 1
    assert modelc.load(multi[0], threads=2).info()["threads"] == 2
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError, match="threads must be a positive int"):
            modelc.load(multi[0], threads=bad)


def test_weights_option(multi, tmp_path):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((8, 16), np.float32)
    b = rng.standard_normal(8, np.float32)
    file = tmp_path / "other.safetensors"
    write_safetensors(file, {"fc.weight": w, "fc.bias": b})
    x = rng.standard_normal((4, 16), np.float32)
    swapped = modelc.load(multi[0], weights=file)  # a PathLike
    np.testing.assert_allclose(swapped(x), relu_linear(x, w, b),
                               rtol=1e-5, atol=1e-5)
    own = modelc.load(multi[0])
    assert not np.allclose(own(x), swapped(x))


def test_weights_of_the_wrong_shape(multi, tmp_path):
    file = tmp_path / "wrong.safetensors"
    write_safetensors(file, {"fc.weight": np.zeros(4, np.float32),
                             "fc.bias": np.zeros(8, np.float32)})
    with pytest.raises(modelc.Error, match=r"weight 'fc.weight' in '.*wrong"
                       r".safetensors' is f32\[4\]; the model expects "
                       r"f32\[8,16\]"):
        modelc.load(multi[0], weights=file)


def test_missing_weight(multi, tmp_path):
    file = tmp_path / "partial.safetensors"
    write_safetensors(file, {"fc.weight": np.zeros((8, 16), np.float32)})
    with pytest.raises(modelc.Error, match="weight 'fc.bias' is missing"):
        modelc.load(multi[0], weights=file)


def test_missing_weights_file(multi, tmp_path):
    with pytest.raises(modelc.Error, match="nothere.safetensors"):
        modelc.load(multi[0], weights=str(tmp_path / "nothere.safetensors"))


def test_missing_model(tmp_path):
    with pytest.raises(modelc.Error, match=r"cannot open model '.*nothere.so'"
                                           r": No such file or directory"):
        modelc.load(tmp_path / "nothere.so")


def test_not_a_model(tmp_path):
    path = tmp_path / "text.so"
    path.write_text("not a library\n" * 100)
    with pytest.raises(modelc.Error, match="is not a compiled model"):
        modelc.load(str(path))


def test_plan_must_be_a_string(multi):
    with pytest.raises(TypeError, match="plan must be a str"):
        modelc.load(multi[0], plan=1)


def test_outputs_outlive_the_model(multi):
    m = modelc.load(multi[0])
    y = m(np.ones((4, 16), np.float32))
    want = y.copy()
    del m
    gc.collect()
    np.testing.assert_array_equal(y, want)
