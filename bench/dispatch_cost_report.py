#!/usr/bin/env python3
"""dispatch_cost_report.py - host instructions per dispatch, from two
callgrind runs of bench/dispatch_cost (docs/performance.md, "Runtime
overhead").

    python3 bench/dispatch_cost_report.py BUILD [--mode pipe] [--backend cuda]
            [--counts 2000,4000] [--keep DIR]

Runs `valgrind --tool=callgrind --separate-threads=yes BUILD/bench/dispatch_cost
MODE COUNT` for both counts (on the simulated driver for --backend cuda, with
MOX_CUDA_SPIN_US=0 and MOX_WAIT_SPIN_US=0 so no spin loop is counted) and
prints, per extra dispatch:
  submitting  the program's thread, less the parker's wait and completions
  completion  mox__cuda_group_finish (CUDA) or mox__execution_complete (CPU),
              inclusive, on whichever thread ran it (the program's own when
              it waited on its launch)
  driver      the part of both that is the stand-in driver's own API calls
              (functions cu* of libsimcuda.so, inclusive): not mox's cost
  mox         submitting + completion - driver
Exits 77 without valgrind or callgrind_annotate, 1 when a run fails.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

LINE = re.compile(r'\s*([\d,]+)\s+\(.*?\)\s+(\S+?):(\S+)(?:\s+\[(.*)\])?')
TOTAL = re.compile(r'\s*([\d,]+)\s+\(.*?\)\s+PROGRAM TOTALS')


def annotate(path):
    """{function: inclusive count}, {function: object}, and the thread's total."""
    # From the root: run where the sources are, callgrind_annotate lists a
    # function twice (its file found relative to the working directory, and
    # as recorded), which doubled the figures. No source annotation either.
    out = subprocess.run(['callgrind_annotate', '--threshold=100', '--inclusive=yes', '--auto=no',
                          os.path.abspath(path)],
                         capture_output=True, text=True, check=True, cwd='/').stdout
    counts, objects, total = {}, {}, 0
    for line in out.splitlines():
        m = TOTAL.match(line)
        if m:
            total = int(m.group(1).replace(',', ''))
            continue
        m = LINE.match(line)
        if m:
            fn = m.group(3)
            counts[fn] = counts.get(fn, 0) + int(m.group(1).replace(',', ''))
            objects[fn] = m.group(4) or ''
    return counts, objects, total


def driver_share(counts, objects):
    return sum(v for fn, v in counts.items()
               if fn.startswith('cu') and 'libsimcuda' in objects.get(fn, ''))


def summary(prefix, completion_fn):
    files = sorted(glob.glob(prefix + '-*'))
    main = [f for f in files if f.endswith('-01')]
    if not main:
        raise RuntimeError('no callgrind output for the main thread under ' + prefix)
    counts, objects, total = annotate(main[0])
    # A waiting program thread may complete its own launch (CUDA: inline,
    # or blocked on its event): that part is completion, not submitting.
    completion = counts.get(completion_fn, 0)
    submitting = total - counts.get('mox__parker_park', 0) - completion
    driver = driver_share(counts, objects)
    for f in files:
        if f == main[0]:
            continue
        c, o, _ = annotate(f)
        if completion_fn in c:
            completion += c[completion_fn]
            driver += driver_share(c, o)
    return submitting, completion, driver


def run(build, mode, count, backend, prefix):
    env = dict(os.environ, MOX_BACKEND=backend, MOX_CUDA_SPIN_US='0', MOX_WAIT_SPIN_US='0')
    if backend == 'cuda':
        env['MOX_CUDA_LIBRARY'] = os.path.join(build, 'tests', 'cuda', 'libsimcuda.so')
    cmd = ['valgrind', '--tool=callgrind', '--separate-threads=yes',
           '--callgrind-out-file=' + prefix, os.path.join(build, 'bench', 'dispatch_cost'), mode, str(count)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-2000:])
        raise RuntimeError('dispatch_cost %s %d failed (exit %d)' % (mode, count, r.returncode))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--mode', default='pipe', choices=['pipe', 'rt', 'seq1', 'seq64', 'fill', 'args16'])
    ap.add_argument('--backend', default='cuda', choices=['cuda', 'cpu'])
    ap.add_argument('--counts', default=None, help='two counts, e.g. 2000,4000 (args16: 200,400)')
    ap.add_argument('--keep', default=None, help='keep the callgrind files in this folder')
    a = ap.parse_args()
    if not shutil.which('valgrind') or not shutil.which('callgrind_annotate'):
        print('skipped: valgrind (callgrind) is not installed')
        return 77
    lo, hi = (int(x) for x in (a.counts or {'args16': '200,400', 'seq64': '100,200'}.get(a.mode, '2000,4000')).split(','))
    per = {'pipe': 2, 'rt': 1, 'seq1': 1, 'seq64': 64, 'fill': 1, 'args16': 16}[a.mode]
    extra = (hi - lo) * per
    comp = 'mox__cuda_group_finish' if a.backend == 'cuda' else 'mox__execution_complete'
    work = a.keep or tempfile.mkdtemp(prefix='dispatch-cost-')
    os.makedirs(work, exist_ok=True)
    try:
        got = []
        for n in (lo, hi):
            prefix = os.path.join(work, '%s.%s.%d' % (a.backend, a.mode, n))
            for f in glob.glob(prefix + '-*'):
                os.remove(f)
            run(a.build, a.mode, n, a.backend, prefix)
            got.append(summary(prefix, comp))
        (s0, c0, d0), (s1, c1, d1) = got
        s, c, d = (s1 - s0) / extra, (c1 - c0) / extra, (d1 - d0) / extra
        # A dispatch costs the submitting thread at least a few hundred
        # instructions and its completion something: anything else means the
        # runs or their parsing went wrong.
        if s < 100 or c <= 0 or d < 0 or d > s + c:
            raise RuntimeError('implausible figures (submitting %.0f, completion %.0f, driver %.0f): '
                               'check the callgrind files (--keep DIR)' % (s, c, d))
        print('%s %s: per dispatch (%d extra): submitting %.0f  completion %.0f  sum %.0f  '
              'driver %.0f  mox %.0f' % (a.backend, a.mode, extra, s, c, s + c, d, s + c - d))
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print('dispatch_cost_report: %s' % e, file=sys.stderr)
        return 1
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
