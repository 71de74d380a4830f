#!/usr/bin/python3
"""Checks a trace modelc-run --trace wrote (Chrome's trace-event JSON).

    check_trace.py TRACE.json --runs N --tracks A,B,... --ops K [--copies C]

Each run must hold a "run" slice on the host track, K op slices and C copy
slices (bytes > 0, a GB/s figure), on the tracks named (and no others);
slices on one track must not overlap (a stream runs in order); every flow
start has its end, on a track of the trace. Prints a summary line.
"""
import argparse
import collections
import json
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("--runs", type=int, required=True)
parser.add_argument("--tracks", required=True)
parser.add_argument("--ops", type=int, required=True)
parser.add_argument("--copies", type=int, default=0)
args = parser.parse_args()


def fail(message):
    print("check_trace: FAILED: " + message)
    sys.exit(1)


with open(args.trace) as f:
    events = json.load(f)["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in events
         if e["ph"] == "M" and e["name"] == "thread_name"}
want = set(args.tracks.split(",")) | {"host"}
if set(names.values()) != want:
    fail("tracks %s, expected %s" % (sorted(names.values()), sorted(want)))

slices = [e for e in events if e["ph"] == "X"]
per_run = collections.defaultdict(collections.Counter)
for s in slices:
    if s["ts"] < 0 or s["dur"] < 0:
        fail("negative time in %s" % s)
    per_run[s["args"]["run"]][s["cat"]] += 1
    if s["cat"] == "run" and names[s["tid"]] != "host":
        fail("a run slice off the host track: %s" % s)
    if s["cat"] == "op" and not re.fullmatch(r"\w+\.\w+ \(line \d+\)",
                                              s["name"]):
        fail("an op slice not named after its op and line: %r" % s["name"])
    if s["cat"] == "copy" and (s["args"]["bytes"] <= 0
                               or "GB/s" not in s["args"]):
        fail("a copy without bytes or bandwidth: %s" % s)
if sorted(per_run) != list(range(args.runs)):
    fail("runs %s, expected %d" % (sorted(per_run), args.runs))
for run, counts in per_run.items():
    got = (counts["run"], counts["op"], counts["copy"])
    if got != (1, args.ops, args.copies):
        fail("run %d has %d run, %d op and %d copy slices, expected 1, %d, %d"
             % ((run,) + got + (args.ops, args.copies)))

# In order on each track: within a run, no two slices of a track overlap.
by_track = collections.defaultdict(list)
for s in slices:
    if s["cat"] != "run":
        by_track[(s["tid"], s["args"]["run"])].append(s)
for (tid, run), group in by_track.items():
    group.sort(key=lambda s: s["ts"])
    for a, b in zip(group, group[1:]):
        if a["ts"] + a["dur"] > b["ts"] + 0.002:  # printed to 1 ns
            fail("%r and %r overlap on %s" % (a["name"], b["name"], names[tid]))

starts = {e["id"]: e for e in events if e["ph"] == "s"}
ends = {e["id"]: e for e in events if e["ph"] == "f"}
if set(starts) != set(ends):
    fail("flows without both ends")
for i, start in starts.items():
    if start["tid"] not in names or ends[i]["tid"] not in names:
        fail("a flow on an unnamed track")
    if ends[i]["ts"] + 0.002 < start["ts"]:
        fail("a wait passed before its event was recorded: %s" % start)
print("check_trace: OK: %d runs, %d tracks, %d slices, %d flows"
      % (args.runs, len(names), len(slices), len(starts)))
