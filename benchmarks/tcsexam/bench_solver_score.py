"""Benchmark: tcsexam solver-score on 1,000,000 instance records, against orjson.loads of the same file.

    .venv/bin/python benchmarks/tcsexam/bench_solver_score.py [--records 1000000] [--runs 600]

Prints records/s and ratios side by side (never asserted in tests). Two layouts:

A. one records file of N records for one task whose reference has N scored instances
   (solver-score as the CLI runs it: read + validate the reference, read + validate the records,
   score, write the output JSON);
B. about 200 models x 3 attempts of one Full-sized task: ``--runs`` record files of N/runs records
   each, scored one after the other against a reference loaded once (what a batch rescoring does).

The baseline for both is ``orjson.loads`` of exactly the same record bytes (files read from disk
first, outside both timings). Machine load from other processes makes the figures noisy.

Rows marked FAST PATH are what the CLI runs (columns written by the fast writer, GC paused);
"dict per instance" is the reference implementation (``solver_score`` + ``dumps_json``), which
the fast writer must match byte for byte (checked here once, and by hypothesis in the tests).
The "floor" row parses both inputs with orjson and writes the output bytes, with no validation or
scoring: a lower bound for any implementation that parses both files and writes this output.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from benchscore.common.atomic import atomic_write_bytes, atomic_write_json
from benchscore.tcsexam.commands import solver_score_file, write_solver_score
from benchscore.tcsexam.records import gc_paused, parse_records
from benchscore.tcsexam.reference import load_reference
from benchscore.tcsexam.scoring import score_task, solver_score

STATUSES = ["ok"] * 17 + ["timeout", "invalid", "crash"]


def make_reference(names: list[str], rng: random.Random) -> dict:
    instances = {n: [round(rng.gauss(100, 5), 3) for _ in range(3)] for n in names}
    return {
        "reference_id": "bench-k3",
        "suite": "bench",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": {"bench-task": {"kind": "objective", "direction": "maximize", "instances": instances}},
        "unscored_reference_instances": {},
    }


def make_records(names: list[str], rng: random.Random) -> bytes:
    recs = []
    for n in names:
        status = rng.choice(STATUSES)
        recs.append(
            {"instance": n, "status": status, "A": round(rng.gauss(101, 6), 3)}
            if status == "ok"
            else {"instance": n, "status": status}
        )
    return orjson.dumps(recs)


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def row(label: str, t: float, base: float, n: int) -> None:
    print(f"   {label:<62} {t:7.3f} s  {t / base:5.2f}x  {n / t / 1e6:6.2f} M records/s")


def layout_a(n: int, tmp: Path, repeat: int) -> None:
    rng = random.Random(1)
    names = [f"inst-{i:07d}" for i in range(n)]
    ref_path = tmp / "ref.json"
    ref_path.write_bytes(orjson.dumps(make_reference(names, rng)))
    rec_path = tmp / "records.json"
    rec_path.write_bytes(make_records(names, rng))
    raw = rec_path.read_bytes()
    ref_raw = ref_path.read_bytes()
    out = tmp / "out.json"
    t_parse, _ = timed(lambda: orjson.loads(raw), repeat)
    t_ref, loaded = timed(lambda: load_reference(ref_path), repeat)
    task = loaded.tasks["bench-task"]
    known = task.clean_names
    # the fast path, step by step
    t_cols, cols = timed(lambda: parse_records(raw, rec_path, kind="objective", known_names=known), repeat)
    t_score, result = timed(lambda: score_task(task, cols, rec_path), repeat)
    t_bytes, data = timed(result.to_json, repeat)
    t_write, _ = timed(lambda: atomic_write_bytes(out, data), repeat)

    def fast() -> None:  # what the CLI runs once the reference is loaded
        write_solver_score(loaded, "bench-task", raw, rec_path, out)

    def reference_impl() -> None:  # one dict per instance, then dumps_json (the path before the fast writer)
        atomic_write_json(out, solver_score(loaded, "bench-task", raw, rec_path))

    t_fast, _ = timed(fast, repeat)
    t_slow, _ = timed(reference_impl, repeat)
    fast()
    fast_bytes = out.read_bytes()
    reference_impl()
    same = fast_bytes == out.read_bytes()
    t_cols_nohint, _ = timed(lambda: parse_records(raw, rec_path, kind="objective"), repeat)

    def floor() -> None:  # parse both inputs and write the output, nothing else (GC paused as in the CLI)
        with gc_paused():
            orjson.loads(raw), orjson.loads(ref_raw), atomic_write_bytes(out, data)

    t_floor, _ = timed(floor, repeat)
    t_cli, _ = timed(
        lambda: solver_score_file(task="bench-task", records=rec_path, reference=ref_path, output=out), repeat
    )
    # fresh processes, as a user runs them: a bare orjson.loads of the file vs the tcsexam command
    bare = [
        sys.executable,
        "-c",
        "import orjson, sys; orjson.loads(open(sys.argv[1], 'rb').read())",
        str(rec_path),
    ]
    cli = [
        str(Path(sys.executable).parent / "tcsexam"),
        "solver-score",
        "--task",
        "bench-task",
        "--records",
        str(rec_path),
        "--reference",
        str(ref_path),
        "--output",
        str(out),
    ]
    t_bare, _ = timed(lambda: subprocess.run(bare, check=True), repeat)
    t_proc, _ = timed(lambda: subprocess.run(cli, check=True, capture_output=True), repeat)
    t_import, _ = timed(
        lambda: subprocess.run([sys.executable, "-c", "import benchscore.tcsexam.cli"], check=True), repeat
    )
    print(
        f"A. one file of {n:,} records ({len(raw) / 1e6:.0f} MB; reference {len(ref_raw) / 1e6:.0f} MB,"
        f" output {len(data) / 1e6:.0f} MB; fast output == reference implementation's: {same})"
    )
    print("   in one warm process (ratio to orjson.loads in the same warm process):")
    row("orjson.loads(records)  [baseline]", t_parse, t_parse, n)
    row("parse + validate records (fast path, reference names as hint)", t_cols, t_parse, n)
    row("parse + validate records (fast path, no hint)", t_cols_nohint, t_parse, n)
    row("score (vectorised, columns)", t_score, t_parse, n)
    row("build output bytes from columns (fast writer)", t_bytes, t_parse, n)
    row("write output bytes (atomic, fsync)", t_write, t_parse, n)
    row("solver-score, reference loaded, incl. write: FAST PATH", t_fast, t_parse, n)
    row("solver-score, reference loaded, incl. write: dict per instance", t_slow, t_parse, n)
    row("load + validate + compile the reference alone", t_ref, t_parse, n)
    row("solver_score_file in-process (reference load + write incl.)", t_cli, t_parse, n)
    row("floor: loads(records) + loads(reference) + write, GC paused", t_floor, t_parse, n)
    print("   as separate fresh processes (wall time, interpreter start and imports included):")
    row("python -c orjson.loads(file)  [baseline]", t_bare, t_bare, n)
    row("python -c 'import benchscore.tcsexam.cli' (start + imports)", t_import, t_bare, n)
    row("tcsexam solver-score (reference load + write incl.)", t_proc, t_bare, n)


def layout_b(n: int, runs: int, tmp: Path, repeat: int) -> None:
    rng = random.Random(2)
    per = n // runs
    names = [f"inst-{i:05d}" for i in range(per)]
    ref_path = tmp / "ref-b.json"
    ref_path.write_bytes(orjson.dumps(make_reference(names, rng)))
    raws = []
    for _ in range(runs):
        shuffled = names[:]
        rng.shuffle(shuffled)
        raws.append(make_records(shuffled, rng))
    loaded = load_reference(ref_path)
    outdir = tmp / "b-out"
    outdir.mkdir(exist_ok=True)
    t_parse, _ = timed(lambda: [orjson.loads(r) for r in raws], repeat)

    def score_all_fast():
        for k, raw in enumerate(raws):
            write_solver_score(loaded, "bench-task", raw, Path(f"run-{k}.json"), outdir / f"{k}.json")

    def score_all_dicts():
        for k, raw in enumerate(raws):
            atomic_write_json(outdir / f"{k}.json", solver_score(loaded, "bench-task", raw, f"run-{k}.json"))

    t_fast, _ = timed(score_all_fast, repeat)
    t_slow, _ = timed(score_all_dicts, repeat)
    total = per * runs
    print(
        f"B. {runs} record files x {per:,} instances (shuffled) = {total:,} records (reference loaded once)"
    )
    row("orjson.loads of every file  [baseline]", t_parse, t_parse, total)
    row("solver-score of every file incl. writing outputs: FAST PATH", t_fast, t_parse, total)
    row("solver-score of every file incl. writing outputs: dict path", t_slow, t_parse, total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    args = parser.parse_args()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")  # same provenance: outputs comparable by bytes
    with tempfile.TemporaryDirectory(prefix="tcsexam-bench-") as tmp:
        layout_a(args.records, Path(tmp), args.repeat)
        layout_b(args.records, args.runs, Path(tmp), args.repeat)
    print("note: 2-core machine shared with other jobs; figures are noisy (best of --repeat).")


if __name__ == "__main__":
    main()
