#!/usr/bin/env python3
"""merge.py - folds the peers' JSON (pipeline_cupy.py, pipeline_torch.py)
and bench/cuda_overhead's JSON into mox_bench's JSON, with the ratio
peer / mox of each pipeline case's median wall time (> 1: mox is faster),
and prints the comparison as a markdown table.

    python3 bench/peers/merge.py --runner mox.json [--peer cupy.json ...]
                                 [--cuda-overhead cuda_overhead.json] [--extra cpu.json ...]
                                 --out merged.json

--extra appends the cases of another mox_bench run of the same build (the
CPU suite, run as its own process) and records its facts under extra_runs.
A peer case is compared with the mox case of the same name only when both
ran the same n and number of dispatches.
"""
import argparse
import json
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"merge.py: {path}: {e}", file=sys.stderr)
        return None


def mox_cases(doc):
    out = {}
    for c in doc.get("cases", []):
        if c.get("suite") != "pipeline" or c.get("error") or not c.get("stats"):
            continue
        m = re.search(r"n=(\d+) dispatches=(\d+)", c.get("params", ""))
        if m:
            out[c["name"]] = (int(m.group(1)), int(m.group(2)), c["stats"]["median"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    ap.add_argument("--peer", action="append", default=[])
    ap.add_argument("--cuda-overhead")
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    doc = load(args.runner)
    if doc is None:
        return 1
    mox = mox_cases(doc)
    peers, skipped, rows = [], [], []
    for path in args.peer:
        p = load(path)
        if p is None:
            skipped.append({"file": path, "why": "unreadable"})
            continue
        if p.get("skipped"):
            skipped.append({"peer": p.get("peer"), "why": p["skipped"]})
            continue
        for c in p.get("cases", []):
            label = c.get("variant") or p.get("peer")
            entry = {"peer": label, "library": p.get("peer"), "version": p.get("version"),
                     "device": p.get("device"), "case": c["case"], "n": c["n"],
                     "dispatches": c["dispatches"], "kernels_per_run": c.get("kernels_per_run"),
                     "reps": c.get("reps"), "unit": c.get("unit", "us"), "samples": c["samples"],
                     "stats": c["stats"], "verified": c.get("verified"), "ratio_peer_over_mox": None}
            m = mox.get(c["case"])
            if m and m[0] == c["n"] and m[1] == c["dispatches"] and m[2] > 0:
                entry["ratio_peer_over_mox"] = c["stats"]["median"] / m[2]
            peers.append(entry)
            rows.append(entry)
    doc.setdefault("extra_runs", [])
    for path in args.extra:
        extra = load(path)
        if extra is None:
            doc["extra_runs"].append({"file": path, "error": "unreadable"})
            continue
        doc["cases"].extend(extra.get("cases", []))
        doc["extra_runs"].append({k: extra.get(k) for k in ("host", "device", "config", "build")})
    doc["peers"] = peers
    doc["peers_skipped"] = skipped
    if args.cuda_overhead:
        co = load(args.cuda_overhead)
        doc["cuda_overhead"] = co if co is not None else {"error": "unreadable"}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("| case | n | dispatches | mox median (us) | peer | peer median (us) | peer / mox | verified |")
    print("|---|---|---|---|---|---|---|---|")
    for e in rows:
        m = mox.get(e["case"])
        ratio = e["ratio_peer_over_mox"]
        mox_median = f"{m[2]:.4g}" if m else "-"
        ratio_text = f"{ratio:.3g}" if ratio is not None else "-"
        print(f"| {e['case']} | {e['n']} | {e['dispatches']} | {mox_median} | {e['peer']} | "
              f"{e['stats']['median']:.4g} | {ratio_text} | {e['verified']} |")
    for s in skipped:
        print(f"\nskipped: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
