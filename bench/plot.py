#!/usr/bin/env python3
"""plot.py - turns mox_bench JSON (optionally merged with the peers and
cuda_overhead by bench/peers/merge.py) into PNG charts.

    python3 bench/plot.py [--out DIR] [--check] RESULT.json

Charts (each drawn only when the JSON has its cases):
  quality-throughput.png  GB/s (GFLOP/s for matmul) of ref / gen / gen-gated,
                          with the measured copy bandwidth as a line
  quality-ratio.png       generated / reference throughput, goal 0.98
  overhead.png            overhead cases, median with p10-p90 bars
  overhead-dispatch.png   per-dispatch time vs dispatches per sequence
  cpu-scaling.png         CPU suite: time vs threads, mox-cpu and plain C
  cpu-ratio.png           mox-cpu / plain C throughput ratio per workload
  pipeline-peers.png      the pipeline cases for mox and each peer
  workloads-time.png      workloads suite: mox wall time per run, per mode
  workloads-ratio.png     raw stream / mox per workload and mode (> 1: mox faster)
  workloads-kernel.png    original / port GPU time per run, same numerics and
                          nvcc defaults (> 1: the port is faster)

matplotlib draws them when it imports (the GPU machine has it); otherwise
gnuplot (pngcairo) does. --check also re-derives every case's summary from
its samples with the runner's formulas and fails on a mismatch. Exits 0,
1 on a bad file or a failed render, 77 when no renderer exists (after the
check passed).
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile


def summary(samples):
    """The runner's formulas: p10 = s[(n-1)//10], p90 = s[ceil((n-1)*9/10)],
    median the mean of the two middle values for even n."""
    s = sorted(samples)
    n = len(s)
    med = s[n // 2] if n % 2 else s[n // 2 - 1] + (s[n // 2] - s[n // 2 - 1]) / 2
    return {"min": s[0], "p10": s[(n - 1) // 10], "median": med,
            "p90": s[((n - 1) * 9 + 9) // 10], "max": s[-1], "mean": sum(s) / n}


def check(doc):
    problems = []
    if doc.get("schema") != 1 or doc.get("tool") != "mox_bench":
        problems.append("not a mox_bench schema-1 file")
    for key in ("build", "host", "device", "config", "cases"):
        if key not in doc:
            problems.append(f"missing '{key}'")
    for c in doc.get("cases", []):
        tag = f"{c.get('suite')}/{c.get('name')}/{c.get('variant')}"
        samples = [v for v in c.get("samples", []) if v is not None]
        st = c.get("stats")
        if c.get("error"):
            continue
        if not samples or st is None:
            problems.append(f"{tag}: no samples")
            continue
        want = summary(samples)
        for k, v in want.items():
            got = st.get(k)
            if got is None or abs(got - v) > 1e-6 * max(1.0, abs(v)):
                problems.append(f"{tag}: stats.{k} is {got}, samples give {v}")
        if st.get("n") != len(samples):
            problems.append(f"{tag}: stats.n is {st.get('n')}, {len(samples)} samples")
        if c.get("verified") is False:
            problems.append(f"{tag}: not verified")
    return problems


def median(c):
    st = c.get("stats") or {}
    return st.get("median")


def spread(c):
    st = c.get("stats") or {}
    return st.get("p10"), st.get("p90")


# ---- chart specifications (renderer-independent) ----

def bar(name, title, ylabel, categories, series, logy=False, hlines=(), errors=None):
    """series: [(label, [value or None per category])]; errors: same shape
    with (low, high) per value, or None."""
    return {"kind": "bar", "name": name, "title": title, "ylabel": ylabel,
            "categories": categories, "series": series, "logy": logy,
            "hlines": list(hlines), "errors": errors}


def line(name, title, xlabel, ylabel, series, logx=False, logy=False, hlines=()):
    """series: [(label, [(x, y)...])]"""
    return {"kind": "line", "name": name, "title": title, "xlabel": xlabel,
            "ylabel": ylabel, "series": series, "logx": logx, "logy": logy,
            "hlines": list(hlines)}


def derived(c, key):
    d = c.get("derived") or {}
    return d.get(key)


def charts(doc):
    cases = [c for c in doc.get("cases", []) if not c.get("error") and c.get("stats")]
    device = doc.get("device", {})
    out = []
    dev_name = device.get("name", "?")

    quality = [c for c in cases if c["suite"] == "quality"]
    if quality:
        names = list(dict.fromkeys(c["name"] for c in quality))
        variants = ["ref", "gen", "gen-gated"]

        def value(name, variant):
            for c in quality:
                if c["name"] == name and c["variant"] == variant:
                    return derived(c, "gflops") if name.startswith("matmul") else derived(c, "gbps")
            return None
        series = [(v, [value(n, v) for n in names]) for v in variants]
        hl = []
        if device.get("copy_gbps"):
            hl.append((device["copy_gbps"], "copy bandwidth (GB/s)"))
        out.append(bar("quality-throughput", f"Kernel throughput on {dev_name} "
                       "(GB/s; matmul in GFLOP/s)", "GB/s or GFLOP/s", names, series,
                       logy=True, hlines=hl))

        def ratio(name, variant):
            for c in quality:
                if c["name"] == name and c["variant"] == variant:
                    return derived(c, "ratio_vs_baseline")
            return None
        series = [(v, [ratio(n, v) for n in names]) for v in ("gen", "gen-gated")]
        out.append(bar("quality-ratio", "Generated / hand-written throughput (goal >= 0.98)",
                       "ratio", names, series, hlines=[(0.98, "goal 0.98"), (1.0, "parity")]))

    over = [c for c in cases if c["suite"] == "overhead" and c["unit"] in ("us", "ms")]
    if over:
        cats, vals, errs = [], [], []
        for c in over:
            scale = 1000.0 if c["unit"] == "ms" else 1.0
            lo, hi = spread(c)
            cats.append(c["name"])
            vals.append(median(c) * scale)
            errs.append((lo * scale, hi * scale))
        out.append(bar("overhead", f"Runtime overhead on {dev_name} (median, p10-p90)",
                       "microseconds", cats, [("mox", vals)], logy=True, errors=[errs]))
        pts = []
        for c in over:
            if c["name"].startswith("dispatch-seq-") and c.get("per"):
                pts.append((c["per"], median(c) / c["per"]))
        if pts:
            out.append(line("overhead-dispatch", "Per-dispatch cost of one sequence, waited",
                            "dispatches per sequence", "us per dispatch",
                            [("mox", sorted(pts))], logx=True))

    cpu = [c for c in cases if c["suite"] == "cpu"]
    if cpu:
        names = list(dict.fromkeys(c["name"] for c in cpu))
        series = []
        for n in names:
            for v in dict.fromkeys(c["variant"] for c in cpu):
                pts = sorted((c["threads"], median(c)) for c in cpu
                             if c["name"] == n and c["variant"] == v)
                if pts:
                    series.append((f"{n} {v}", pts))
        out.append(line("cpu-scaling", "CPU suite: time per run vs threads", "threads",
                        "microseconds (median)", series, logx=True, logy=True))
        threads = sorted({c["threads"] for c in cpu})
        rseries = []
        for t in threads:
            vals = []
            for n in names:
                r = [derived(c, "ratio_vs_baseline") for c in cpu
                     if c["name"] == n and c["threads"] == t and c["variant"] == "mox-cpu"]
                vals.append(r[0] if r else None)
            rseries.append((f"{t} threads", vals))
        out.append(bar("cpu-ratio", "mox CPU backend / plain C throughput (1 = parity)",
                       "ratio", names, rseries, logy=True, hlines=[(1.0, "parity")]))

    out += workload_charts(cases, dev_name)

    pipe = [c for c in cases if c["suite"] == "pipeline"]
    peers = doc.get("peers", [])
    if pipe:
        names = [c["name"] for c in pipe]
        series = [("mox", [median(c) for c in pipe])]
        for peer in dict.fromkeys(p["peer"] for p in peers):
            vals = []
            for n in names:
                m = [p["stats"]["median"] for p in peers
                     if p["peer"] == peer and p["case"] == n and p.get("stats")]
                vals.append(m[0] if m else None)
            series.append((peer, vals))
        out.append(bar("pipeline-peers", "Two-stage pipeline x*4+3, x*5+7: wall time per run "
                       "(lower is better)", "microseconds (median)", names, series, logy=True))
    return out


def workload_charts(cases, dev_name):
    """The workloads suite: cases named <workload>.<mode>, variants mox,
    raw-gen, raw-orig; workloads-kernel cases port, orig, orig-fast."""
    work = [c for c in cases if c["suite"] == "workloads" and "." in c["name"]]
    out = []
    if not work:
        return out
    names = list(dict.fromkeys(c["name"].rsplit(".", 1)[0] for c in work))
    modes = ["single", "pipelined", "ops"]

    def med(name, variant, suite="workloads"):
        for c in cases:
            if c["suite"] == suite and c["name"] == name and c["variant"] == variant:
                m = median(c)
                return m / (c.get("per") or 1) if suite == "workloads" else m
        return None

    def ratio(a, b):
        return a / b if a is not None and b else None

    series = [(m, [med(f"{n}.{m}", "mox") for n in names]) for m in modes]
    out.append(bar("workloads-time", f"Workloads through mox on {dev_name}: wall time per run",
                   "microseconds per run (median)", names, series, logy=True))
    series = []
    for m in modes:
        for raw in ("raw-gen", "raw-orig"):
            vals = [ratio(med(f"{n}.{m}", raw), med(f"{n}.{m}", "mox")) for n in names]
            if any(v is not None for v in vals):
                series.append((f"{m} {raw}/mox", vals))
    if series:
        out.append(bar("workloads-ratio", "Raw CUDA stream / mox wall time (> 1: mox is faster)",
                       "ratio", names, series, hlines=[(1.0, "parity"), (1.05, "goal 1.05")]))
    ports = [n for n in names if med(n, "port", "workloads-kernel") is not None]
    if ports:
        series = [(f"{v}/port", [ratio(med(n, v, "workloads-kernel"), med(n, "port", "workloads-kernel"))
                                 for n in ports]) for v in ("orig", "orig-fast")]
        out.append(bar("workloads-kernel", "Original / port GPU time per run (> 1: port is faster)",
                       "ratio", ports, series, hlines=[(0.98, "goal 0.98"), (1.0, "parity")]))
    return out


# ---- renderers ----

def render_matplotlib(spec, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(11, 6))
    if spec["kind"] == "bar":
        cats, series = spec["categories"], spec["series"]
        width = 0.8 / max(1, len(series))
        for i, (label, vals) in enumerate(series):
            xs = [k + (i - (len(series) - 1) / 2) * width for k in range(len(cats))]
            ys = [v if v is not None else float("nan") for v in vals]
            yerr = None
            if spec["errors"]:
                errs = spec["errors"][i]
                yerr = [[max(0.0, y - lo) for y, (lo, hi) in zip(ys, errs)],
                        [max(0.0, hi - y) for y, (lo, hi) in zip(ys, errs)]]
            ax.bar(xs, ys, width, label=label, yerr=yerr, capsize=3)
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats, rotation=30, ha="right")
    else:
        for label, pts in spec["series"]:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xlabel(spec["xlabel"])
        if spec["logx"]:
            ax.set_xscale("log", base=2)
    for y, label in spec["hlines"]:
        ax.axhline(y, linestyle="--", color="gray", linewidth=1)
        ax.annotate(label, (0.01, y), xycoords=("axes fraction", "data"), fontsize=8,
                    color="gray", va="bottom")
    if spec["logy"]:
        ax.set_yscale("log")
    ax.set_ylabel(spec["ylabel"])
    ax.set_title(spec["title"])
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def gp_quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_gnuplot(spec, path, gnuplot):
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data.dat")
        lines = [
            f"set terminal pngcairo size 1100,620 noenhanced font ',9'",
            f"set output {gp_quote(path)}",
            f"set title {gp_quote(spec['title'])}",
            f"set ylabel {gp_quote(spec['ylabel'])}",
            "set grid ytics",
            "set key outside right top",
        ]
        if spec["logy"]:
            lines.append("set logscale y")
        for y, label in spec["hlines"]:
            lines.append(f"set arrow from graph 0, first {y} to graph 1, first {y} nohead dt 2 lc 'gray'")
            lines.append(f"set label {gp_quote(label)} at graph 0.01, first {y} offset 0,0.5 tc 'gray'")
        if spec["kind"] == "bar":
            with open(data, "w") as f:
                for k, cat in enumerate(spec["categories"]):
                    vals = []
                    for label, v in spec["series"]:
                        x = v[k]
                        ok = x is not None and not (isinstance(x, float) and math.isnan(x)) \
                            and (x > 0 or not spec["logy"])
                        vals.append(repr(x) if ok else "?")
                    f.write(gp_quote(cat) + " " + " ".join(vals) + "\n")
            lines += ["set style data histogram", "set style histogram cluster gap 1",
                      "set style fill solid 0.8 border -1", "set xtics rotate by -30",
                      "set datafile missing '?'"]
            plots = []
            for i, (label, _) in enumerate(spec["series"]):
                using = f"{i + 2}:xtic(1)" if i == 0 else f"{i + 2}"
                plots.append(f"{gp_quote(data) if i == 0 else chr(39) * 2} using {using} "
                             f"title {gp_quote(label)}")
            lines.append("plot " + ", ".join(plots))
        else:
            if spec["logx"]:
                lines.append("set logscale x 2")
            lines.append(f"set xlabel {gp_quote(spec['xlabel'])}")
            with open(data, "w") as f:
                for label, pts in spec["series"]:
                    for x, y in pts:
                        f.write(f"{x} {y}\n")
                    f.write("\n\n")
            plots = [f"{gp_quote(data)} index {i} using 1:2 with linespoints title {gp_quote(label)}"
                     for i, (label, _) in enumerate(spec["series"])]
            lines.append("plot " + ", ".join(plots))
        script = os.path.join(tmp, "plot.gp")
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run([gnuplot, script], capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(path):
            raise RuntimeError(f"gnuplot failed for {spec['name']}: {r.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json")
    ap.add_argument("--out", default=None, help="directory for the PNGs (default: beside the JSON)")
    ap.add_argument("--check", action="store_true", help="re-derive every summary; fail on mismatch")
    args = ap.parse_args()
    with open(args.json) as f:
        doc = json.load(f)
    if args.check:
        problems = check(doc)
        for p in problems:
            print(f"plot.py: {p}", file=sys.stderr)
        if problems:
            return 1
        print(f"plot.py: {len(doc['cases'])} cases check out")
    out = args.out or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(out, exist_ok=True)
    try:
        import matplotlib  # noqa: F401
        renderer = "matplotlib"
    except ImportError:
        renderer = shutil.which("gnuplot")
    if not renderer:
        print("plot.py: neither matplotlib nor gnuplot is available; no charts drawn")
        return 77
    status = 0
    for spec in charts(doc):
        path = os.path.join(out, spec["name"] + ".png")
        try:
            if renderer == "matplotlib":
                render_matplotlib(spec, path)
            else:
                render_gnuplot(spec, path, renderer)
            print(f"plot.py: wrote {path}")
        except Exception as e:  # one bad chart must not cost the others
            print(f"plot.py: {spec['name']}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
