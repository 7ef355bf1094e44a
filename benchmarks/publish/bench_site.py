"""Benchmark (issue 37, point 6): the leaderboard site of a large board, built, rendered and written, in one run.

    .venv/bin/python benchmarks/publish/bench_site.py [--models 2000] [--repeat 3]

The board is the stand-in of ``tests/test_leaderboard.py`` (``_stand_in``: compare's document for N models
with the statistics stood in; computing ranks at this size is compare's job), so the figures are the
site's alone: ``build`` (leaderboard.json's document from compare's), ``render`` (index.html, a page
per result), and the write (Every Eval Ever records, leaderboard.json and the pages into a new folder,
all or nothing) two ways side by side, ``--repeat`` times each, best kept:

- ``write, one syncfs``: what ``write_site`` does: the folder is new, so files are written plainly and
  flushed to disk together before the manifest;
- ``write, fsync per file``: each file by ``atomic_write_bytes`` (temporary file, fsync, rename).

It prints the site's size (goal: under 60 MB, index.html under 8 MB at 2,000 models) and the ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _stand_in():
    spec = importlib.util.spec_from_file_location("stand_in", ROOT / "tests" / "test_leaderboard.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["stand_in"] = module
    spec.loader.exec_module(module)
    return module._stand_in


def _per_file(target: Path, board, records, pages) -> None:
    from benchscore.common.atomic import atomic_write_bytes, atomic_write_json, dumps_json, replaced_directory

    with replaced_directory(target, owner="benchscore leaderboard") as tmp:
        for name, record in records.items():
            atomic_write_json(tmp / name, record)
        atomic_write_bytes(tmp / "leaderboard.json", dumps_json(board))
        for name, text in pages.items():
            atomic_write_bytes(tmp / name, text.encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")
    from benchscore.common.atomic import dumps_json
    from benchscore.common.provenance import provenance, sha256_bytes
    from benchscore.publish import leaderboard as L

    doc, entries = _stand_in()(args.models)
    reproduced = {e.label: (None, "results of another tool: no benchscore command to re-run") for e in entries}
    t = time.perf_counter()
    board = L.build(doc, entries, reproduced)
    board["provenance"] = provenance(L.FORMAT, {}, seed=16)
    built = time.perf_counter() - t
    about = {e.label: {"created": "2026-01-01T00:00:00Z", "library": ("inspect_ai", "0.3.285"), "dataset": "quiz"}
             for e in entries}
    records = L.eee_records(board, about, sha256_bytes(dumps_json(board)))
    t = time.perf_counter()
    pages = L.render(board)
    rendered = time.perf_counter() - t
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(args.repeat):
            for name, write in (("write, one syncfs", lambda p: L.write_site(p, board, records, pages)),
                                ("write, fsync per file", lambda p: _per_file(p, board, records, pages))):
                site = Path(scratch) / "site"
                shutil.rmtree(site, ignore_errors=True)
                t = time.perf_counter()
                write(site)
                times[name] = min(times.get(name, float("inf")), time.perf_counter() - t)
        sizes = {p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*") if p.is_file()}
    load = os.getloadavg()[0]
    print(f"{args.models} models (load average {load:.2f}); best of {args.repeat}")
    print(f"  build       {built:6.2f} s")
    print(f"  render      {rendered:6.2f} s  ({len(pages)} pages)")
    for name, seconds in times.items():
        print(f"  {name:22s} {seconds:6.2f} s")
    print(f"  ratio fsync per file / one syncfs: {times['write, fsync per file'] / times['write, one syncfs']:.2f}x")
    total = sum(sizes.values())
    print(f"  site: {len(sizes)} files, {total / 1e6:.1f} MB (goal < 60 MB); "
          f"index.html {sizes['index.html'] / 1e6:.2f} MB (goal < 8 MB); "
          f"leaderboard.json {sizes['leaderboard.json'] / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
