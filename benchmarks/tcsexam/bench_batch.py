"""Benchmark: re-scoring a leaderboard, one ``tcsexam solver-score`` call per file vs one batch call.

    .venv/bin/python benchmarks/tcsexam/bench_batch.py [--files 600] [--records 1666]

Makes ``--files`` instance-record files of ``--records`` records each (one Full-sized task: about
200 models x 3 attempts), all scored against one reference, then times, as fresh processes (what a
user runs, interpreter start and imports included):

- ``--files`` separate calls ``tcsexam solver-score --records F --output O`` (one after the other);
- one call ``tcsexam solver-score --records F1 --records F2 ... --output-dir D`` (reference loaded once).

Both write the same bytes (checked; SOURCE_DATE_EPOCH pins provenance). Prints both wall times and
their ratio side by side (never asserted in tests). The machine is shared: figures are noisy.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

TCSEXAM = str(Path(sys.executable).parent / "tcsexam")
STATUSES = ["ok"] * 17 + ["timeout", "invalid", "crash"]


def make_inputs(tmp: Path, files: int, per_file: int) -> tuple[Path, list[Path]]:
    rng = random.Random(3)
    names = [f"inst-{i:05d}" for i in range(per_file)]
    reference = {
        "reference_id": "bench-k3",
        "suite": "bench",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": {
            "bench-task": {
                "kind": "objective",
                "direction": "maximize",
                "instances": {n: [round(rng.gauss(100, 5), 3) for _ in range(3)] for n in names},
            }
        },
        "unscored_reference_instances": {},
    }
    ref = tmp / "reference.json"
    ref.write_bytes(orjson.dumps(reference))
    paths = []
    for k in range(files):
        shuffled = names[:]
        rng.shuffle(shuffled)
        recs = []
        for n in shuffled:
            status = rng.choice(STATUSES)
            recs.append({"instance": n, "status": status, "A": round(rng.gauss(101, 6), 3)} if status == "ok"
                        else {"instance": n, "status": status})
        path = tmp / "records" / f"model-{k // 3:03d}" / f"attempt-{k % 3 + 1}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(recs))
        paths.append(path)
    return ref, paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--records", type=int, default=1666, help="records per file")
    args = parser.parse_args()
    env = dict(os.environ, SOURCE_DATE_EPOCH="1767225600")
    with tempfile.TemporaryDirectory(prefix="tcsexam-batch-") as name:
        tmp = Path(name)
        ref, paths = make_inputs(tmp, args.files, args.records)
        common = [TCSEXAM, "solver-score", "--task", "bench-task", "--reference", str(ref)]

        singles = tmp / "singles"
        t0 = time.perf_counter()
        for path in paths:
            out = singles / path.relative_to(tmp / "records")
            subprocess.run([*common, "--records", str(path), "--output", str(out)], check=True, env=env,
                           stdout=subprocess.DEVNULL)
        t_single = time.perf_counter() - t0

        batch = tmp / "batch"
        records_args = [a for path in paths for a in ("--records", str(path))]
        t0 = time.perf_counter()
        subprocess.run([*common, *records_args, "--output-dir", str(batch)], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        t_batch = time.perf_counter() - t0

        same = all(
            (batch / p.relative_to(tmp / "records")).read_bytes()
            == (singles / p.relative_to(tmp / "records")).read_bytes()
            for p in paths
        )
    total = args.files * args.records
    print(f"{args.files} records files x {args.records:,} records = {total:,} records, one task, one reference"
          f" (outputs byte-identical: {same})")
    print(f"   {'mode':<58} {'wall':>9}  {'per file':>9}  {'ratio':>6}")
    print(f"   {f'{args.files} separate tcsexam solver-score calls':<58} {t_single:8.2f}s  "
          f"{t_single / args.files * 1e3:7.1f}ms  {t_single / t_batch:5.1f}x")
    print(f"   {'one tcsexam solver-score call with --output-dir':<58} {t_batch:8.2f}s  "
          f"{t_batch / args.files * 1e3:7.1f}ms  {1.0:5.1f}x")
    print("note: 2-core machine shared with other jobs; figures are noisy.")
    if not same:
        sys.exit("the batch outputs differ from the single-call outputs")


if __name__ == "__main__":
    main()
