"""modelc.compile: build a model.so from a model.ir or model.onnx file with
the modelc compiler (the command-line tool, run as a child process)."""

import os
import re
import shutil
import subprocess

from ._core import Error

try:
    from ._paths import MODELC_TOOL as _OWN_TOOL
except ImportError:  # the sources themselves, not a build or an install
    _OWN_TOOL = None


class CompileError(Error):
    """modelc rejected the model or failed to build it. The message has the
    compiler's diagnostics (file:line:col: error: ...); `diagnostics` is its
    standard error, `returncode` its exit status, `command` what ran."""

    def __init__(self, message, diagnostics="", returncode=None, command=()):
        super().__init__(message)
        self.diagnostics = diagnostics
        self.returncode = returncode
        self.command = list(command)


def find_modelc(modelc=None):
    """The modelc compiler that modelc.compile runs: `modelc` if given, else
    $MODELC, else the one of this module's own build tree or install, else
    modelc on PATH. Raises modelc.Error when there is none."""
    for given, origin in ((modelc, "modelc="), (os.environ.get("MODELC"),
                                                "$MODELC")):
        if given:
            path = os.fspath(given)
            found = shutil.which(path)
            if not found:
                raise Error("%s names '%s', which is not an executable "
                            "modelc" % (origin, path))
            return found
    if _OWN_TOOL and os.access(_OWN_TOOL, os.X_OK):
        return _OWN_TOOL
    found = shutil.which("modelc")
    if found:
        return found
    raise Error("no modelc compiler: this module's build has none (%s), and "
                "there is no modelc on PATH; build with "
                "-DMODELC_BUILD_COMPILER=ON, or set $MODELC or modelc="
                % (_OWN_TOOL or "built without the compiler"))


def _shape_text(name, shape):
    if isinstance(shape, str):
        if not re.fullmatch(r"\d+(x\d+)*", shape):
            raise ValueError("input_shapes[%r] must be a sequence of ints or "
                             "a string such as '1x3x224x224', got %r"
                             % (name, shape))
        return shape
    try:
        dims = [int(d) for d in shape]
    except (TypeError, ValueError):
        raise ValueError("input_shapes[%r] must be a sequence of ints or a "
                         "string such as '1x3x224x224', got %r"
                         % (name, shape)) from None
    return "x".join(str(d) for d in dims)


def compile(model, output=None, *, target=None, weights=None,
            input_shapes=None, dims=None, regimes=None, precision=None,
            random_weights=None, args=(), modelc=None):
    """Compiles `model` (a .ir or .onnx file) into `output` (default: the
    model's path with .so) and returns the output's path.

    target: a target (preset name or JSON file) or a list of them, one plan
    each (default: modelc's, "cpu"). weights: a safetensors file.
    input_shapes: {input name: shape} for ONNX inputs with dynamic
    dimensions. dims: {dimension name: (min, max) or (min, max, opt)}, the
    ranges of dynamic dimensions (modelc --dim; docs/dynamic.md): one
    model.so runs every size in the range. regimes: the most size regimes
    per target (modelc --regimes; 1: one plan for the range). precision:
    "f32", "f16" or "bf16". random_weights: True or a seed, for a model
    without weights. args: more modelc arguments.
    modelc: the compiler to run (default: find_modelc()).
    Raises modelc.CompileError with the compiler's located errors."""
    tool = find_modelc(modelc)
    model = os.fspath(model)
    if output is None:
        output = os.path.splitext(model)[0] + ".so"
    output = os.fspath(output)
    command = [tool, model, "-o", output]
    if target is not None:
        targets = [target] if isinstance(target, (str, os.PathLike)) else target
        command += ["--target=" + os.fspath(t) for t in targets]
    if weights is not None:
        command += ["--weights", os.fspath(weights)]
    if random_weights is not None and random_weights is not False:
        command.append("--random-weights" if random_weights is True else
                       "--random-weights=%d" % random_weights)
    for name, shape in (input_shapes or {}).items():
        command += ["--input-shape", "%s=%s" % (name, _shape_text(name, shape))]
    for name, bounds in (dims or {}).items():
        bounds = tuple(int(b) for b in bounds)
        if len(bounds) not in (2, 3):
            raise ValueError("dims[%r]: expected (min, max) or (min, max, "
                             "opt), got %r" % (name, bounds))
        text = "%d..%d" % bounds[:2]
        if len(bounds) == 3:
            text += "@%d" % bounds[2]
        command += ["--dim", "%s=%s" % (name, text)]
    if regimes is not None:
        if isinstance(regimes, bool) or int(regimes) < 1:
            raise ValueError("regimes: expected a count of at least 1, got %r"
                             % (regimes,))
        command.append("--regimes=%d" % int(regimes))
    if precision is not None:
        command.append("--precision=" + precision)
    if isinstance(args, str):
        raise TypeError("args must be a list of arguments, not a str")
    command += [os.fspath(a) for a in args]
    done = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        diagnostics = done.stderr.strip() or done.stdout.strip()
        raise CompileError("modelc failed on '%s' (exit status %d):\n%s"
                           % (model, done.returncode, diagnostics),
                           diagnostics, done.returncode, command)
    return output
