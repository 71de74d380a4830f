#!/usr/bin/python3
"""Checks that --recompute made training entry points' arenas smaller.

    compare_arenas.py KEEP.txt RECOMPUTE.txt REPORT.json ENTRY...

KEEP.txt and RECOMPUTE.txt are `modelc -v` outputs of the same model built
without and with --recompute. For each ENTRY, the arena of every plan must
be smaller with it, and REPORT.json (the placement report of the
--recompute build) must give the entry a `recompute` summary whose
estimated peak went down. Prints one line per entry; exits 1 otherwise.
"""
import json
import re
import sys


def arenas(path):
    found = {}
    for line in open(path):
        m = re.match(r"\s*plan '([^']+)', entry '([^']+)': arena (\d+) bytes", line)
        if m:
            found[(m.group(1), m.group(2))] = int(m.group(3))
    return found


def main():
    keep, recompute, report_path = sys.argv[1:4]
    entries = sys.argv[4:]
    before, after = arenas(keep), arenas(recompute)
    report = json.load(open(report_path))
    summaries = {}
    for target in report if isinstance(report, list) else [report]:
        for function in target["functions"]:
            if "recompute" in function:
                summaries[function["function"]] = function["recompute"]
    ok = True
    for entry in entries:
        plans = [plan for (plan, e) in before if e == entry]
        if not plans:
            print(f"{entry}: no arena in {keep}")
            ok = False
        for plan in plans:
            a, b = before[(plan, entry)], after.get((plan, entry))
            good = b is not None and b < a
            print(f"{entry} ({plan}): arena {a} -> {b} {'OK' if good else 'FAIL'}")
            ok &= good
        s = summaries.get(entry)
        good = (s is not None and s["ops"] > 0
                and s["peak_bytes_after"] < s["peak_bytes_before"])
        print(f"{entry}: report {s} {'OK' if good else 'FAIL'}")
        ok &= good
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
