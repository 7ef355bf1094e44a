"""Benchmark (issues 16, 29): ``rxn eval-mc`` on 100,000 questions with the 95 % intervals against without.

    .venv/bin/python benchmarks/rxn/bench_intervals.py [--questions 100000] [--repeat 5] [--keep DIR --results 10]

The questions are the multiple-choice questions of a build of every bundled dataset (all_varying and
single_varying), copied under new sample and table ids until there are ``--questions`` of them (so a
table keeps its several questions: the intervals are clustered by table as in real sets), written as
two dataset files, with a seeded random answer per question. Each run is the whole evaluation in
this process (read, validate, score, the per-sample records, intervals or not, write the JSON,
print), in ``--repeat`` alternating pairs (without, with): the ratio of each pair, their median, and
the ratio of the best runs, and the intervals' own share. Goal (issue 29): with intervals at most
1.1 x without. ``--keep DIR`` writes ``--results`` evaluations (with intervals; seeded answers of rising
accuracy) for benchmarks/compare/bench_compare.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import tempfile
import time
from pathlib import Path

from benchscore.rxn import intervals as ci
from benchscore.rxn.cli import _evaluate, load_inputs, run_build_mc
from benchscore.rxn.conventions import DEFAULT_MAX_OPTIONS, DEFAULT_SEED


def make_inputs(folder: Path, questions: int, seed: int = 1, results: int = 2) -> tuple[list[Path], list[Path]]:
    """Two dataset files (all_varying, single_varying) with ``questions`` questions in all, and
    ``results`` prediction files (seeded answers: the k-th picks the right option with probability
    0.3 k / results, else a random one)."""
    loaded, meta = load_inputs((), (), None)
    build_folder, build = run_build_mc(folder / "build", loaded, meta, seed=DEFAULT_SEED,
                                       max_options=DEFAULT_MAX_OPTIONS, command="bench")
    datasets = []
    base = {q: json.loads((build_folder / f"multiple_choice_{q}.json").read_text())
            for q in ("all_varying", "single_varying")}
    per_copy = sum(len(d["samples"]) for d in base.values())
    copies = -(-questions // per_copy)
    left = questions
    for q, doc in base.items():
        samples = []
        for k in range(copies):
            for s in doc["samples"]:
                if left == 0:
                    break
                c = json.loads(json.dumps(s))
                c["id"] = f"{s['id']}#{k}"
                c["meta"]["source"]["table_id"] = f"{s['meta']['source']['table_id']}_{k}"
                samples.append(c)
                left -= 1
        path = folder / f"multiple_choice_{q}.json"
        path.write_text(json.dumps({**doc, "samples": samples}))
        datasets.append(path)
    rng = random.Random(seed)
    preds = [folder / f"pred_{k}.json" for k in range(results)]
    answers: list[dict] = [{} for _ in range(results)]
    for path in datasets:
        for s in json.loads(path.read_text())["samples"]:
            n = len(s["options"])
            for k in range(results):
                answers[k][s["id"]] = s["answer"][0] if rng.random() < 0.3 * k / results else rng.randrange(n)
    for p, a in zip(preds, answers, strict=True):
        p.write_text(json.dumps(a))
    return datasets, preds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="write the evaluations (with intervals) into this folder")
    ap.add_argument("--results", type=int, default=2, help="evaluations written with --keep")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        datasets, preds = make_inputs(folder, args.questions, results=max(2, args.results))
        print(f"inputs: {args.questions} questions in 2 datasets, made in {time.perf_counter() - t0:.1f} s")
        times: dict[bool, list[float]] = {True: [], False: []}
        inside: list[float] = []
        compute = ci.evaluation_intervals

        def timed_intervals(*a, **k):
            t = time.perf_counter()
            try:
                return compute(*a, **k)
            finally:
                inside.append(time.perf_counter() - t)

        ci.evaluation_intervals = timed_intervals
        for _ in range(args.repeat):
            for with_ci in (False, True):
                t0 = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):
                    _evaluate("multiple_choice", tuple(datasets), preds[0], folder / f"eval_{with_ci}.json",
                              intervals=with_ci)
                times[with_ci].append(time.perf_counter() - t0)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for k, p in enumerate(preds):
                with contextlib.redirect_stdout(io.StringIO()):
                    _evaluate("multiple_choice", tuple(datasets), p, args.keep / f"eval_{k:02d}.json")
    without, with_ci = min(times[False]), min(times[True])
    print(f"rxn eval-mc, {args.questions} questions, {args.repeat} alternating pairs (all runs: without "
          f"{', '.join(f'{t:.2f}' for t in times[False])}; with {', '.join(f'{t:.2f}' for t in times[True])})")
    print(f"  without intervals: {without:.2f} s (best)")
    print(f"  with intervals:    {with_ci:.2f} s (best)")
    print(f"  of which the intervals themselves: {min(inside):.3f} s (best; all {', '.join(f'{t:.3f}' for t in inside)})")
    pairs = sorted(w / o for w, o in zip(times[True], times[False], strict=True))
    median = pairs[len(pairs) // 2] if len(pairs) % 2 else (pairs[len(pairs) // 2 - 1] + pairs[len(pairs) // 2]) / 2
    ratio = with_ci / without
    print(f"  ratio with/without: {ratio:.2f}x of the best runs, median of the pairs {median:.2f}x "
          f"(pairs {', '.join(f'{r:.2f}' for r in pairs)})   goal <= 1.1x: {'met' if median <= 1.1 else 'NOT met'}")
    print("  (2-core shared machine: figures are noisy)")


if __name__ == "__main__":
    main()
