#!/usr/bin/env python3
"""pipeline_cupy.py - the peers' pipeline (common.py) with CuPy RawKernel:
the same two stage kernels as mox's, compiled by NVRTC with --fmad=false
(mox's numeric flags), launched with the same 256-thread blocks.

    python3 bench/peers/pipeline_cupy.py [--smoke] [--samples N] [--warmup N] [--out FILE]

Prints (and writes) JSON; exits 77 without CuPy or a GPU.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SOURCE = r'''
extern "C" __global__ void stage_a(const float *input, float *output, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        output[i] = input[i] * 4.0f + 3.0f;
}
extern "C" __global__ void stage_b(const float *input, float *output, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        output[i] = input[i] * 5.0f + 7.0f;
}
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    missing = common.need_numpy("cupy", args.out)
    if missing is not None:
        return missing
    try:
        import cupy as cp
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # no package, no driver or no device
        return common.skip("cupy", str(e), args.out)
    if count < 1:
        return common.skip("cupy", "no CUDA device", args.out)
    np = common.np
    module = cp.RawModule(code=SOURCE, options=("--fmad=false", "--prec-div=true", "--prec-sqrt=true"))
    kernels = [module.get_function("stage_a"), module.get_function("stage_b")]
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    doc = {"peer": "cupy", "version": cp.__version__, "device": props["name"].decode(),
           "how": "RawModule (NVRTC --fmad=false), one launch per stage, stream.synchronize() per run",
           "cases": []}
    stream = cp.cuda.get_current_stream()
    for name, n, dispatches, reps in common.cases(args.smoke):
        src_host = common.source(n, 1300 + dispatches)
        src = cp.asarray(src_host)
        t = [cp.empty(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)]
        grid = ((n + 255) // 256,)
        nn = np.uint32(n)

        def run_once():
            for i in range(dispatches):
                inp = t[(i - 1) % 2] if i else src
                kernels[i % 2](grid, (256,), (inp, t[i % 2], nn))

        samples = common.time_case(run_once, stream.synchronize, reps, args.samples, args.warmup)
        got = cp.asnumpy(t[(dispatches - 1) % 2])
        ok = common.same_bits(got, common.expected(src_host, dispatches))
        doc["cases"].append({"case": name, "n": n, "dispatches": dispatches, "kernels_per_run": dispatches,
                             "reps": reps, "unit": "us", "samples": samples,
                             "stats": common.summary(samples), "verified": bool(ok)})
        del src, t
        cp.get_default_memory_pool().free_all_blocks()
    common.emit(doc, args.out)
    return 0 if all(c["verified"] for c in doc["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
