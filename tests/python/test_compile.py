"""modelc.compile: every parameter, the compiler's located errors, finding
the compiler, and the PyTorch round trip (torch.onnx.export, compile, load,
compare with the module's own output)."""

import os
import shutil

import numpy as np
import pytest

import modelc
from modelc import _compile
from conftest import MULTI_IR, mlp_reference


def test_pytorch_round_trip(torch_module, small_so):
    torch = pytest.importorskip("torch")
    m = modelc.load(small_so)
    assert m.inputs() == [("x", "float32", (5, 16))]  # input_shapes=
    assert [(o.name, o.shape) for o in m.outputs()] == [("y", (5, 8))]
    x = torch.randn(5, 16)
    with torch.no_grad():
        want = torch_module(x).numpy()
    np.testing.assert_allclose(m(x=x), want, rtol=1e-5, atol=1e-5)
    y = m.run(x, out="dlpack")
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)


def test_precision_and_default_output(modelc_tool, torch_module, onnx_file,
                                      tmp_path):
    torch = pytest.importorskip("torch")
    model = str(tmp_path / "half.onnx")
    shutil.copy(onnx_file, model)
    out = modelc.compile(model, input_shapes={"x": "3x16"}, precision="f16",
                         target=["cpu"])
    assert out == str(tmp_path / "half.so") and os.path.exists(out)
    m = modelc.load(out)
    assert "--precision=f16" in m.info()["compiler_flags"]
    assert m.inputs() == [("x", "float32", (3, 16))]  # the types stay f32
    x = torch.randn(3, 16)
    with torch.no_grad():
        want = torch_module(x).numpy()
    got = m(x)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
    # f16 storage rounds: not bit-equal to f32.
    assert not np.array_equal(got, want)


def test_weights_and_target(mlp):
    path, weights = mlp
    m = modelc.load(path)
    assert m.plans == ["cpu"]
    assert "--target=cpu" in m.info()["compiler_flags"]
    assert "--weights" in m.info()["compiler_flags"]
    x = np.random.default_rng(5).standard_normal((64, 784), np.float32)
    np.testing.assert_allclose(m(x), mlp_reference(x, weights), rtol=1e-4,
                               atol=1e-4)


def test_random_weights_and_args(multi, multi_model):
    flags = multi_model.info()["compiler_flags"]
    assert "--random-weights=3" in flags and "--save-weights" in flags
    assert sorted(multi[1]) == ["fc.bias", "fc.weight"]


def test_located_errors(modelc_tool, tmp_path):
    bad = tmp_path / "bad.ir"
    bad.write_text(
        "func.func @forward(%a: tensor<4x8xf32>, %b: tensor<5x3xf32>)"
        " -> tensor<4x3xf32> {\n"
        "  %c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<5x3xf32>\n"
        "  return %c : tensor<4x3xf32>\n"
        "}\n")
    with pytest.raises(modelc.CompileError) as caught:
        modelc.compile(bad, output=tmp_path / "bad.so")
    e = caught.value
    assert isinstance(e, modelc.Error)
    assert "bad.ir:2:8: error:" in str(e) and "inner dimensions" in str(e)
    assert "bad.ir:2:8: error:" in e.diagnostics
    assert e.returncode == 1
    assert e.command[:2] == [modelc_tool, str(bad)]
    assert not (tmp_path / "bad.so").exists()


def test_missing_model_file(modelc_tool, tmp_path):
    with pytest.raises(modelc.CompileError, match="nothere.ir"):
        modelc.compile(tmp_path / "nothere.ir")


def test_dynamic_shape_needs_input_shapes(modelc_tool, onnx_file, tmp_path):
    with pytest.raises(modelc.CompileError, match="input-shape"):
        modelc.compile(onnx_file, output=tmp_path / "dyn.so")


def test_bad_precision(modelc_tool, tmp_path):
    with pytest.raises(modelc.CompileError, match="f8"):
        modelc.compile(MULTI_IR, output=tmp_path / "p.so", precision="f8",
                       random_weights=True)


def test_unknown_target(modelc_tool, tmp_path):
    with pytest.raises(modelc.CompileError, match="nosuchtarget"):
        modelc.compile(MULTI_IR, output=tmp_path / "t.so",
                       target="nosuchtarget", random_weights=True)


def test_bad_arguments(modelc_tool, tmp_path):
    with pytest.raises(ValueError, match=r"input_shapes\['x'\] must be a "
                                         r"sequence of ints"):
        modelc.compile(MULTI_IR, input_shapes={"x": 5})
    # A string that is not a shape, before modelc runs (docs/python.md).
    with pytest.raises(ValueError, match=r"input_shapes\['x'\] must be a "
                                         r"sequence of ints or a string such "
                                         r"as '1x3x224x224', got '1xx'"):
        modelc.compile(MULTI_IR, input_shapes={"x": "1xx"})
    with pytest.raises(TypeError, match="args must be a list"):
        modelc.compile(MULTI_IR, args="--checked")


def test_find_modelc_order(modelc_tool, monkeypatch, tmp_path):
    monkeypatch.delenv("MODELC", raising=False)
    # The argument first, then $MODELC.
    assert modelc.find_modelc(modelc_tool) == modelc_tool
    monkeypatch.setenv("MODELC", str(tmp_path / "none"))
    with pytest.raises(modelc.Error, match=r"\$MODELC names '.*none', which "
                                           r"is not an executable modelc"):
        modelc.find_modelc()
    assert modelc.find_modelc(modelc=modelc_tool) == modelc_tool
    with pytest.raises(modelc.Error, match="modelc= names 'nowhere/modelc'"):
        modelc.compile(MULTI_IR, modelc="nowhere/modelc")
    monkeypatch.delenv("MODELC")
    # Then this build's own compiler (when it has one), then PATH.
    if _compile._OWN_TOOL:
        assert modelc.find_modelc() == _compile._OWN_TOOL
    monkeypatch.setattr(_compile, "_OWN_TOOL", None)
    monkeypatch.setenv("PATH", os.path.dirname(modelc_tool))
    assert modelc.find_modelc() == os.path.join(os.path.dirname(modelc_tool),
                                                "modelc")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(modelc.Error, match="no modelc compiler"):
        modelc.find_modelc()


def test_own_compiler_in_a_full_build():
    if not os.environ.get("MODELC_TEST_REQUIRE_COMPILER"):
        pytest.skip("this build has no compiler (MODELC_BUILD_COMPILER=OFF)")
    assert _compile._OWN_TOOL and os.access(_compile._OWN_TOOL, os.X_OK)
