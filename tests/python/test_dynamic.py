"""A model with a dynamic dimension (docs/dynamic.md) from Python: several
sizes in one process, each against numpy; sizes out of range are errors."""

import numpy as np
import pytest

import modelc
from conftest import mlp_reference


def test_several_sizes_in_one_process(mlp_dynamic):
    path, weights = mlp_dynamic
    model = modelc.load(path)
    assert model.info()["dims"] == {"batch": {"min": 1, "max": 64, "opt": 8}}
    (x,) = model.inputs()
    assert x.shape == ("batch", 784)
    assert model.outputs()[0].shape == ("batch", 10)
    rng = np.random.default_rng(1)
    for n in (3, 64, 1, 3):
        x = rng.standard_normal((n, 784), dtype=np.float32)
        y = model.run(x)
        assert y.shape == (n, 10)
        np.testing.assert_allclose(y, mlp_reference(x, weights), rtol=1e-4,
                                   atol=1e-5)


def test_torch_input_and_async_runs(mlp_dynamic):
    torch = pytest.importorskip("torch")
    path, weights = mlp_dynamic
    model = modelc.load(path)
    x = torch.randn(5, 784)
    y = model.run(x, out="dlpack")
    assert tuple(y.shape) == (5, 10)
    np.testing.assert_allclose(y.numpy(), mlp_reference(x.numpy(), weights),
                               rtol=1e-4, atol=1e-5)
    pending = [model.run_async(np.ones((n, 784), np.float32)) for n in (2, 9)]
    assert [p.wait().shape for p in pending] == [(2, 10), (9, 10)]


def test_sizes_out_of_range_and_wrong_axes(mlp_dynamic):
    model = modelc.load(mlp_dynamic[0])
    with pytest.raises(modelc.Error,
                       match=r"input 'x': dimension 'batch' \(axis 0\) is 65, "
                             r"outside its range 1\.\.64"):
        model.run(np.zeros((65, 784), np.float32))
    with pytest.raises(modelc.Error,
                       match=r"input 'x': expected f32\[batch in 1\.\.64,784\], "
                             r"got f32\[4,785\]"):
        model.run(np.zeros((4, 785), np.float32))
    # The model still runs after the errors.
    assert model.run(np.zeros((2, 784), np.float32)).shape == (2, 10)


def test_compile_with_dims_from_an_onnx_export(modelc_tool, onnx_file,
                                               torch_module, workdir):
    """modelc.compile(dims=...) on an export with dynamic_axes: every batch
    in the range against the PyTorch module."""
    torch = pytest.importorskip("torch")
    path = modelc.compile(onnx_file, output=str(workdir / "small_dyn.so"),
                          target="cpu", dims={"batch": (1, 8, 4)})
    model = modelc.load(path)
    assert model.info()["dims"] == {"batch": {"min": 1, "max": 8, "opt": 4}}
    for n in (8, 2, 5):
        x = torch.randn(n, 16)
        with torch.no_grad():
            want = torch_module(x).numpy()
        np.testing.assert_allclose(model.run(x.numpy()), want, rtol=1e-4,
                                   atol=1e-5)
    with pytest.raises(ValueError, match=r"dims\['batch'\]: expected"):
        modelc.compile(onnx_file, dims={"batch": (1,)})


def test_size_regimes(modelc_tool, workdir):
    """A model whose best placement changes with the batch (modelc
    --regimes, docs/dynamic.md): a plan per size regime in one model.so,
    chosen per run; every size against numpy on the model's weights."""
    from conftest import ROOT
    import os
    path = modelc.compile(
        os.path.join(ROOT, "tests", "e2e", "Inputs", "regimes.ir"),
        output=str(workdir / "regimes.so"), target="cpu+sim2",
        random_weights=1)
    model = modelc.load(path)
    info = model.info()
    assert info["plan"] == "cpu+sim2"
    assert info["plans"] == ["cpu+sim2"]
    # (The second regime splits the batch over sim:0 and sim:1.)
    assert info["regimes"] == [{"dim": "batch", "min": 1, "max": 541},
                               {"dim": "batch", "min": 542, "max": 4096}]
    one = modelc.load(modelc.compile(
        os.path.join(ROOT, "tests", "e2e", "Inputs", "regimes.ir"),
        output=str(workdir / "regimes1.so"), target="cpu+sim2",
        random_weights=1, regimes=1))
    assert one.info()["regimes"] == []
    assert one.regime_of(np.zeros((3, 64), np.float32)) == -1
    with pytest.raises(ValueError, match="regimes"):
        modelc.compile("model.ir", regimes=0)
    w = {k: np.asarray(v) for k, v in model.state_dict().items()}
    rng = np.random.default_rng(2)
    for n in (6, 601, 541, 542, 1):
        x = rng.standard_normal((n, 64), dtype=np.float32)
        assert model.regime_of(x) == (0 if n <= 541 else 1)
        h = np.tanh(x @ w["w1"].T + w["b1"])
        logits = h @ w["w2"].T
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        np.testing.assert_allclose(model.run(x), e / e.sum(axis=1,
                                                           keepdims=True),
                                   rtol=1e-4, atol=1e-6)


def test_dynamic_batch_split_over_accelerators(modelc_tool, workdir):
    """--data-parallel with a dynamic batch (docs/dynamic.md): a batch of 1
    runs whole, larger ones split over sim:0 and sim:1 at run time
    (balanced parts); every size in one process against numpy."""
    from conftest import ROOT
    import os
    ir = os.path.join(ROOT, "tests", "e2e", "Inputs", "regimes_dp.ir")
    model = modelc.load(modelc.compile(
        ir, output=str(workdir / "split.so"), target="cpu+sim2",
        random_weights=1, args=("--data-parallel",)))
    assert model.info()["regimes"] == [{"dim": "batch", "min": 1, "max": 1},
                                       {"dim": "batch", "min": 2,
                                        "max": 256}]
    w = {k: np.asarray(v) for k, v in model.state_dict().items()}
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 255):
        x = rng.standard_normal((n, 32), dtype=np.float32)
        assert model.regime_of(x) == (0 if n == 1 else 1)
        h = np.tanh(x @ w["w1"].T + w["b1"])
        h = np.tanh(h @ w["w2"].T)
        logits = h @ w["w3"].T
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        np.testing.assert_allclose(model.run(x), e / e.sum(axis=1,
                                                           keepdims=True),
                                   rtol=1e-4, atol=1e-6)


def test_batch_and_sequence_against_pytorch(modelc_tool, workdir):
    """examples/transformer_dynamic.ir (docs/dynamic.md: a dynamic batch
    and sequence) with the weights of nn.TransformerEncoderLayer: several
    (batch, sequence) pairs in one process against the PyTorch module."""
    torch = pytest.importorskip("torch")
    from conftest import ROOT, write_safetensors
    import os
    torch.manual_seed(5)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=512, nhead=8, dim_feedforward=2048, dropout=0.0,
        activation="gelu", batch_first=True, norm_first=True).eval()
    weights = str(workdir / "encoder.safetensors")
    write_safetensors(weights, {k: v.detach().numpy()
                                for k, v in layer.state_dict().items()})
    path = modelc.compile(
        os.path.join(ROOT, "examples", "transformer_dynamic.ir"),
        output=str(workdir / "encoder_dyn.so"), target="cpu", weights=weights)
    model = modelc.load(path)
    assert model.inputs()[0].shape == ("batch", "seq", 512)
    assert model.info()["dims"]["seq"] == {"min": 1, "max": 128, "opt": 64}
    for n, s in ((2, 5), (1, 128), (4, 1), (2, 5)):
        x = torch.rand(n, s, 512) * 2 - 1
        with torch.no_grad():
            want = layer(x).numpy()
        got = model.run(x.numpy())
        assert got.shape == (n, s, 512)
        np.testing.assert_allclose(got, want, rtol=1e-4,
                                   atol=1e-4 * np.abs(want).max())
    with pytest.raises(modelc.Error,
                       match=r"dimension 'seq' \(axis 1\) is 129, outside "
                             r"its range 1\.\.128"):
        model.run(np.zeros((1, 129, 512), np.float32))
