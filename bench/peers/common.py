"""common.py - what the peer scripts share: the pipeline cases (the same as
bench/runner_pipeline.c), the CPU result of a stage chain, the runner's
summary formulas, the timing loop and the JSON they print.

A case runs a chain of `dispatches` stage launches over n float32 values:
launch 0 is x*4+3 from the source into t0; launch i reads t[(i-1)%2] and
writes t[i%2], x*4+3 for even i and x*5+7 for odd i. One run is every
launch of the chain, then a device synchronisation; one sample is the mean
wall time of `reps` runs, as in mox_bench, so the two can be divided.
"""
import json
import sys
import time

try:
    import numpy as np
except ImportError:  # the scripts then skip (exit 77)
    np = None

# name, n on the GPU, dispatches, runs per sample
CASES = [
    ("pipeline-256", 256, 2, 200),
    ("pipeline-big", 1 << 28, 2, 5),
    ("repeated-64", 256, 64, 20),
]
SMOKE_BIG = 1 << 16


def cases(smoke):
    for name, n, dispatches, reps in CASES:
        if smoke:
            yield name, (SMOKE_BIG if n > 256 else n), dispatches, max(1, reps // 50)
        else:
            yield name, n, dispatches, reps


def source(n, seed):
    """Random floats of both signs, never zeros (they hide unwritten outputs)."""
    rng = np.random.default_rng(seed)
    mag = rng.uniform(1.0, 2.0, n).astype(np.float32) * np.float32(2.0) ** rng.integers(-8, 8, n).astype(np.float32)
    sign = np.where(rng.integers(0, 2, n) == 1, np.float32(-1), np.float32(1))
    return (mag * sign).astype(np.float32)


def expected(src, dispatches):
    """The chain on the CPU in float32, each operation rounded (no FMA)."""
    v = src.copy()
    with np.errstate(over="ignore"):  # long chains overflow to inf, as on the GPU
        for i in range(dispatches):
            if i % 2:
                v = (v * np.float32(5.0)).astype(np.float32) + np.float32(7.0)
            else:
                v = (v * np.float32(4.0)).astype(np.float32) + np.float32(3.0)
            v = v.astype(np.float32)
    return v


def same_bits(got, want):
    return np.array_equal(np.asarray(got, dtype=np.float32).view(np.uint32),
                          np.asarray(want, dtype=np.float32).view(np.uint32))


def summary(samples):
    s = sorted(samples)
    n = len(s)
    med = s[n // 2] if n % 2 else s[n // 2 - 1] + (s[n // 2] - s[n // 2 - 1]) / 2
    return {"min": s[0], "p10": s[(n - 1) // 10], "median": med,
            "p90": s[((n - 1) * 9 + 9) // 10], "max": s[-1], "mean": sum(s) / n, "n": n}


def time_case(run_once, sync, reps, samples, warmup):
    """Samples (us): mean wall time of `reps` runs, each run synchronised."""
    for _ in range(warmup):
        run_once()
        sync()
    out = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        for _ in range(reps):
            run_once()
            sync()
        out.append((time.perf_counter_ns() - t0) / 1e3 / reps)
    return out


def emit(doc, path):
    text = json.dumps(doc, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(text)


def need_numpy(peer, path):
    """None when numpy is there, else the skip exit code."""
    return None if np is not None else skip(peer, "numpy is not installed", path)


def skip(peer, why, path):
    emit({"peer": peer, "skipped": why, "cases": []}, path)
    print(f"{peer}: skipped: {why}", file=sys.stderr)
    return 77


def self_test():
    """Checks the CPU side of the peers against scalar float32 arithmetic
    (bench-peers-selftest). Exits 77 without numpy."""
    if np is None:
        print("common.py: numpy is not installed")
        return 77
    import struct

    def f32(x):
        return struct.unpack("f", struct.pack("f", x))[0]

    src = source(4096, 7)
    assert src.dtype == np.float32 and not (src == 0).any() and (src < 0).any() and (src > 0).any()
    for dispatches in (1, 2, 64):
        got = expected(src, dispatches)
        assert got.dtype == np.float32
        for k in range(0, 4096, 97):
            v = float(src[k])
            for i in range(dispatches):
                v = f32(f32(v * (5.0 if i % 2 else 4.0)) + (7.0 if i % 2 else 3.0))
            assert same_bits(np.float32(v), got[k]), (dispatches, k, v, got[k])
    assert summary([4, 1, 3, 2])["median"] == 2.5 and summary([4, 1, 3, 2])["p90"] == 4
    assert summary(list(range(1, 12)))["p10"] == 2 and summary(list(range(1, 12)))["p90"] == 10
    names = [c[0] for c in cases(False)]
    assert names == ["pipeline-256", "pipeline-big", "repeated-64"]
    print("common.py: self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if "--self-test" in sys.argv else 2)
