#!/usr/bin/env python3
"""pipeline_torch.py - the peers' pipeline (common.py) with PyTorch eager
ops, written as a PyTorch user would: y = x * 4 + 3 (two kernels: mul, add;
a new tensor each from the caching allocator), and the out= form that
reuses two buffers (the closest to mox's launches). Multiply and add stay
separate operations, so results have the same bits as mox's.

    python3 bench/peers/pipeline_torch.py [--smoke] [--samples N] [--warmup N] [--out FILE]

Prints (and writes) JSON; exits 77 without PyTorch or a GPU.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    missing = common.need_numpy("torch", args.out)
    if missing is not None:
        return missing
    try:
        import torch
    except Exception as e:
        return common.skip("torch", str(e), args.out)
    if not torch.cuda.is_available():
        return common.skip("torch", "no CUDA device", args.out)
    dev = torch.device("cuda")
    doc = {"peer": "torch", "version": torch.__version__, "device": torch.cuda.get_device_name(0),
           "how": "eager ops; torch.cuda.synchronize() per run", "cases": []}
    for name, n, dispatches, reps in common.cases(args.smoke):
        src_host = common.source(n, 1300 + dispatches)
        want = common.expected(src_host, dispatches)
        src = torch.from_numpy(src_host).to(dev)
        for variant in ("torch-eager", "torch-eager-out"):
            t = [torch.empty(n, dtype=torch.float32, device=dev) for _ in range(2)]
            last = {}

            if variant == "torch-eager":
                def run_once():
                    v = src
                    for i in range(dispatches):
                        v = v * 5.0 + 7.0 if i % 2 else v * 4.0 + 3.0
                    last["v"] = v
            else:
                def run_once():
                    for i in range(dispatches):
                        inp = t[(i - 1) % 2] if i else src
                        out = t[i % 2]
                        torch.mul(inp, 5.0 if i % 2 else 4.0, out=out)
                        out.add_(7.0 if i % 2 else 3.0)
                    last["v"] = t[(dispatches - 1) % 2]

            samples = common.time_case(run_once, torch.cuda.synchronize, reps, args.samples, args.warmup)
            ok = common.same_bits(last["v"].cpu().numpy(), want)
            doc["cases"].append({"case": name, "variant": variant, "n": n, "dispatches": dispatches,
                                 "kernels_per_run": 2 * dispatches, "reps": reps, "unit": "us",
                                 "samples": samples, "stats": common.summary(samples),
                                 "verified": bool(ok)})
            del t, last
        del src
        torch.cuda.empty_cache()
    common.emit(doc, args.out)
    return 0 if all(c["verified"] for c in doc["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
