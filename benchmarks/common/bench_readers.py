"""Benchmark: what the common readers' door costs, against orjson.loads of the same bytes.

    .venv/bin/python benchmarks/common/bench_readers.py [--records 1000000]

Three inputs the size of the other benchmarks' (tcsexam instance records: one JSON list, with plain
strings, then with brackets inside every record's strings, the slow case of the nesting check; mira
repetitions: JSON Lines), written to a temporary folder. For each, side by side in one run:
``read_bytes`` (stat, open without blocking, read at most limit + 1 bytes), ``check_nesting`` (the
one nesting limit, on the bytes) and ``orjson.loads``; the ratio column is each step's time over
``orjson.loads``. Best of 5; machine load from other processes makes the figures noisy. Never
asserted in tests.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import orjson

from benchscore.common.readers import check_nesting, read_bytes


def best_of(fn, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    n = ap.parse_args().records
    plain = orjson.dumps([{"instance": f"inst-{i:07d}", "status": "ok", "A": 1000.0 + i % 97, "note": "a b c"}
                          for i in range(n)])
    records = orjson.dumps([{"instance": f"inst-{i:07d}", "status": "ok", "A": 1000.0 + i % 97, "note": "a [b] {c}"}
                            for i in range(n)])
    reps = b"".join(orjson.dumps({"case_id": f"C{i % 17:02d}", "repetition": i, "execution_mode": "adapted",
                                  "terminal_state": "completed", "elapsed_s": 12.5,
                                  "deterministic_results": {"a": True, "b": False},
                                  "evidence": {"final_answer": "x: [1, 2]", "steps": [[1, 2], [3, [4]]]}}) + b"\n"
                    for i in range(n // 10))
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, lines in (("records.json", plain, False), ("records-brackets-in-strings.json", records, False),
                                  ("repetitions.jsonl", reps, True)):
            path = Path(tmp) / name
            path.write_bytes(data)
            t_loads = best_of(lambda d=data, j=lines: orjson.loads(d) if not j else [orjson.loads(x) for x in d.splitlines()])
            t_read = best_of(lambda p=path: read_bytes(p))
            t_nest = best_of(lambda d=data, p=path, j=lines: check_nesting(d, p, lines=j))
            print(f"{name}: {len(data) / 1e6:.0f} MB")
            for step, t in (("orjson.loads", t_loads), ("read_bytes", t_read), ("check_nesting", t_nest)):
                print(f"  {step:14s} {t:7.3f} s  {t / t_loads:5.2f}x orjson.loads")


if __name__ == "__main__":
    main()
