#!/usr/bin/python3
"""A/B of modelc builds or runtime settings on one model, in alternating runs.

    bench/ab.py --input x=IN.npy A.so[,ENV=V;...] B.so[,ENV=V;...] [...]

Each variant is a model.so, optionally followed by a comma and
semicolon-separated environment settings (`m.so,MODELC_CONV_IMPLEMENTATION=fastest`).
The variants run in turn, `--pairs` times, each `modelc-run --bench N`;
the figure is the median over the turns of each variant's time divided by
the first variant's in the same turn. A host whose speed drifts (a shared
VM: bench/RESULTS.md shows 1.4-1.6x swings within minutes) moves both
members of a turn together, so the per-turn ratio separates 1-3% effects
that the variants' own medians do not. Prints the CPU model and flags
with the figures; records nothing.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import cpu_flags  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+",
                        help="model.so[,NAME=VALUE;...] (the first is the base)")
    parser.add_argument("--input", action="append", default=[],
                        help="NAME=FILE.npy, as modelc-run takes it")
    parser.add_argument("--pairs", type=int, default=20,
                        help="turns of all variants (default 20)")
    parser.add_argument("--runs", type=int, default=40,
                        help="modelc-run --bench N per turn (default 40)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modelc-run", default="build/bin/modelc-run")
    args = parser.parse_args()
    if len(args.variants) < 2:
        parser.error("give at least two variants")

    def parse(variant):
        so, _, settings = variant.partition(",")
        env = dict(os.environ)
        for setting in filter(None, settings.split(";")):
            name, equals, value = setting.partition("=")
            if not equals:
                parser.error(f"'{setting}' in '{variant}' is not NAME=VALUE")
            env[name] = value
        return so, env

    variants = [parse(v) for v in args.variants]
    command = [args.modelc_run]
    for i in args.input:
        command += ["--input", i]
    if not args.input:
        command.append("--random-inputs")
    command += ["--threads", str(args.threads), "--bench", str(args.runs)]

    def timed(so, env):
        done = subprocess.run([command[0], so] + command[1:], env=env,
                              capture_output=True, text=True)
        found = re.search(r"median ([0-9.]+) ms", done.stdout)
        if done.returncode != 0 or not found:
            sys.exit(f"ab.py: {so} failed:\n{done.stdout}{done.stderr}")
        return float(found.group(1))

    times = [[] for _ in variants]
    for _ in range(args.pairs):
        for i, (so, env) in enumerate(variants):
            times[i].append(timed(so, env))
    cpu, flags = cpu_flags(("avx2", "avx512f", "avx512_bf16", "amx_tile"))
    print(f"{cpu} ({', '.join(flags) or 'no AVX2'}); {args.threads} threads, "
          f"{args.pairs} turns of modelc-run --bench {args.runs}")
    for variant, t in zip(args.variants, times):
        ratios = sorted(x / y for x, y in zip(t, times[0]))
        quarter = len(ratios) // 4
        print(f"{variant}: median {statistics.median(t):.3f} ms, min "
              f"{min(t):.3f} ms; against the first: median "
              f"{statistics.median(ratios):.3f} (quartiles "
              f"{ratios[quarter]:.3f}-{ratios[-1 - quarter]:.3f})")


if __name__ == "__main__":
    main()
