#!/usr/bin/env python3
"""event_sync_latency.py - how late does a blocking wait on a CUDA event
return, against a spin on cuEventQuery, for kernels of 20 us to 20 ms?
(docs/performance.md, "Sleeping waits"). Runs a one-thread spin kernel of
a given length, then waits for an event recorded after it, 3 ways:
  spin      cuEventQuery in a loop
  blocking  cuEventSynchronize on a CU_EVENT_BLOCKING_SYNC event
  default   cuEventSynchronize on a default event
and prints the median wall time of each, per kernel length. Needs cupy.

    python3 bench/experiments/event_sync_latency.py [--reps 30]
"""
import argparse
import statistics
import time

import cupy as cp

SRC = r'''
extern "C" __global__ void spin(unsigned long long cycles) {
    unsigned long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reps', type=int, default=30)
    args = ap.parse_args()
    kern = cp.RawKernel(SRC, 'spin')
    stream = cp.cuda.Stream(non_blocking=True)
    ev_block = cp.cuda.Event(block=True, disable_timing=True)
    ev_default = cp.cuda.Event(block=False, disable_timing=True)
    clock_khz = cp.cuda.runtime.getDeviceProperties(0)['clockRate']
    print(f"# SM clock {clock_khz / 1e3:.0f} MHz; median wall us over {args.reps} reps")
    print(f"{'kernel us':>10} {'spin':>10} {'blocking':>10} {'default':>10} {'blocking-spin':>14}")
    for us in (20, 100, 300, 1000, 3000, 10000, 20000):
        cycles = cp.uint64(int(us * clock_khz / 1e3))
        res = {}
        for how in ('spin', 'blocking', 'default'):
            ev = ev_default if how != 'blocking' else ev_block
            times = []
            for _ in range(args.reps + 2):
                t0 = time.perf_counter()
                with stream:
                    kern((1,), (1,), (cycles,))
                ev.record(stream)
                if how == 'spin':
                    while not ev.done:
                        pass
                else:
                    ev.synchronize()
                times.append((time.perf_counter() - t0) * 1e6)
            res[how] = statistics.median(times[2:])
        print(f"{us:>10} {res['spin']:>10.1f} {res['blocking']:>10.1f} {res['default']:>10.1f} "
              f"{res['blocking'] - res['spin']:>14.1f}")


if __name__ == '__main__':
    main()
