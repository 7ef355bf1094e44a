"""Benchmark (issue 16): ``benchscore compare`` of two rxn evaluations of 100,000 questions, 10,000 resamples.

    .venv/bin/python benchmarks/rxn/bench_intervals.py --keep out/bench-compare   # makes the two outputs
    .venv/bin/python benchmarks/compare/bench_compare.py out/bench-compare/eval_a.json out/bench-compare/eval_b.json

Times, in this process, best of ``--repeat``: reading the two outputs and taking their items (the
domain hook), and the statistics of both metrics (avg_relative_score, exact_match_accuracy): the
paired wild bootstrap and the sign-flip permutation test over the condition tables, 10,000 random
sign patterns each, as matrix products in chunks (no Python loop per resample). Goal: the whole
compare under 2 s.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchscore.common import compare as C
from benchscore.rxn.comparison import entries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outputs", nargs=2, type=Path)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    read_s, stats_s = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        docs = C.read_outputs(args.outputs)
        found = C.collect([(label, doc) for label, doc, _ in docs], [entries], "rxn")
        t1 = time.perf_counter()
        doc = C.compare(found, resamples=args.resamples, seed=16)
        t2 = time.perf_counter()
        read_s.append(t1 - t0)
        stats_s.append(t2 - t1)
    rows = doc["comparisons"][0]["metrics"]
    print(f"compare {args.outputs[0].name} {args.outputs[1].name}: {rows[0]['n_items']} questions in "
          f"{rows[0]['n_units']} condition tables, {args.resamples} resamples, {len(rows)} metrics")
    print(f"  read the outputs and pair the items: {min(read_s):.2f} s (best of {args.repeat})")
    print(f"  bootstrap + permutation test, all metrics: {min(stats_s):.2f} s "
          f"(all runs: {', '.join(f'{t:.2f}' for t in stats_s)})")
    total = min(read_s) + min(stats_s)
    print(f"  whole compare: {total:.2f} s   goal < 2 s: {'met' if total < 2 else 'NOT met'}")
    for m in rows:
        print(f"  {m['name']}: a {m['a']:.4f}, b {m['b']:.4f}, difference {m['difference']:+.4f} "
              f"[{m['ci95'][0]:+.4f}, {m['ci95'][1]:+.4f}], p {m['p_value']:.4g} ({m['test']})")
    print("  (2-core shared machine: figures are noisy)")


if __name__ == "__main__":
    main()
