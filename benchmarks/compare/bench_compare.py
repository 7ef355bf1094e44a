"""Benchmark (issues 16, 29): ``benchscore compare`` of rxn evaluations of 100,000 questions.

    .venv/bin/python benchmarks/rxn/bench_intervals.py --keep out/bench-compare --results 10   # the outputs
    .venv/bin/python benchmarks/compare/bench_compare.py out/bench-compare/eval_0[01].json       # two results
    .venv/bin/python benchmarks/compare/bench_compare.py out/bench-compare/eval_*.json           # ten: ranks too

Times, in this process, best of ``--repeat``: reading the outputs and taking their items (the domain
hook), and the statistics of both metrics (avg_relative_score, exact_match_accuracy) over every pair:
the sign-flip permutation test over the condition tables with 10,000 random sign patterns, its
inversion into the interval, the minimum detectable effect, and with three or more results Holm,
the matching intervals, rank intervals and group labels. Goals (issue 29): two results under 3 s, ten
results with rank intervals under 20 s.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchscore.rxn.comparison import entries
from benchscore.stats import compare as C


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outputs", nargs="+", type=Path)
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
    n = len(args.outputs)
    goal = 3.0 if n == 2 else 20.0
    print(f"compare {n} results: {rows[0]['n_items']} questions in {rows[0]['n_units']} condition tables, "
          f"{args.resamples} sign patterns, {len(rows)} metrics, {len(doc['comparisons'])} pairs")
    print(f"  read the outputs and pair the items: {min(read_s):.2f} s (best of {args.repeat})")
    print(f"  tests, intervals, MDE{', Holm, ranks' if n > 2 else ''}: {min(stats_s):.2f} s "
          f"(all runs: {', '.join(f'{t:.2f}' for t in stats_s)})")
    total = min(read_s) + min(stats_s)
    print(f"  whole compare: {total:.2f} s   goal < {goal:g} s: {'met' if total < goal else 'NOT met'}")
    for m in rows:
        ci = f"[{m['ci95'][0]:+.4f}, {m['ci95'][1]:+.4f}]" if m["ci95"] else f"no interval ({m.get('ci_reason')})"
        print(f"  {doc['comparisons'][0]['a']} vs {doc['comparisons'][0]['b']}, {m['name']}: difference "
              f"{m['difference']:+.4f} {ci}, p {m['p_value']:.4g} ({m['test']}): {m['verdict']}")
    for name, board in (doc.get("leaderboards") or {}).items():
        print(f"  leaderboard {name}: " + "; ".join(f"{r['label']} {', '.join(r['groups'] or ['-'])} {r['rank_range']}" for r in board))
    print("  (2-core shared machine: figures are noisy)")


if __name__ == "__main__":
    main()
