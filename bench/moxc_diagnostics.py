#!/usr/bin/env python3
"""moxc_diagnostics.py - how moxc's time grows with the number of error
lines it prints (its duplicate filter once compared every line with every
earlier one).

    python3 bench/moxc_diagnostics.py --moxc build/tools/moxc/moxc \
        [--counts 1000,4000,16000,65536] [--repeat 3] [--json OUT.json] [--plot OUT.png]

Each case is a generated kernel source: one kernel of N statements, each
converting through double, so `moxc inspect --emit abi` prints N distinct
error lines (checked). Prints a table (median of --repeat runs,
wall clock) and, with --json, writes every sample. --plot draws time
against N on log-log axes when matplotlib imports. Exits 1 when moxc does
not print the expected lines.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def source(n):
    lines = ["#include <mox/kernel.h>", "MOX_KERNEL void k(float *x) {"]
    lines += [f"    x[{i}] = (float)(double)x[{i}];" for i in range(n)]
    return "\n".join(lines + ["}"]) + "\n"


def run_case(moxc, include, n, repeat, tmp):
    path = os.path.join(tmp, f"errors_{n}.c")
    with open(path, "w") as f:
        f.write(source(n))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([moxc, "inspect", "--emit", "abi", "-I", include, path],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        samples.append(time.perf_counter() - start)
        errors = sum(1 for line in proc.stderr.splitlines() if ": error: " in line)
        if proc.returncode == 0 or errors != n:
            sys.exit(f"moxc printed {errors} error lines for {n} bad kernels (exit {proc.returncode})")
    return samples


def plot(cases, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    xs = [c["errors"] for c in cases]
    ys = [c["median_s"] for c in cases]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.loglog(xs, ys, "o-")
    ax.set_xlabel("error lines")
    ax.set_ylabel("moxc inspect wall time (s)")
    ax.set_title("moxc: time per number of diagnostics")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--moxc", required=True)
    ap.add_argument("--include", default=os.path.join(here, "..", "include"))
    ap.add_argument("--counts", default="1000,4000,16000,65536")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--plot")
    args = ap.parse_args()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(c) for c in args.counts.split(",")):
            samples = run_case(args.moxc, args.include, n, args.repeat, tmp)
            cases.append({"errors": n, "samples_s": samples,
                          "median_s": statistics.median(samples)})
    print(f"{'error lines':>12}  {'median s':>9}  {'us/line':>8}")
    for c in cases:
        print(f"{c['errors']:>12}  {c['median_s']:>9.3f}  {1e6 * c['median_s'] / c['errors']:>8.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "moxc_diagnostics", "moxc": args.moxc, "cases": cases}, f, indent=2)
    if args.plot:
        plot(cases, args.plot)


if __name__ == "__main__":
    main()
