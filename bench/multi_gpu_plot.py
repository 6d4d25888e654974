#!/usr/bin/env python3
"""multi_gpu_plot.py - charts of the two-GPU benchmark (bench/multi_gpu.c).

    python3 bench/multi_gpu_plot.py [--out DIR] [--check] RESULT.json

Checks the JSON's shape, then draws with matplotlib (the GPU machine has
it): multi-gpu-copies.png (GB/s per copy size: cuMemcpyPeerAsync alone,
mox, mox's gated copy, with the NVLink figure nvidia-smi reported as a
line) and multi-gpu-pipeline.png (elements per second on one GPU and on
two, per amount of arithmetic). --check only checks. Exits 0, 1 on a bad
file, 77 when matplotlib is missing (after the check passed).
"""
import argparse
import json
import os
import sys

COPY_KEYS = ("bytes", "from", "to", "raw_device_gbps", "raw_wall_gbps", "mox_gbps",
             "mox_gated_gbps", "mox_after_writer_gbps")
PIPE_KEYS = ("elements", "chunks", "iters", "one_gpu_elements_per_s",
             "two_gpu_elements_per_s", "ratio")


def check(doc):
    if doc.get("benchmark") != "multi_gpu":
        raise ValueError("not a multi_gpu result")
    for key, want in (("copies", COPY_KEYS), ("pipeline", PIPE_KEYS)):
        rows = doc.get(key)
        if not isinstance(rows, list) or not rows:
            raise ValueError("no %s" % key)
        for row in rows:
            missing = [k for k in want if not isinstance(row.get(k), (int, float))]
            if missing:
                raise ValueError("%s row lacks %s" % (key, ", ".join(missing)))


def draw(doc, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for frm in (0, 1):
        rows = [r for r in doc["copies"] if r["from"] == frm]
        mib = [r["bytes"] / 2**20 for r in rows]
        for key, label in (("raw_device_gbps", "cuMemcpyPeerAsync"), ("mox_gbps", "mox copy"),
                           ("mox_gated_gbps", "mox gated copy")):
            ax.plot(mib, [r[key] for r in rows], marker="o",
                    label="%s %d->%d" % (label, frm, 1 - frm))
    if doc.get("nvlink_gbps_per_direction"):
        ax.axhline(doc["nvlink_gbps_per_direction"], linestyle="--", color="gray",
                   label="NVLink (nvidia-smi)")
    ax.set_xscale("log")
    ax.set_xlabel("copy size (MiB)")
    ax.set_ylabel("GB/s")
    ax.set_title("peer copies: %s" % doc.get("peer_link", ""))
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "multi-gpu-copies.png"), dpi=120)

    fig, ax = plt.subplots(figsize=(7, 4))
    rows = doc["pipeline"]
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], [r["one_gpu_elements_per_s"] for r in rows], 0.4, label="one GPU")
    ax.bar([i + 0.2 for i in x], [r["two_gpu_elements_per_s"] for r in rows], 0.4, label="two GPUs")
    ax.set_xticks(list(x))
    ax.set_xticklabels(["%d iters" % r["iters"] for r in rows])
    ax.set_ylabel("elements / s")
    ax.set_title("two-stage pipeline, %d elements" % rows[0]["elements"])
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "multi-gpu-pipeline.png"), dpi=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("result")
    args = ap.parse_args()
    try:
        with open(args.result) as f:
            doc = json.load(f)
        check(doc)
    except (OSError, ValueError) as e:
        print("multi_gpu_plot: %s: %s" % (args.result, e), file=sys.stderr)
        return 1
    if args.check:
        print("multi_gpu_plot: %s is a well-formed multi_gpu result" % args.result)
        return 0
    try:
        draw(doc, args.out)
    except ImportError:
        print("multi_gpu_plot: matplotlib is not installed: no charts")
        return 77
    print("multi_gpu_plot: charts in %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
