#!/usr/bin/python3
"""Flips single bytes of a model.so and checks that each copy is refused.

    flip_bytes.py MODELC_RUN MODEL.so COUNT SEED

COUNT copies, each with one byte (at a fixed-seed random offset, plus the
first and the last byte) changed, are run with `MODELC_RUN copy
--random-inputs`: every run must exit with status 1 and a one-line
"modelc-run: error: ..." (no signal, no output computed). Prints a
summary of the errors seen.
"""
import collections
import os
import random
import subprocess
import sys

modelc_run, model, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(model, "rb").read()
rng = random.Random(seed)
offsets = [0, len(data) - 1] + [rng.randrange(len(data)) for _ in range(count - 2)]
kinds = collections.Counter()
failures = 0
copy = model + ".flipped.so"
for offset in offsets:
    changed = bytearray(data)
    changed[offset] ^= 1 << rng.randrange(8)
    with open(copy, "wb") as f:
        f.write(changed)
    run = subprocess.run([modelc_run, copy, "--random-inputs"],
                         capture_output=True, text=True)
    error = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
    if run.returncode != 1 or "error:" not in error:
        failures += 1
        print(f"byte {offset}: exit {run.returncode}: {error or run.stdout[:200]}")
        continue
    kinds["corrupt" if "is corrupt" in error else
          "no seal" if "does not end with the seal" in error else "other: " + error] += 1
os.remove(copy)
print(f"{len(offsets)} flipped copies, {failures} not refused")
for kind, n in sorted(kinds.items()):
    print(f"  {kind}: {n}")
sys.exit(1 if failures else 0)
