#!/usr/bin/python3
"""How much of a data-parallel step's all-reduce work the backward hides.

    overlap.py TRACE [--entry train_step] [--require-overlap] [--json]

TRACE is `modelc-run --trace` of a model built with `modelc --train
--data-parallel` (in-process replicas on sim or GPU devices), or rank 0's
trace of a `--distributed` CPU plan under mpirun (below). The gradient
buckets' all-reduce work is every slice named after a bucket
("gradient bucket 'K'"): the copies of a bucket to the host, the replicas'
sum there and the copies of the sum back. The backward is every slice on a
replica's compute track ("sim:N compute", "cuda:N compute") that is not
the optimizer's (ops named after an initializer, or graph.assign).

Per run of ENTRY (the host track's "run ENTRY" slices) it prints the
all-reduce busy time, the part of it during which some replica was
computing the backward (hidden), the share hidden, and the exposed time
(the longest time a replica's compute stream sits idle between its last
backward op and its last op: the optimizer waiting for the sums); then the share over all runs but the first
(a warm-up). On a machine with fewer cores than streams a slice also spans
the time its thread was preempted, which inflates "hidden": read it with
the exposed time.

A distributed CPU plan's trace (a "cpu comm" track): the all-reduce work
is the bucket sums on that track (the communication thread's MPI calls,
which include the wait for the other ranks), the backward every op on the
"cpu" track but the optimizer's and the starts and waits of the sums, and
the exposed time the step's waits for bucket sums (sched.all_reduce_wait).

--require-overlap exits 1 unless some bucket's all-reduce slice overlapped
a backward slice in some run: the schedule lets the sums run while the
replicas go on with the backward (tests/training/data-parallel.test).
"""
import argparse
import json
import re
import sys

BUCKET = re.compile(r"gradient bucket '(\d+)'")


def intervals_overlap(a0, a1, spans):
    """Total length of [a0, a1) covered by the union of `spans`."""
    covered, cursor = 0.0, a0
    for s0, s1 in spans:  # sorted by start
        if s1 <= cursor:
            continue
        if s0 >= a1:
            break
        lo, hi = max(s0, cursor), min(s1, a1)
        if hi > lo:
            covered += hi - lo
            cursor = hi
    return covered


def merge(spans):
    out = []
    for s0, s1 in sorted(spans):
        if out and s0 <= out[-1][1]:
            out[-1][1] = max(out[-1][1], s1)
        else:
            out.append([s0, s1])
    return out


def is_update(name):
    return "initializer '" in name or name.startswith("graph.assign")


def cpu_plan_run(inside, comm, run_us):
    """One run of a distributed CPU plan: the sums on the comm track, the
    backward on the "cpu" track, the exposed time the waits for buckets."""
    reduce = [s for s in inside if s[0] in comm and BUCKET.search(s[1])]
    compute = [s for s in inside if s[0] == "cpu"]
    backward = merge((s[2], s[3]) for s in compute
                     if not is_update(s[1])
                     and not s[1].startswith("sched.all_reduce_"))
    exposed = sum(s[3] - s[2] for s in compute
                  if s[1].startswith("sched.all_reduce_wait")
                  and BUCKET.search(s[1]))
    busy = sum(s[3] - s[2] for s in reduce)
    hidden = sum(intervals_overlap(s[2], s[3], backward) for s in reduce)
    buckets = len({BUCKET.search(s[1]).group(1) for s in reduce})
    return {"run_us": run_us, "buckets": buckets, "allreduce_us": busy,
            "hidden_us": hidden, "exposed_us": exposed}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("trace")
    p.add_argument("--entry", default="train_step")
    p.add_argument("--require-overlap", action="store_true")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    with open(a.trace) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    tracks = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            tracks[(e["pid"], e["tid"])] = e["args"]["name"]
    slices = []
    for e in events:
        if e.get("ph") == "X":
            slices.append((tracks.get((e["pid"], e["tid"]), ""), e["name"],
                           float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    runs = sorted((s[2], s[3]) for s in slices
                  if s[0] == "host" and s[1] == "run " + a.entry)
    if not runs:
        sys.exit(f"overlap.py: no 'run {a.entry}' slice in {a.trace}")
    comm = {s[0] for s in slices if s[0].endswith(" comm")}
    results = []
    for r0, r1 in runs:
        inside = [s for s in slices if s[2] >= r0 and s[3] <= r1]
        if comm:
            results.append(cpu_plan_run(inside, comm, r1 - r0))
            continue
        reduce = [s for s in inside if BUCKET.search(s[1])]
        backward = merge((s[2], s[3]) for s in inside
                         if re.match(r"(sim|cuda):\d+ compute$", s[0])
                         and "initializer '" not in s[1]
                         and not s[1].startswith("graph.assign"))
        # Exposed: per replica, the time its compute stream sits idle after
        # its last backward op, until its last op (the optimizer, waiting
        # for the sums); the longest of the replicas'.
        exposed = 0.0
        for track in {s[0] for s in inside
                      if re.match(r"(sim|cuda):\d+ compute$", s[0])}:
            ops = sorted((s for s in inside if s[0] == track),
                         key=lambda s: s[2])
            is_update = [("initializer '" in s[1]
                          or s[1].startswith("graph.assign")) for s in ops]
            last_backward = max((i for i, u in enumerate(is_update) if not u),
                                default=None)
            if last_backward is None or last_backward == len(ops) - 1:
                continue
            tail = ops[last_backward + 1:]
            busy_tail = sum(s[3] - s[2] for s in tail)
            exposed = max(exposed, tail[-1][3] - ops[last_backward][3] -
                          busy_tail)
        busy = sum(s[3] - s[2] for s in reduce)
        hidden = sum(intervals_overlap(s[2], s[3], backward) for s in reduce)
        buckets = len({BUCKET.search(s[1]).group(1) for s in reduce})
        results.append({"run_us": r1 - r0, "buckets": buckets,
                        "allreduce_us": busy, "hidden_us": hidden,
                        "exposed_us": exposed})
    steady = results[1:] or results
    busy = sum(r["allreduce_us"] for r in steady)
    hidden = sum(r["hidden_us"] for r in steady)
    share = hidden / busy if busy > 0 else 0.0
    exposed = sum(r["exposed_us"] for r in steady)
    not_exposed = max(0.0, 1 - exposed / busy) if busy > 0 else 0.0
    if a.json:
        print(json.dumps({"runs": results, "hidden_share": share,
                          "not_exposed_share": not_exposed}))
    else:
        for i, r in enumerate(results):
            print("run %d: %.0f us, %d buckets, all-reduce %.0f us, hidden "
                  "%.0f us (%.0f%%), exposed %.0f us" % (
                      i, r["run_us"], r["buckets"], r["allreduce_us"],
                      r["hidden_us"],
                      100 * r["hidden_us"] / r["allreduce_us"]
                      if r["allreduce_us"] else 0, r["exposed_us"]))
        print("hidden share (runs after the first): %.1f%% of the all-reduce "
              "slices overlap the backward; 1 - exposed / all-reduce: %.1f%%"
              % (100 * share, 100 * not_exposed))
    if not any(r["allreduce_us"] for r in results):
        sys.exit("overlap.py: no gradient bucket's all-reduce in the trace "
                 "(build with --train --data-parallel, or --distributed)")
    if a.require_overlap and not any(r["hidden_us"] > 0 for r in results):
        sys.exit("overlap.py: no all-reduce overlapped the backward in any run")


if __name__ == "__main__":
    main()
