#!/usr/bin/python3
"""The cost model against this machine (issue 13 item 4): for each example
model, the makespan modelc's placement predicts for its CPU plan (the
`cpu` preset, and the target `modelc-run --calibrate` measured here) and
the median run `modelc-run --profile` measures. Prints a table and adds it,
dated, to bench/RESULTS.md.

    bench/calibration.py [--threads 2] [--runs 20] [--no-record]
"""
import argparse
import datetime
import json
import os
import tempfile

from results import ROOT, record, run

MODELS = ["mlp", "cnn", "transformer", "resnet18"]


def predicted_and_measured(model, target, work, threads, runs):
    so = os.path.join(work, f"{model}.{os.path.basename(target)}.so")
    report = so + ".report.json"
    run(["build/bin/modelc", f"examples/{model}.ir", f"--target={target}",
         "--random-weights=1", f"--placement-report={report}", "-o", so])
    predicted = sum(f["makespan_s"] for f in json.load(open(report))["functions"])
    profile = json.loads(run(["build/bin/modelc-run", so, "--random-inputs",
                              "--threads", str(threads), "--profile=json",
                              "--bench", str(runs)]))
    return predicted * 1e3, profile["run_median_us"] / 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="modelc-calibration-")
    machine = os.path.join(work, "machine.json")
    summary = run(["build/bin/modelc-run", f"--calibrate={machine}",
                   "--threads", str(args.threads)]).strip()
    summary = summary.split("; wrote ")[0].replace("calibrate: ", "")
    rows = []
    for model in MODELS:
        preset = predicted_and_measured(model, "cpu", work, args.threads,
                                        args.runs)
        calibrated = predicted_and_measured(model, machine, work,
                                            args.threads, args.runs)
        rows.append((model, preset, calibrated))
    date = datetime.date.today().isoformat()
    lines = [f"## {date} — predicted against measured makespan (cost model calibration)",
             "",
             "`bench/calibration.py`: each example's CPU plan placed with the "
             "`cpu` preset and with the target `modelc-run --calibrate` "
             f"measured on this machine ({summary}); predicted: the "
             "placement report's makespan; measured: the median of "
             f"`modelc-run --profile --bench {args.runs} --threads "
             f"{args.threads}`. Ratio: predicted / measured.",
             "",
             "| model | measured ms | preset: predicted ms | ratio | calibrated: predicted ms | ratio |",
             "| --- | --- | --- | --- | --- | --- |"]
    for model, (p1, m1), (p2, m2) in rows:
        lines.append(f"| {model} | {m1:.3f} | {p1:.3f} | {p1 / m1:.2f} | "
                     f"{p2:.3f} | {p2 / m2:.2f} |")
    worst = max(abs(p2 / m2 - 1) for _, _, (p2, m2) in rows)
    lines += ["", f"Calibrated: the largest error is {worst:.0%}."]
    record("\n".join(lines) + "\n", args.no_record)


if __name__ == "__main__":
    main()
