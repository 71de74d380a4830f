"""Fixtures of the Python module's tests: the models, compiled once per
session with modelc.compile (with a Release modelc on 2 cores, about 1.5 s
of the suite's 2.5 s).

The compiler is the one modelc.find_modelc finds ($MODELC, this build's,
PATH). Without one the tests that need models skip, unless
MODELC_TEST_REQUIRE_COMPILER is set (ctest sets it when the build has the
compiler): then they fail."""

import json
import os
import struct

import numpy as np
import pytest

import modelc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MULTI_IR = os.path.join(HERE, "models", "multi.ir")
MLP_IR = os.path.join(ROOT, "examples", "mlp.ir")


def write_safetensors(path, tensors):
    """A safetensors file of float32 numpy arrays."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """The float32 tensors of a safetensors file, as numpy arrays."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    body = data[8 + size:]
    tensors = {}
    for name, t in header.items():
        assert t["dtype"] == "F32"
        begin, end = t["data_offsets"]
        tensors[name] = np.frombuffer(body[begin:end], np.float32).reshape(
            t["shape"])
    return tensors


def relu_linear(x, w, b):
    return np.maximum(x @ w.T + b, 0)


@pytest.fixture(scope="session")
def modelc_tool():
    try:
        return modelc.find_modelc()
    except modelc.Error as e:
        if os.environ.get("MODELC_TEST_REQUIRE_COMPILER"):
            pytest.fail("this build has a compiler, but: %s" % e)
        pytest.skip("no modelc compiler to build test models with: %s" % e)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def multi(modelc_tool, workdir):
    """multi.ir with random weights (saved), plans cpu and cpu+sim2:
    (model.so path, {weight name: array})."""
    weights = str(workdir / "multi.safetensors")
    path = modelc.compile(MULTI_IR, output=str(workdir / "multi.so"),
                          target=["cpu", "cpu+sim2"], random_weights=3,
                          args=["--save-weights", weights])
    return path, read_safetensors(weights)


@pytest.fixture(scope="session")
def multi_model(multi):
    return modelc.load(multi[0], plan="cpu")


@pytest.fixture(scope="session")
def mlp(modelc_tool, workdir):
    """examples/mlp.ir (64x784 -> 1024 -> 1024 -> 10) with weights given
    as a safetensors file: (model.so path, weights)."""
    rng = np.random.default_rng(0)
    shapes = {"fc1": (1024, 784), "fc2": (1024, 1024), "fc3": (10, 1024)}
    weights = {}
    for name, (out, inp) in shapes.items():
        bound = 1 / np.sqrt(inp)
        weights[name + ".weight"] = rng.uniform(-bound, bound, (out, inp)).astype(np.float32)
        weights[name + ".bias"] = rng.uniform(-bound, bound, out).astype(np.float32)
    file = str(workdir / "mlp.safetensors")
    write_safetensors(file, weights)
    path = modelc.compile(MLP_IR, output=str(workdir / "mlp.so"),
                          target="cpu", weights=file)
    return path, weights


def mlp_reference(x, w):
    h = relu_linear(x, w["fc1.weight"], w["fc1.bias"])
    h = relu_linear(h, w["fc2.weight"], w["fc2.bias"])
    return h @ w["fc3.weight"].T + w["fc3.bias"]


@pytest.fixture(scope="session")
def torch_module():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                 torch.nn.Linear(32, 8), torch.nn.Tanh())
    return module.eval()


@pytest.fixture(scope="session")
def onnx_file(torch_module, workdir):
    """torch_module exported by torch.onnx.export with a dynamic batch."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    path = str(workdir / "small.onnx")
    torch.onnx.export(torch_module, (torch.randn(2, 16),), path,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    return path


@pytest.fixture(scope="session")
def small_so(modelc_tool, onnx_file, workdir):
    return modelc.compile(onnx_file, output=str(workdir / "small.so"),
                          input_shapes={"x": (5, 16)})


@pytest.fixture(scope="session")
def mlp_dynamic(modelc_tool, workdir, mlp):
    """examples/mlp_dynamic.ir (a batch of 1 to 64) with mlp's weights:
    (model.so path, weights)."""
    path = modelc.compile(os.path.join(ROOT, "examples", "mlp_dynamic.ir"),
                          output=str(workdir / "mlp_dynamic.so"), target="cpu",
                          weights=str(workdir / "mlp.safetensors"))
    return path, mlp[1]
