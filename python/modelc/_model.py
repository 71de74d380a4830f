"""modelc.load and modelc.Model: a compiled model.so, run on numpy arrays
and DLPack tensors (the argument handling around modelc._core)."""

import os
from typing import NamedTuple, Tuple

import numpy

from . import _core
from ._core import Error

_OUTPUT_KINDS = ("numpy", "dlpack")


class TensorSpec(NamedTuple):
    """An input or output of an entry point: its name, dtype (numpy's name:
    "float32", "float16", "bfloat16", "int32", "int64", "bool") and shape;
    a dynamic axis holds its dimension's name ("batch"), Model.info()["dims"]
    its range."""
    name: str
    dtype: str
    shape: Tuple[int, ...]

    def __str__(self):
        return "%s: %s[%s]" % (self.name, self.dtype,
                               ",".join(str(d) for d in self.shape))


def load(path, plan=None, threads=None, weights=None, trace=False,
         distributed=None, collective_timeout=300.0):
    """Loads a model.so built by modelc.

    plan: the plan to run (a name such as "cpu" or "cpu+sim2", GPUs such as
    "cuda:1", or a device mapping); None: the best for this machine.
    threads: CPU threads (a positive int); None: one per core.
    weights: a safetensors file whose weights replace the model's own.
    trace: record every run (Model.trace(), Model.write_trace()).
    distributed: "mpi" to join the distributed run this process was started
    in (mpirun -np N python3 train.py): a model built with modelc --train
    --distributed then sums its gradients over the ranks (Model.rank,
    Model.world_size; each rank feeds its own part of the batch).
    collective_timeout: seconds a collective waits for the other ranks
    before the process ends with a message and exit status 1 (mpirun
    then ends the job). Every rank must run the same entry points in the
    same order.
    Raises modelc.Error (a missing or corrupt file, an unknown plan, weights
    of the wrong shape)."""
    if threads is not None and (isinstance(threads, bool) or
                                not isinstance(threads, int) or threads < 1):
        raise ValueError("threads must be a positive int, or None for one per "
                         "core; got %r" % (threads,))
    if plan is not None and not isinstance(plan, str):
        raise TypeError("plan must be a str, got %r" % (plan,))
    if not isinstance(trace, bool):
        raise TypeError("trace must be a bool, got %r" % (trace,))
    if distributed is not None and distributed != "mpi":
        raise ValueError('distributed must be None or "mpi", got %r'
                         % (distributed,))
    core = _core.load(os.fspath(path), plan or "", threads or 0,
                      os.fspath(weights) if weights is not None else "",
                      trace, distributed or "", float(collective_timeout))
    return Model(core)


def _specs(described):
    return [TensorSpec(name, dtype, tuple(shape))
            for name, dtype, shape in described]


def _prepare(value):
    """What _core.run reads: numpy arrays and DLPack producers as they are;
    numpy scalars as 0-d arrays; a bool torch.Tensor (which PyTorch 1.13
    cannot export through DLPack) as its numpy view, which shares memory."""
    if isinstance(value, numpy.generic):
        return numpy.asarray(value)
    if (type(value).__module__.startswith("torch") and
            str(getattr(value, "dtype", "")) == "torch.bool" and
            getattr(getattr(value, "device", None), "type", None) == "cpu" and
            not value.requires_grad):
        return value.numpy()
    return value


def _import_torch():
    """torch, for out="dlpack": imported before the run, so that a missing
    torch fails before the model runs, not after."""
    try:
        import torch.utils.dlpack
    except ImportError as e:
        raise Error('out="dlpack" returns torch tensors, and torch cannot be '
                    "imported (%s); Debian: python3-torch" % e) from None
    return torch


def _to_torch(torch, result):
    if isinstance(result, numpy.ndarray):  # bool: no DLPack bool in torch 1.13
        return torch.from_numpy(result)
    return torch.utils.dlpack.from_dlpack(result)


class Model:
    """A loaded model.so (from modelc.load). Runs may come from many threads
    at once; each releases the GIL while it runs."""

    def __init__(self, core):
        self._core = core
        self._entries = {name: (_specs(inputs), _specs(outputs))
                         for name, inputs, outputs, _ in core.entries()}
        # Per entry point, the inputs a run may leave out (they have a
        # default: train_step's `lr`).
        self._optional = {name: set(optional)
                          for name, _, _, optional in core.entries()}
        self._first = next(iter(self._entries))

    @property
    def path(self):
        """The model.so this model was loaded from."""
        return self._core.path

    @property
    def entry_points(self):
        """The names of the entry points, in the model's order."""
        return list(self._entries)

    @property
    def plan(self):
        """The plan that runs ("cpu", "cpu+sim2", "h200", ...)."""
        return self._core.plan()

    @property
    def rank(self):
        """This process's rank in the distributed run (0 without one)."""
        return self._core.rank()

    @property
    def world_size(self):
        """The number of ranks of the distributed run (1 without one)."""
        return self._core.world_size()

    @property
    def plans(self):
        """Every plan the model.so carries, in its order."""
        return self._core.plans()

    def _entry(self, entry):
        if entry is None:
            entry = self._first
        if entry not in self._entries:
            self._core.entry(str(entry))  # raises the runtime's Error
        return entry

    def inputs(self, entry=None):
        """The inputs of `entry` (default: the first entry point), as
        TensorSpec(name, dtype, shape)."""
        return list(self._entries[self._entry(entry)][0])

    def outputs(self, entry=None):
        """The outputs of `entry` (default: the first entry point)."""
        return list(self._entries[self._entry(entry)][1])

    def info(self):
        """Everything the model.so says about itself, as a dict."""
        core = self._core
        return {
            "path": core.path,
            "plan": core.plan(),
            "plans": core.plans(),
            "plan_note": core.plan_note(),
            "replica_sums": core.replica_sums(),
            "rank_sums": core.rank_sums(),
            # Optimizer state sharded over the ranks: what this rank holds
            # ("" for a model without).
            "state_shards": core.state_shards(),
            # Dynamic dimensions by name: {"batch": {"min", "max", "opt"}};
            # a TensorSpec's shape names them where an axis has one.
            "dims": core.dims(),
            # The chosen plan's size regimes (modelc --regimes): a plan
            # each, chosen per run from the size; [] for one plan.
            "regimes": core.regimes(),
            "threads": core.num_threads(),
            "compiler_version": core.compiler_version(),
            "compiler_flags": core.compiler_flags(),
            "gpu_kernels": core.gpu_kernels(),
            "weights": core.weight_names(),
            "entry_points": {
                name: {"inputs": list(inputs), "outputs": list(outputs),
                       "arena_bytes": core.arena_bytes(name)}
                for name, (inputs, outputs) in self._entries.items()},
        }

    def run(self, *args, entry=None, out="numpy", **inputs):
        """Runs `entry` (default: the first entry point) on its inputs, given
        in order, by name, or both: numpy arrays or DLPack producers
        (torch.Tensor), borrowed without a copy when they are C-contiguous
        host memory; other layouts are copied. Their dtypes and shapes must be
        the entry point's (modelc.Error names the input otherwise). A scalar
        input takes a Python number too; inputs with a default (train_step's
        `lr`) may be left out.

        Returns the output (or a tuple of the outputs, in order) as numpy
        arrays, or with out="dlpack" as torch tensors; either way over the
        runtime's output buffers, without a copy."""
        name, values = self._values(entry, out, args, inputs)
        torch = _import_torch() if out == "dlpack" else None
        results = self._core.run(name, values, out == "dlpack")
        return _results(torch, results)

    def run_async(self, *args, entry=None, out="numpy", **inputs):
        """Starts `entry` as run() would and returns a modelc.PendingRun at
        once; its wait() returns what run() returns. The inputs are checked
        (modelc.Error now) and copied before this returns, so the caller
        may change them. The runs a model starts this way run one at a
        time, in the order they were started, while the caller prepares the
        next batch (as a DataLoader with pin_memory and non_blocking
        copies)."""
        name, values = self._values(entry, out, args, inputs)
        torch = _import_torch() if out == "dlpack" else None
        return PendingRun(self._core.run_async(name, values, out == "dlpack"),
                          lambda results: _results(torch, results))

    def _values(self, entry, out, args, inputs):
        """The entry point's name and its inputs in order (None: left to
        its default), prepared for the core."""
        name = self._entry(entry)
        if out not in _OUTPUT_KINDS:
            raise ValueError('out must be "numpy" or "dlpack", got %r' % (out,))
        specs = self._entries[name][0]
        names = ", ".join("'%s'" % s.name for s in specs)
        if len(args) > len(specs):
            raise Error("entry point '%s' takes %d inputs (%s), got %d"
                        % (name, len(specs), names, len(args)))
        values = list(args) + [None] * (len(specs) - len(args))
        index = {s.name: i for i, s in enumerate(specs)}
        for key, value in inputs.items():
            if key not in index:
                raise Error("entry point '%s' has no input '%s'; its inputs "
                            "are %s" % (name, key, names))
            if index[key] < len(args):
                raise Error("input '%s' of entry point '%s' is given twice, "
                            "in order and by name" % (key, name))
            values[index[key]] = value
        for i, (spec, value) in enumerate(zip(specs, values)):
            # A Python number for a scalar input (lr=0.05).
            if (spec.shape == () and spec.dtype != "bfloat16" and
                    isinstance(value, (int, float)) and
                    not isinstance(value, bool)):
                values[i] = numpy.array(value, dtype=spec.dtype)
        missing = [s.name for s, v in zip(specs, values)
                   if v is None and s.name not in self._optional[name]]
        if missing:
            raise Error("entry point '%s' takes inputs %s; missing %s"
                        % (name, names,
                           ", ".join("'%s'" % m for m in missing)))
        return name, [None if v is None else _prepare(v) for v in values]

    __call__ = run

    def regime_of(self, *args, entry=None, **inputs):
        """The size regime (an index into info()["regimes"]) that runs
        `entry` on these inputs, given as to run(); -1 when one plan runs
        every size (modelc --regimes, docs/dynamic.md)."""
        name, values = self._values(entry, "numpy", args, inputs)
        return self._core.regime_of(name, values)

    @property
    def compute_precision(self):
        """The lowest precision the model's ops compute in: "f32", "f16" or
        "bf16" (modelc --precision): what tolerances comparing its outputs
        needs."""
        return self._core.compute_precision()

    @property
    def trains(self):
        """Whether the model was built with modelc --train (its entry
        points write weights: train_step)."""
        return self._core.trains()

    def train_step(self, *args, **inputs):
        """One optimizer step (docs/training.md): runs the entry point
        train_step on a batch (the model's inputs and `target`, in order or
        by name) and returns the loss, computed before the update, as a
        float. The weights change in place. lr=R (a float) sets this step's
        learning rate, so that a schedule stays in the caller's loop;
        without it the step uses the rate given to modelc --lr."""
        if not self.trains:
            raise Error("model %s does not train: build it with modelc "
                        "--train" % self.path)
        return float(self.run(*args, entry="train_step", **inputs))

    def train_step_async(self, *args, **inputs):
        """train_step() started with run_async(): returns a
        modelc.PendingRun at once, whose wait() gives the loss as a float.
        Steps started this way run in order, each on the weights the one
        before wrote; start the next batch's step before waiting for this
        one's loss to keep the model busy. Wait for the last before
        save_weights, load_weights or state_dict."""
        if not self.trains:
            raise Error("model %s does not train: build it with modelc "
                        "--train" % self.path)
        return self.run_async(*args, entry="train_step", **inputs)._then(float)

    def save_weights(self, path):
        """Writes every weight (parameters, buffers, optimizer state) to a
        safetensors file under its PyTorch name."""
        self._core.save_weights(os.fspath(path))

    def load_weights(self, path):
        """Reads a save_weights file into the model's trained weights and
        optimizer state; checked whole first (modelc.Error: nothing
        changed)."""
        self._core.load_weights(os.fspath(path))

    def state_dict(self):
        """Every weight as a numpy array (a copy), by name: the parameters,
        buffers and optimizer state as they are now."""
        return {name: self._core.weight_copy(name)
                for name in self._core.weight_names()}

    def trace(self):
        """The runs so far of a model loaded with trace=True: one dict per
        slice (name, track, category "op"/"copy"/"run", run, start_us,
        duration_us, bytes, estimate_us or None), as modelc-run --trace
        records them (docs/runtime.md, "Traces")."""
        return self._core.trace_slices()

    def write_trace(self, path):
        """Writes the runs so far as Chrome trace-event JSON (Perfetto,
        chrome://tracing)."""
        self._core.write_trace(os.fspath(path))

    def clear_trace(self):
        """Forgets the runs recorded so far (a traced model keeps every run
        until then)."""
        self._core.clear_trace()

    def __repr__(self):
        entries = "; ".join(
            "%s(%s) -> (%s)" % (name, ", ".join(map(str, ins)),
                                ", ".join(map(str, outs)))
            for name, (ins, outs) in self._entries.items())
        return "<modelc.Model %r, plan %r: %s>" % (self.path, self.plan,
                                                    entries)


def _results(torch, results):
    """run()'s return value from the core's outputs."""
    if torch is not None:
        results = [_to_torch(torch, r) for r in results]
    return results[0] if len(results) == 1 else tuple(results)


class PendingRun:
    """A run started by Model.run_async or Model.train_step_async."""

    def __init__(self, core, convert):
        self._core = core
        self._convert = convert
        self._done = False

    def ready(self):
        """Whether the run has finished: wait() would not block."""
        return self._done or self._core.ready()

    def wait(self):
        """Blocks until the run has finished (without holding the GIL) and
        returns its outputs as run() does, or raises its modelc.Error.
        Once: a second call is a modelc.Error."""
        if self._done:
            raise Error("PendingRun.wait: the run's outputs were taken "
                        "already")
        self._done = True
        return self._convert(self._core.wait())

    def _then(self, convert):
        first = self._convert
        self._convert = lambda results: convert(first(results))
        return self
