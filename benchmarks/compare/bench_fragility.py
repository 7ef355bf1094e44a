"""Benchmark (issue 38, point 1): what the fragility of every ``differs`` adds to ``benchscore compare``.

    .venv/bin/python benchmarks/compare/bench_fragility.py [--results 10] [--items 40 100 200] [--resamples 10000]

A board of ``--results`` seeded results (0/1 items, rates spread from 0.3 to 0.8, compared as means: the
sign-flip test), compared in-process with every pair's exact test and Holm (no minimum detectable
effects, as the leaderboard runs it), with the fragility search and with it replaced by a no-op; the
figures are wall clock (the machine is shared: the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchscore.stats import compare as C
from benchscore.stats import fragility as F


def board(results: int, items: int) -> list[C.Entry]:
    rng = np.random.default_rng(38)
    out = []
    for r in range(results):
        vals = (rng.random(items) < 0.3 + 0.5 * r / results).astype(float)
        out.append(C.Entry(f"r{r}", "plain", {}, [C.Metric("accuracy", float(vals.mean()),
                                                            {f"q{k}": (v, 1.0) for k, v in enumerate(vals)},
                                                            bounds=(0.0, 1.0))]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", type=int, default=10)
    ap.add_argument("--items", type=int, nargs="+", default=[40, 100, 200])
    ap.add_argument("--resamples", type=int, default=C.DEFAULT_RESAMPLES)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    real = F.fragility
    C.compare(board(3, 20), seed=1, resamples=args.resamples)  # warm up: imports, caches
    for items in args.items:
        entries = board(args.results, items)
        F.fragility = real
        t = time.perf_counter()
        doc = C.compare(entries, seed=1, resamples=args.resamples, detectable_effects=False)
        with_f = time.perf_counter() - t
        rows = [m for c in doc["comparisons"] for m in c["metrics"]]
        differs = [m for m in rows if m["verdict"] == "differs"]
        fragile = sum(m["fragility"]["fragile"] for m in differs)
        methods = sorted({m["fragility"]["method"] for m in differs})
        F.fragility = lambda u, still: F.Fragility(1, u.n, (0,), "exact", 0)
        t = time.perf_counter()
        C.compare(entries, seed=1, resamples=args.resamples, detectable_effects=False)
        without = time.perf_counter() - t
        F.fragility = real
        print(f"{args.results} results x {items} items: {len(rows)} pairs, {len(differs)} differs ({fragile} fragile; "
              f"{', '.join(methods)}): compare {with_f:.1f} s with fragility, {without:.1f} s without "
              f"({(with_f - without) / max(1, len(differs)):.2f} s a differs)")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
