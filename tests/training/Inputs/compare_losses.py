#!/usr/bin/python3
"""Compares the losses a compiled training run printed with PyTorch's.

    compare_losses.py ACTUAL.txt EXPECTED.txt [--rtol 1e-4]

Reads the lines "step K loss L" of both files (any other line, indented
ones included, is ignored).
The step numbers must be the same, in the same order, and each loss within
|a - e| <= 1e-6 + rtol * |e|. Prints one line per step; exits 1 on a
mismatch or a different number of steps.
"""
import argparse
import re
import sys

LINE = re.compile(r"step (\d+) loss (\S+)")
ATOL = 1e-6


def read_losses(path):
    steps = []
    with open(path) as f:
        for line in f:
            m = LINE.fullmatch(line.rstrip())
            if not m:
                continue
            try:
                steps.append((int(m.group(1)), float(m.group(2))))
            except ValueError:
                continue
    return steps


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("actual")
    p.add_argument("expected")
    p.add_argument("--rtol", type=float, default=1e-4)
    a = p.parse_args()
    actual = read_losses(a.actual)
    expected = read_losses(a.expected)

    bad = 0
    for (ka, la), (ke, le) in zip(actual, expected):
        if ka != ke:
            print(f"step {ka} != expected step {ke} FAIL")
            bad += 1
            continue
        ok = abs(la - le) <= ATOL + a.rtol * abs(le)  # NaN fails
        print(f"step {ke} loss {la:.9g} expected {le:.9g} {'OK' if ok else 'FAIL'}")
        bad += not ok
    if len(actual) != len(expected) or not expected:
        print(f"{len(actual)} steps in {a.actual}, {len(expected)} in {a.expected} FAIL")
        bad += 1
    print("OK" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
