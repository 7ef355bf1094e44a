"""rxn benchmark: build every bundled dataset (MC + FIB) and evaluate 100,000 FIB predictions.

    .venv/bin/python benchmarks/rxn/bench_rxn.py [--predictions 100000] [--repeat 3]

Prints seconds and predictions/s beside the goals (full build < 10 s; evaluation > 200,000
predictions/s). The FIB predictions are seeded random index choices for the samples of the built
``all_blank`` and ``all_blank_reference`` sets (one prediction file per "run", as many runs as
needed to reach the total), scored with the same code as ``benchscore rxn eval-fib``. The dataset
is read, validated and indexed once (timed separately). Best of ``--repeat`` runs is reported;
figures on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from benchscore.common.readers import read_json, validate
from benchscore.rxn import metrics
from benchscore.rxn.cli import load_inputs, run_build_fib, run_build_mc
from benchscore.rxn.conventions import DEFAULT_MAX_OPTIONS, DEFAULT_SEED
from benchscore.rxn.formats import FibDataset


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--predictions", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    build_times, fib_folder = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            out = Path(tmp) / f"run{i}"

            def build(out=out):
                loaded, meta = load_inputs((), (), None)
                mc, b_mc = run_build_mc(out, loaded, meta, seed=DEFAULT_SEED, max_options=DEFAULT_MAX_OPTIONS,
                                        command="bench")
                fib, b_fib = run_build_fib(out, loaded, meta, seed=DEFAULT_SEED, command="bench")
                return loaded, b_mc, b_fib, fib

            seconds, (loaded, b_mc, b_fib, fib_folder) = timed(build)
            build_times.append(seconds)
        n_tables = sum(len(f.tables) for f in loaded)
        n_rows = sum(len(t.rows) for f in loaded for t in f.tables)
        n_mc = sum(len(s) for s in b_mc.samples.values())
        n_fib = sum(len(s) for s in b_fib.samples.values())

        paths = [fib_folder / "fill_in_blank_all_blank.json", fib_folder / "fill_in_blank_all_blank_reference.json"]

        def load_and_index():
            samples = []
            for p in paths:
                data = read_json(p)
                validate(FibDataset, data, source=p)
                samples += data["samples"]
            return samples, metrics.index_fill_in_blank(samples)

        index_s, (samples, index) = timed(load_and_index)

    rng = random.Random(1)
    runs = []
    total = 0
    while total < args.predictions:
        take = samples[: args.predictions - total]
        runs.append({s["id"]: {k: rng.randrange(len(v)) for k, v in s["input"]["candidate_values"].items()}
                     for s in take})
        total += len(take)
    sub_indexes = [index if len(r) == len(index) else {k: index[k] for k in r} for r in runs]

    eval_times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        results = [metrics.score_fill_in_blank(ix, preds) for ix, preds in zip(sub_indexes, runs, strict=True)]
        eval_times.append(time.perf_counter() - t0)
    scored = sum(r["num_scored"] + r["num_unhit"] + r["num_invalid"] for r in results)
    assert scored == total, (scored, total)

    build_best, eval_best = min(build_times), min(eval_times)
    rate = total / eval_best
    print(f"bundled data: {len(loaded)} files, {n_tables} tables, {n_rows} rows")
    print(f"full build (load+validate, build-mc {n_mc} samples + build-fib {n_fib} samples, write both folders)")
    print(f"  seconds (best of {args.repeat}): {build_best:.3f}   all runs: {', '.join(f'{t:.3f}' for t in build_times)}")
    print(f"  goal < 10 s: {'met' if build_best < 10 else 'NOT met'} (ratio goal/measured = {10 / build_best:.1f}x)")
    print(f"FIB evaluation: {total} predictions over {len(runs)} prediction files x {len(samples)} samples")
    print(f"  read + validate + index the two FIB datasets once: {index_s:.3f} s")
    print(f"  scoring seconds (best of {args.repeat}): {eval_best:.4f}   predictions/s: {rate:,.0f}")
    print(f"  goal > 200,000 predictions/s: {'met' if rate > 200_000 else 'NOT met'} "
          f"(ratio measured/goal = {rate / 200_000:.2f}x)")
    print(f"  end to end incl. that one-off read/validate/index: {total / (eval_best + index_s):,.0f} predictions/s")
    print("  (2-core shared machine: figures are noisy)")


if __name__ == "__main__":
    main()
