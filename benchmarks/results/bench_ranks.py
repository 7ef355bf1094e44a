"""Benchmark (issue 37, point 4): simultaneous rank sets of 2,000 models x 10,000 samples by
``benchscore.stats.ranks`` against a minimal numpy implementation of the same procedure, side by side in one
run, and of 5,000 models x 10,000 samples.

    .venv/bin/python benchmarks/results/bench_ranks.py [--models 2000] [--samples 10000] [--draws 1000]
        [--repeat 2] [--large 5000] [--reference-large]

Both take the same input (each sample's contribution to each model's accuracy, ``samples x models`` float64,
and the accuracies) and the same seeded multiplier draws, so they must make the same decisions (checked). The
reference is the procedure written the direct way (csranks' ``csdiffmeans`` with ``stepdown=TRUE``): the
covariance, the draws ``Z = xi U`` (all of xi at once), the studentized differences of every pair held
as ``models x models`` matrices, and per step one pass over every pair, one model's pairs with the models below
it x every draw at a time (never all draws x pairs), both directions masked by the pairs still in play, in
float64.
``benchscore.stats.ranks`` streams the first step in cache-sized tiles (float32) and runs later steps
over the pairs left only.

Each probe runs in a fresh process, alternately, ``--repeat`` times; the figures are wall clock of the
procedure (the data are made before the clock starts) and its peak memory (the process's peak resident
set, reset once the data are made, minus what it held then: what the procedure itself added; the input,
160 MB at 2,000 x 10,000, is not counted for either). The load average is printed before and after: the
machine is shared.

Goals: 2,000 x 10,000 at most 2x the reference's time and under 6 GB; 5,000 x 10,000 under 5 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PROBE = r'''
import json, sys, time
import numpy as np

def reference(u, theta, draws, seed, alpha=0.05):
    from benchscore.stats.ranks import critical_value
    n = theta.size
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((draws, u.shape[0])) @ u
    cov = u.T @ u
    v = np.diag(cov)
    s2 = v[:, None] + v[None, :] - 2.0 * cov
    sd = np.where(s2 > 1e-12 * (v[:, None] + v[None, :]), np.sqrt(np.maximum(s2, 0.0)), 0.0)
    inv = np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, (theta[:, None] - theta[None, :]) * inv, 0.0)
    alive = ~np.eye(n, dtype=bool)          # the ordered pairs (j, k) still in play
    zt = np.ascontiguousarray(z.T)          # models x draws: a model's draws contiguous
    crits = []
    while True:
        m = np.full(draws, -np.inf)
        for j in range(n - 1):
            e = (zt[j] - zt[j + 1:]) * inv[j, j + 1:, None]              # (Z_j - Z_k) / sd, k > j, every draw
            m = np.maximum(m, np.where(alive[j, j + 1:, None], e, -np.inf).max(axis=0))
            m = np.maximum(m, np.where(alive[j + 1:, j, None], -e, -np.inf).max(axis=0))
        c = critical_value(m, alpha)
        crits.append(c)
        new = alive & (t > c)
        if not new.any():
            break
        alive &= ~new
    rejected = ~alive & ~np.eye(n, dtype=bool)
    return 1 + rejected.sum(axis=0), n - rejected.sum(axis=1), crits

def ours(u, theta, draws, seed):
    from benchscore.stats.ranks import rank_sets
    r = rank_sets(u, theta, draws=draws, rng=np.random.default_rng(seed))
    return r.lower, r.upper, [s.critical_value for s in r.steps]

def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024

which, models, samples, draws = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
from benchscore.stats.ranks import contributions
rng = np.random.default_rng(2000)
rates = rng.uniform(0.2, 0.9, models)
x = (rng.random((samples, models), dtype=np.float32) < rates.astype(np.float32)).astype(np.float64)
theta = x.mean(axis=0)
u = contributions(x, np.ones_like(x), np.zeros(samples, dtype=np.int64), np.array([1.0]), 1.0)
del x
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")                              # reset the peak resident set
base = rss("VmRSS:")
start = time.perf_counter()
lower, upper, crits = (reference if which == "reference" else ours)(u, theta, draws, 16)
seconds = time.perf_counter() - start
peak = rss("VmHWM:") - base
print(json.dumps({"seconds": seconds, "peak_bytes": peak, "lower": lower.tolist(), "upper": upper.tolist(),
                  "critical_values": crits}))
'''


def probe(which: str, models: int, samples: int, draws: int) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, which, str(models), str(samples), str(draws)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--large", type=int, default=5000, help="models of the second board (0: skip it)")
    ap.add_argument("--reference-large", action="store_true", help="also time the reference on the second board")
    args = ap.parse_args()
    print(f"load average before: {_load()} ({os.cpu_count()} cores)", flush=True)
    runs: dict[str, list[dict]] = {"reference": [], "benchscore": []}
    for _ in range(args.repeat):
        for which in ("reference", "benchscore"):
            runs[which].append(probe(which, args.models, args.samples, args.draws))
            r = runs[which][-1]
            print(f"  {which}: {r['seconds']:.2f} s, {r['peak_bytes'] / 1e9:.2f} GB", flush=True)
    ref, ours = runs["reference"][0], runs["benchscore"][0]
    same = ref["lower"] == ours["lower"] and ref["upper"] == ours["upper"]
    steps = ", ".join(f"{c:.4g}" for c in ours["critical_values"])
    t_ref = [r["seconds"] for r in runs["reference"]]
    t_ours = [r["seconds"] for r in runs["benchscore"]]
    m_ref = max(r["peak_bytes"] for r in runs["reference"])
    m_ours = max(r["peak_bytes"] for r in runs["benchscore"])
    print(f"{args.models:,} models x {args.samples:,} samples, {args.draws:,} draws (critical values by step: {steps}; "
          f"the same rank sets: {'yes' if same else 'NO'})")
    print(f"  reference  : min {min(t_ref):.2f} s, median {statistics.median(t_ref):.2f} s, peak {m_ref / 1e9:.2f} GB")
    print(f"  benchscore : min {min(t_ours):.2f} s, median {statistics.median(t_ours):.2f} s, peak {m_ours / 1e9:.2f} GB")
    ratio = statistics.median(t_ours) / statistics.median(t_ref)
    print(f"  ratio benchscore / reference: {ratio:.2f}x (goal <= 2x), memory {m_ours / 1e9:.2f} GB (goal < 6 GB)")
    if args.large:
        big = probe("benchscore", args.large, args.samples, args.draws)
        print(f"{args.large:,} models x {args.samples:,} samples: benchscore {big['seconds']:.1f} s, peak "
              f"{big['peak_bytes'] / 1e9:.2f} GB (goal < 300 s); steps {len(big['critical_values'])}", flush=True)
        if args.reference_large:
            rbig = probe("reference", args.large, args.samples, args.draws)
            print(f"  reference {rbig['seconds']:.1f} s, peak {rbig['peak_bytes'] / 1e9:.2f} GB; the same rank sets: "
                  f"{'yes' if rbig['lower'] == big['lower'] and rbig['upper'] == big['upper'] else 'NO'}")
    print(f"load average after: {_load()}")
    if not same:
        sys.exit("the two implementations disagree")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"({time.perf_counter() - start:.0f} s in all)")
