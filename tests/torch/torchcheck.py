"""Shared harness of the PyTorch checks (check_ops.py, check_examples.py):
reads entry points and weights from an IR file, writes safetensors and .npy
files, compiles and runs models with modelc and modelc-run, and compares
their outputs with PyTorch's, one printed line per output.

Runs under Debian's /usr/bin/python3 with python3-torch and python3-numpy.
"""
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np

# The entry points of an IR file, as tests/lit.cfg.py's %{ir-entries} finds
# them: a `func.func @name(` at the start of a line.
ENTRY_RE = re.compile(r"^func\.func @([A-Za-z_][A-Za-z0-9_]*)\(", re.M)
WEIGHT_RE = re.compile(
    r'^graph\.weight @("[^"]+"|[A-Za-z_$.][A-Za-z0-9_$.]*) : tensor<([^>]*)>',
    re.M)

NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32,
                "i64": np.int64, "i1": np.bool_}
SAFETENSORS_DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
                      np.dtype(np.int32): "I32", np.dtype(np.int64): "I64",
                      np.dtype(np.bool_): "BOOL"}


def read_entries(ir_path):
    """The entry point names of an IR file, in order."""
    with open(ir_path) as f:
        return ENTRY_RE.findall(f.read())


def parse_tensor_type(text):
    """'6x8xf32' -> ([6, 8], 'f32'); 'f32' -> ([], 'f32')."""
    parts = text.split("x")
    return [int(d) for d in parts[:-1]], parts[-1]


def read_weights(ir_path):
    """The module's graph.weight declarations: {name: (shape, dtype)}."""
    with open(ir_path) as f:
        return {name.strip('"'): parse_tensor_type(type_text)
                for name, type_text in WEIGHT_RE.findall(f.read())}


def write_safetensors(path, tensors):
    """Writes {name: numpy array} as safetensors: an 8-byte little-endian
    header length, a JSON header (dtype, shape, data_offsets per tensor),
    then the raw little-endian data."""
    header, chunks, offset = {}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": SAFETENSORS_DTYPES[array.dtype],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)


class Tools:
    """modelc and modelc-run, and a scratch directory for their files."""

    def __init__(self, modelc, modelc_run, workdir):
        self.modelc, self.modelc_run, self.workdir = modelc, modelc_run, workdir
        os.makedirs(workdir, exist_ok=True)

    def path(self, name):
        return os.path.join(self.workdir, name)

    def compile(self, ir_path, so_name, flags):
        """Compiles ir_path into workdir/so_name; exits on a failure.
        Returns the model's path and modelc's output."""
        so = self.path(so_name)
        return so, run_tool([self.modelc, ir_path, *flags, "-o", so])

    def signatures(self, so):
        """{entry: ([(input name, shape, dtype)], [output names])} from
        modelc-run --info, in the model's order."""
        text = run_tool([self.modelc_run, so, "--info"])
        entries, current = {}, None
        for line in text.splitlines():
            m = re.match(r"entry '([^']+)'", line)
            if m:
                current = entries.setdefault(m.group(1), ([], []))
                continue
            m = re.match(r"\s+(input|output) '([^']+)': (\w+)\[([0-9,]*)\]",
                         line)
            if m and current is not None:
                kind, name, dtype, dims = m.groups()
                shape = [int(d) for d in dims.split(",") if d]
                if kind == "input":
                    current[0].append((name, shape, dtype))
                else:
                    current[1].append(name)
        return entries

    def run(self, so, entry, inputs, outputs, tag):
        """Runs one entry point on the given numpy inputs ({name: array});
        returns its outputs ({name: array}) for the listed output names."""
        args = [self.modelc_run, so, "--entry", entry]
        for name, array in inputs.items():
            npy = self.path(f"{tag}.{entry}.in.{name}.npy")
            np.save(npy, array)
            args += ["--input", f"{name}={npy}"]
        files = {}
        for name in outputs:
            files[name] = self.path(f"{tag}.{entry}.out.{name}.npy")
            args += ["--output", f"{name}={files[name]}"]
        run_tool(args)
        return {name: np.load(path) for name, path in files.items()}


def run_tool(args):
    """Runs a command and returns its standard output; on a failure prints
    the command and its output and exits with status 1."""
    result = subprocess.run(args, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        print(f"FAILED: {' '.join(args)} (exit status {result.returncode})")
        print(result.stdout)
        sys.exit(1)
    return result.stdout


class Checker:
    """Compares outputs and counts failures; prints one line per output."""

    def __init__(self):
        self.failures = 0

    def fail(self, message):
        print(f"MISMATCH: {message}")
        self.failures += 1

    def compare(self, label, got, want, rtol, atol, note=""):
        """Floats: every element within atol + rtol * |want| (the same test
        as modelc-run --compare-reference); integers and booleans: equal.
        `note` ends a mismatch's message (e.g. where the inputs are).
        Returns the largest absolute error (0 for exact comparisons)."""
        count = self.failures
        error = self._compare(label, got, want, rtol, atol)
        if note and self.failures > count:
            print(f"  {note}")
        return error

    def _compare(self, label, got, want, rtol, atol):
        if got.shape != want.shape:
            self.fail(f"{label}: shape {list(got.shape)}, PyTorch "
                      f"{list(want.shape)}")
            return None
        if got.dtype != want.dtype:
            self.fail(f"{label}: dtype {got.dtype}, PyTorch {want.dtype}")
            return None
        if not np.issubdtype(want.dtype, np.floating):
            wrong = np.argwhere(got != want)
            if len(wrong):
                at = tuple(int(i) for i in wrong[0])
                self.fail(f"{label}: {len(wrong)} of {want.size} elements "
                          f"differ (exact); first at {list(at)}: "
                          f"{got[at]} vs PyTorch {want[at]}")
            else:
                print(f"{label}: {want.dtype}{list(want.shape)} exact: OK")
            return 0.0
        got64, want64 = got.astype(np.float64), want.astype(np.float64)
        error = np.abs(got64 - want64)
        if not np.all(np.isfinite(got64) == np.isfinite(want64)):
            self.fail(f"{label}: non-finite values differ")
            return None
        error = np.where(np.isfinite(want64), error, 0.0)
        max_abs = float(error.max()) if error.size else 0.0
        nonzero = want64 != 0
        max_rel = float((error[nonzero] / np.abs(want64[nonzero])).max()) \
            if nonzero.any() else 0.0
        bad = error > atol + rtol * np.abs(want64)
        text = (f"{label}: {want.dtype}{list(want.shape)} max abs error "
                f"{max_abs:.3g}, max rel error {max_rel:.3g} "
                f"(rtol {rtol:g}, atol {atol:g})")
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            self.fail(f"{text}; {int(bad.sum())} elements out, first at "
                      f"{list(at)}: {got[at]} vs PyTorch {want[at]}")
        else:
            print(f"{text}: OK")
        return max_abs

    def finish(self):
        """Prints the summary and returns the exit status."""
        if self.failures:
            print(f"{self.failures} failure(s)")
            return 1
        print("all outputs agree with PyTorch")
        return 0
