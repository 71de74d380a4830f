#!/usr/bin/python3
"""Runs the ONNX backend node tests through modelc and modelc-run.

python3-onnx's own case generators (onnx.backend.test.case.node) write one
folder per case: model.onnx and test_data_set_0/{input,output}_N.pb. This
script generates them (Debian's numpy needs the removed aliases np.float,
np.int, np.bool, np.object back first), compiles each model for the CPU,
runs it on the case's inputs and compares every output with the expected
one (ONNX's backend-test tolerances: rtol 1e-3, atol 1e-7).

Each case ends as one of:
  pass         compiled, every output matches
  unsupported  modelc refused it with a "not supported" error
  fail         anything else: a mismatch, a crash, another error
A fail is the test's failure unless the case is listed in KNOWN_FAILURES
with the reason. The summary line gives the counts; --table writes the
per-op table docs/onnx.md shows.

    /usr/bin/python3 tests/onnx/node_tests.py --modelc build/bin/modelc \\
        --modelc-run build/bin/modelc-run --workdir /tmp/node-tests [-j 2]
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True

import numpy as np

for alias, real in (("float", float), ("int", int), ("bool", bool),
                    ("object", object)):
    if alias not in np.__dict__:
        setattr(np, alias, real)

import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-7

# Cases that compile but do not pass yet, with why (each a bug to fix or
# a difference to resolve; the test fails on any other failing case and on
# a listed case that passes, so this list stays true).
KNOWN_FAILURES = {
}


def generate(out):
    from onnx.backend.test.cmd_tools import main as cmd_main
    argv = sys.argv
    sys.argv = ["cmd_tools", "generate-data", "-o", out]
    try:
        cmd_main()
    finally:
        sys.argv = argv


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def run_case(case_dir, args):
    name = os.path.basename(case_dir)
    work = os.path.join(args.workdir, "run", name)
    os.makedirs(work, exist_ok=True)
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    op_types = sorted({n.op_type for n in model.graph.node})
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    outputs = [o.name for o in model.graph.output]
    data = os.path.join(case_dir, "test_data_set_0")
    # Sequences and optionals are not tensors (modelc refuses those models).
    tensors_only = all(v.type.HasField("tensor_type")
                       for v in list(model.graph.input) +
                       list(model.graph.output))
    arrays = ([load_tensor(os.path.join(data, "input_%d.pb" % i))
               for i in range(len(inputs))] if tensors_only else [])
    # .npy, which modelc-run reads and writes, has no bfloat16.
    bf16 = onnx.TensorProto.BFLOAT16
    if any(v.type.tensor_type.elem_type == bf16
           for v in list(model.graph.input) + list(model.graph.output)):
        return (name, op_types, "unsupported",
                "test harness: bf16 inputs/outputs (no bfloat16 in .npy)")
    so = os.path.join(work, "model.so")
    # The case's inputs fix the inputs' dynamic dimensions.
    shapes = []
    declared = {v.name: v for v in model.graph.input}
    for input_name, array in zip(inputs, arrays):
        dims = declared[input_name].type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            shapes += ["--input-shape", "%s=%s" % (
                input_name, "x".join(str(d) for d in array.shape))]
    build = subprocess.run(
        [args.modelc, os.path.join(case_dir, "model.onnx"), "--target=cpu",
         "-o", so] + shapes, capture_output=True, text=True)
    if build.returncode != 0:
        message = (build.stderr.strip().splitlines() or ["(no message)"])[0]
        if build.returncode == 1 and "not supported" in build.stderr:
            return name, op_types, "unsupported", message
        return name, op_types, "fail", "compile: " + message
    command = [args.modelc_run, so]
    for i, (input_name, array) in enumerate(zip(inputs, arrays)):
        path = os.path.join(work, "input_%d.npy" % i)
        np.save(path, array)
        command += ["--input", "%s=%s" % (input_name, path)]
    for i, output_name in enumerate(outputs):
        command += ["--output", "%s=%s" % (output_name,
                                            os.path.join(work, "out_%d.npy" % i))]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        message = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
        return name, op_types, "fail", "run: " + message
    for i in range(len(outputs)):
        want = load_tensor(os.path.join(data, "output_%d.pb" % i))
        got = np.load(os.path.join(work, "out_%d.npy" % i))
        if got.shape != want.shape:
            return (name, op_types, "fail", "output %d: shape %s, want %s"
                    % (i, got.shape, want.shape))
        if want.dtype.kind in "fc":
            ok = np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)
        else:
            ok = np.array_equal(got, want)
        if not ok:
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            return (name, op_types, "fail", "output %d: max abs error %.3g"
                    % (i, np.nanmax(diff)))
    return name, op_types, "pass", ""


def write_table(results, path):
    per_op = collections.OrderedDict()
    for name, ops, status, message in sorted(results):
        for op in ops:
            entry = per_op.setdefault(op, collections.Counter())
            entry[status] += 1
            entry["total"] += 1
    with open(path, "w") as f:
        f.write("| ONNX op | cases | pass | unsupported | fail |\n")
        f.write("| --- | --- | --- | --- | --- |\n")
        for op in sorted(per_op):
            c = per_op[op]
            f.write("| %s | %d | %d | %d | %d |\n" % (
                op, c["total"], c["pass"], c["unsupported"], c["fail"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--modelc", required=True)
    parser.add_argument("--modelc-run", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--filter", default="")
    parser.add_argument("--table", default="")
    args = parser.parse_args()
    data = os.path.join(args.workdir, "data")
    generate(data)
    cases = sorted(d for d in glob.glob(os.path.join(data, "node", "test_*"))
                   if re.search(args.filter, os.path.basename(d)))
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda c: run_case(c, args), cases))
    counts = collections.Counter()
    unexpected = []
    for name, ops, status, message in results:
        if status == "fail" and name in KNOWN_FAILURES:
            status = "known failure"
        elif status != "fail" and name in KNOWN_FAILURES:
            unexpected.append("%s: listed in KNOWN_FAILURES but %s" % (name, status))
        elif status == "fail":
            unexpected.append("%s (%s): %s" % (name, " ".join(ops), message))
        counts[status] += 1
        print("%-60s %-13s %s" % (name, status, message))
    if args.table:
        write_table(results, args.table)
    print("node tests: %d cases, %d pass, %d unsupported, %d known failures, "
          "%d unexpected" % (len(results), counts["pass"],
                             counts["unsupported"], counts["known failure"],
                             len(unexpected)))
    for line in unexpected:
        print("UNEXPECTED: " + line)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
