"""modelc for Python: compile a model ahead of time, load the model.so and
run it on numpy arrays and DLPack tensors (PyTorch), without copies.

    import modelc, torch
    modelc.compile("model.onnx", output="model.so")
    m = modelc.load("model.so")
    y = m(torch.randn(1, 3, 224, 224))          # a numpy array
    y = m.run(x=x, out="dlpack")                # a torch.Tensor

docs/python.md is the reference.
"""

from ._core import Error, abort_distributed_run
from ._compile import CompileError, compile, find_modelc
from ._model import Model, PendingRun, TensorSpec, load

__all__ = ["CompileError", "Error", "abort_distributed_run", "Model", "PendingRun", "TensorSpec", "compile",
           "find_modelc", "load"]
