"""Benchmark (issue 37, points 3 and 5): where one machine stops, and local against ``--scheduler``.

    .venv/bin/python benchmarks/results/bench_scale.py [--sizes 10x10000,100x10000,...] [--shards 4x10x10000]
        [--workers 2] [--cache /tmp/benchscore-bench-scale] [--no-scheduler]

1. ``benchscore leaderboard scores.parquet --output-dir SITE`` of a table of per-sample scores (one 0/1 metric,
   one epoch, seeded accuracies spread over the board) at each MODELSxSAMPLES of ``--sizes``: wall clock and
   peak memory (the child's maximum resident set, from ``wait4``) of the whole command, a fresh process each
   (interpreter start included), and per model x sample row.
2. ``benchscore leaderboard`` of ``--shards`` SHARDSxMODELSxSAMPLES (SHARDS folders, each a ``scores.parquet``
   of other models: one board) read here and with ``--scheduler`` on a real Dask cluster (a ``dask scheduler`` and
   ``--workers`` ``dask worker`` processes of one thread, started and stopped by this script): wall clock of
   each and whether the two outputs are byte-identical. Needs the ``dask`` extra (skipped with the reason
   without it, or with ``--no-scheduler``).

Tables are made once (pyarrow) and cached under ``--cache``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CLI = [sys.executable, "-W", "ignore", "-c", "from benchscore.cli import main; main()"]
ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}


def make_table(path: Path, models: int, samples: int, seed: int = 37, first: int = 0) -> Path:
    """``models`` x ``samples`` rows: model k answers each sample right with its own accuracy (seeded)."""
    if path.exists():
        return path
    rng = np.random.default_rng(seed + first)
    acc = np.linspace(0.35, 0.85, models)
    skill = rng.random((models, samples)) < acc[:, None]
    names = np.repeat(np.array([f"model-{first + k:05d}" for k in range(models)], dtype=object), samples)
    ids = np.tile(np.array([f"s{i:06d}" for i in range(samples)], dtype=object), models)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pq.write_table(pa.table({"model": pa.array(names, pa.string()), "sample_id": pa.array(ids, pa.string()),
                             "acc": pa.array(skill.ravel().astype(np.int8))}), tmp)
    os.replace(tmp, path)
    return path


def timed(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak resident MB, exit code) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(CLI + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()[-300:] if proc.stderr else ""
    if proc.returncode not in (0, 1):
        print(f"  exit {proc.returncode}: {err.strip()}")
    return wall, usage.ru_maxrss / 1024, proc.returncode


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cluster(workers: int, work: Path) -> tuple[str, list[subprocess.Popen]]:
    from distributed import Client

    port = _free_port()
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": work}
    procs = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], **quiet)]
    address = f"tcp://127.0.0.1:{port}"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    for k in range(workers):
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nworkers", "1",
                                       "--nthreads", "1", "--no-dashboard", "--local-directory", str(work / f"w{k}")],
                                      **quiet))
    with Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=180)
    return address, procs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10x10000,100x10000,300x10000,1000x2000")
    ap.add_argument("--shards", default="4x10x10000")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "benchscore-bench-scale")
    ap.add_argument("--no-scheduler", action="store_true")
    a = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}")
    print("\n1. leaderboard of one table of per-sample scores (one 0/1 metric, one epoch)")
    print(f"{'models':>7} {'samples':>8} {'rows':>10} {'wall s':>8} {'peak MB':>8} {'us/row':>7} {'B/row':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in filter(None, a.sizes.split(",")):
            models, samples = (int(x) for x in size.split("x"))
            table = make_table(a.cache / f"t{models}x{samples}" / "scores.parquet", models, samples)
            wall, peak, _ = timed(["leaderboard", str(table), "--output-dir", f"{tmp}/site{size}"])
            rows = models * samples
            print(f"{models:>7} {samples:>8} {rows:>10,} {wall:>8.1f} {peak:>8.0f} {wall / rows * 1e6:>7.2f} "
                  f"{peak * 2**20 / rows:>6.0f}", flush=True)
        shards, models, samples = (int(x) for x in a.shards.split("x"))
        folders = [make_table(a.cache / f"shards{a.shards}" / f"shard{k}" / "scores.parquet", models, samples,
                              first=k * models).parent for k in range(shards)]
        print(f"\n2. leaderboard of {shards} tables x {models} models x {samples} samples: here and with --scheduler "
              f"({a.workers} workers of one thread)")
        local, peak, _ = timed(["leaderboard", *map(str, folders), "--output-dir", f"{tmp}/local"])
        print(f"  here:        {local:7.1f} s  peak {peak:.0f} MB", flush=True)
        if a.no_scheduler:
            return
        try:
            import distributed  # noqa: F401
        except ImportError as exc:
            print(f"  --scheduler: skipped ({exc}: pip install 'benchscore[dask]')")
            return
        work = Path(tmp) / "cluster"
        work.mkdir()
        address, procs = start_cluster(a.workers, work)
        try:
            there, peak, _ = timed(["leaderboard", *map(str, folders), "--output-dir", f"{tmp}/dask", "--scheduler",
                                    address])
        finally:
            for p in reversed(procs):
                p.terminate()
            for p in reversed(procs):
                p.wait(timeout=60)
        same = all((Path(tmp) / "local" / f).read_bytes() == (Path(tmp) / "dask" / f).read_bytes()
                   for f in ("leaderboard.json", "index.html"))
        print(f"  --scheduler: {there:7.1f} s  peak {peak:.0f} MB (client)  = {there / local:.2f}x here; outputs "
              f"{'byte-identical' if same else 'DIFFER'}")
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
