#!/usr/bin/env python3
"""Profiler overhead on a model (the issue asks ResNet-18 from
scripts/gen_models.py):

  off: `vinci bench` of this build against a build without the profiler's
       block hook (--base, e.g. the previous commit built elsewhere), rounds
       interleaved, median of the per-round minimum latencies;
  on:  `vinci profile` (which alternates single unprofiled and profiled runs
       in one process and prints the median run of each and the median of
       the pairs' ratios), repeated, median of both figures.

Usage: measure_overhead.py MODEL --vinci build/vinci [--base other/vinci]
       [--threads 2] [--iters 10] [--rounds 5]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile


def bench(vinci, model, threads, iters):
    env = dict(os.environ, VINCI_NUM_THREADS=str(threads))
    out = subprocess.run([vinci, "bench", model, "--threads", "1", "--iters", str(iters)],
                         env=env, capture_output=True, text=True, check=True).stdout
    # The minimum: on a shared, loaded machine the median measures the neighbours.
    return float(re.search(r"latency: median [\d.]+ ms, min ([\d.]+) ms", out).group(1))


def profile(vinci, model, threads, iters):
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([vinci, "profile", model, "--threads", str(threads), "--iters",
                              str(iters), "--out", d, "--peaks", "100,10"],
                             capture_output=True, text=True, check=True).stdout
    m = re.search(r"overhead: ([\d.]+) ms/run off, ([\d.]+) ms/run on .*paired ratio "
                  r"([-+\d.]+)%", out)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--vinci", default="build/vinci")
    ap.add_argument("--base")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    if a.base:
        new, base = [], []
        for _ in range(a.rounds):
            base.append(bench(a.base, a.model, a.threads, a.iters))
            new.append(bench(a.vinci, a.model, a.threads, a.iters))
        mb, mn = statistics.median(base), statistics.median(new)
        print(f"off: base {mb:.3f} ms, this build {mn:.3f} ms ({100 * (mn - mb) / mb:+.1f}%); "
              f"rounds base {base}, new {new}")
    runs = [profile(a.vinci, a.model, a.threads, a.iters) for _ in range(a.rounds)]
    over = [100 * (on - off) / off for off, on, _ in runs]
    paired = [r for _, _, r in runs]
    print(f"on: median overhead {statistics.median(over):+.1f}% "
          f"(rounds: {', '.join(f'{o:+.1f}%' for o in over)}); "
          f"median paired ratio {statistics.median(paired):+.1f}% "
          f"(rounds: {', '.join(f'{o:+.1f}%' for o in paired)}); "
          f"off/on ms {[(round(x, 2), round(y, 2)) for x, y, _ in runs]}")


if __name__ == "__main__":
    main()
