"""Swarm runtime benchmark: L01 at full size, naive baselines, and no-op throughput vs Celery,
Dramatiq and pgqueuer, with a worker-count sweep.

Run from the repository root with the venv (Celery, Dramatiq and pgqueuer are the `bench` extra):

    .venv/bin/python benchmarks/swarm/runtime/bench_runtime.py            # everything
    .venv/bin/python benchmarks/swarm/runtime/bench_runtime.py --only noop --only naive-pg --noop-tasks 5000
    .venv/bin/python benchmarks/swarm/runtime/bench_runtime.py --only l01-sqlite

Sections:
- l01-sqlite / l01-pg: `run_stress` (128 agents, 131072 tasks, worker processes = CPUs, full ledger
  + audit; PostgreSQL with the Redis mirror).
- naive-sqlite / naive-pg: the bare loops (one transaction to claim a task, argmax P_t, one to
  complete it, no ledger; PostgreSQL: one SKIP LOCKED statement each, synchronous commit on) at
  --tasks.
- noop: the same number of no-op tasks (--noop-tasks) and worker processes (CPUs) through this
  pool (SQLite, and PostgreSQL + Redis, each with a batched claim and with batch=1: one task per
  claim, per-task semantics), the bare SQLite and PostgreSQL loops, Celery (Redis broker),
  Dramatiq (Redis broker) and pgqueuer (PostgreSQL, batch_size=1), each measured --repeat times
  (min and median printed); the brokers' prefetch and pgqueuer's per-job settings are printed.
  Then the worker sweep: --sweep processes (default 1,2,4,8) at batch 1 on PostgreSQL, the pool
  (with the Redis mirror) and the naive loop, --sweep-tasks tasks each, with the CPU each spent per
  task in the PostgreSQL server, the Redis server and the worker processes (read from /proc: the
  servers' part only when they run on this machine, see CpuMeter). Ratios are printed side by
  side at the end. The figure compared is the drain time: for the brokers and pgqueuer last task
  finished minus first task finished, for the pool last completion minus first claim (from its
  ledger), for the naive loops the wall time of the workers; enqueueing and worker start-up are
  excluded for all but the naive loops. Celery/Dramatiq tasks do one Redis pipeline to record their
  finish, pgqueuer jobs record it in the worker process.
- --bound (with the sweep): two more pool columns per process count, measure only: the pool
  without the Redis mirror, and the pool without the mirror and without its ledger (``step_one``
  with its ledger rows and chain update cut off, step_variants.no_ledger: it still finishes with the
  attempt fence and claims with a lease, but writes no ledger row, so the audit would refuse the
  run). They separate what the mirror and the ledger cost from the rest of the runtime. Without a
  ledger there is no drain time from it: these two columns (and, for comparison, the pool with
  its mirror once more) are timed as the naive loop is, by the workers' wall time, less that of
  a run of one task per process.
  The start-up run varies by tens of milliseconds, so give --sweep-tasks 2000 or more (at 300
  tasks, one process count once read 2.8x for the pool with its mirror).
- --pairs N (with noop): N alternating pairs of the pool at batch 1 (PostgreSQL + Redis) and the
  naive loop, the two of a pair back to back (which runs first alternates): the ratio of each pair,
  sorted, and their median, a steadier figure on a noisy machine than a ratio of two medians.

Figures are wall-clock on a shared machine: noisy, compare within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing as mp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from datetime import timedelta
from pathlib import Path

import psycopg
import redis
from step_cost import backend_cpu  # this folder's step_cost.py (a script's folder is on sys.path)
from step_variants import no_ledger  # this folder's step_variants.py

from benchscore.common.services import pg_dsn, redis_url
from benchscore.swarm import Agent, TaskSpec, open_pool
from benchscore.swarm.agents import noop_handler
from benchscore.swarm.run import run_workers
from benchscore.swarm.stores import postgres as pg_store_module
from benchscore.swarm.stress import run_stress

CPUS = os.cpu_count() or 1
VENV_BIN = Path(sys.executable).parent


def line(name: str, seconds: float, tasks: int, extra: str = "") -> float:
    rate = tasks / seconds if seconds > 0 else float("inf")
    print(f"{name:<44} {seconds:8.2f} s {rate:12,.0f} tasks/s  {extra}", flush=True)
    return rate


class CpuMeter:
    """CPU per task spent by the PostgreSQL server (all its processes), the Redis server and this
    process's worker children (those reaped in the window, ``RUSAGE_CHILDREN``), over the windows
    between :meth:`start` and :meth:`stop`. A window spans the workers' whole life, so it holds
    their start-up too (connecting, a first plan): :meth:`stop` with ``baseline`` records a run of
    the same processes with one task each, and the figures are then per task beyond it,
    (CPU - baseline's) / (tasks - baseline's). It reads ``/proc``, so the servers' part needs them
    on this machine and readable (as root, or as their user); :attr:`why_not` says why not."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self) -> None:
        self.samples: list[tuple[dict[str, float], int]] = []
        self.base: tuple[dict[str, float], int] | None = None
        self._at: dict[str, float] | None = None
        self.why_not = ""
        try:
            with psycopg.connect(pg_dsn(), autocommit=True) as conn:
                backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
                self.postmaster = self._stat(backend)[1]  # the backend's parent
            self.redis = int(redis.Redis.from_url(redis_url()).info("server")["process_id"])
            for pid, name in ((self.postmaster, "postgres"), (self.redis, "redis")):
                if name not in Path(f"/proc/{pid}/comm").read_text():  # a pid of another machine's server
                    raise ValueError(f"process {pid} here is not {name}")
        except (OSError, ValueError, KeyError) as exc:
            self.why_not = f"servers' CPU not readable here ({exc}): only the workers' is measured"

    @classmethod
    def _stat(cls, pid: int) -> tuple[float, int, float]:
        """(own CPU seconds, parent pid, reaped children's CPU seconds) of process ``pid``: its own
        from schedstat (nanoseconds), its children's from stat (clock ticks, of their sum)."""
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return backend_cpu(pid), int(f[1]), (int(f[13]) + int(f[14])) / cls.TICK

    def _postgres(self) -> float:
        """The server's CPU so far: the postmaster's, the backends' and helpers' that exited (reaped
        by it) and those still running."""
        own, _ppid, reaped = self._stat(self.postmaster)
        total = own + reaped
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    cpu, ppid, _ = self._stat(int(d.name))
                except (OSError, ValueError, IndexError):
                    continue  # gone meanwhile
                if ppid == self.postmaster:
                    total += cpu
        return total

    @staticmethod
    def wait_gone(pid: int, timeout: float = 2.0) -> None:
        """Wait until server process ``pid`` (a backend just disconnected) has exited and been
        reaped, so that its CPU is counted before a window, not inside it."""
        deadline = time.monotonic() + timeout
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.002)

    def _now(self) -> dict[str, float]:
        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = {"workers": ch.ru_utime + ch.ru_stime}
        if not self.why_not:
            out["postgres"] = self._postgres()
            out["redis"] = self._stat(self.redis)[0]
        return out

    def start(self) -> None:
        time.sleep(0.1)  # backends of connections closed just before exit and are reaped outside the window
        self._at = self._now()

    def stop(self, tasks: int, baseline: bool = False) -> None:
        time.sleep(0.1)  # the workers' backends exit and are reaped inside it
        end, at = self._now(), self._at
        used = ({k: end[k] - at[k] for k in end}, tasks)
        if baseline:
            self.base = used
        else:
            self.samples.append(used)

    def median(self) -> dict[str, float]:
        """Median µs per task of each part over the windows measured (beyond the baseline's)."""
        if not self.samples:
            return {}
        base, n0 = self.base or ({k: 0.0 for k in self.samples[0][0]}, 0)
        return {k: statistics.median(1e6 * (cpu[k] - base[k]) / (n - n0) for cpu, n in self.samples)
                for k in self.samples[0][0]}


# ---- L01 -------------------------------------------------------------------------------------
def l01(store: str, redis: str | None, tasks: int, agents: int) -> None:
    r = run_stress(store, total_agents=agents, total_tasks=tasks, redis_url=redis)
    print(f"{'L01 ' + store.split(':')[0] + (' + redis' if redis else ''):<44} wall {r.wall_time_s:.2f} s "
          f"(setup {r.setup_time_s:.2f} + run {r.run_time_s:.2f} + converge/audit {r.check_time_s:.2f}); "
          f"run phase {r.tasks_per_second:,.0f} tasks/s; whole {tasks / r.wall_time_s:,.0f} tasks/s; "
          f"L01_PASS={r.L01_PASS} duplicates={len(r.duplicate_claims)} agents={r.participating_agents}", flush=True)


# ---- naive baselines -------------------------------------------------------------------------
def _naive_sqlite_worker(path: str) -> None:
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None, timeout=60)
    conn.execute("PRAGMA synchronous = NORMAL")
    while True:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT id FROM t WHERE status = 'pending' ORDER BY p DESC, id LIMIT 1").fetchone()
        if row is None:
            conn.execute("COMMIT")
            return
        conn.execute("UPDATE t SET status = 'claimed' WHERE id = ?", row)
        conn.execute("COMMIT")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE t SET status = 'done', p = p + 0.5 WHERE id = ?", row)
        conn.execute("COMMIT")


def naive_sqlite(tasks: int, procs: int = CPUS, label: str = "naive SQLite (2 tx/task, no ledger)") -> float:
    import sqlite3

    tmp = tempfile.mkdtemp(prefix="bs-naive-")
    path = f"{tmp}/naive.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, status TEXT, p REAL)")
    conn.execute("CREATE INDEX t_pending ON t (p DESC, id) WHERE status = 'pending'")
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO t (status, p) VALUES ('pending', 0)", ([] for _ in range(tasks)))
    conn.execute("COMMIT")
    conn.close()
    workers = [mp.get_context("fork").Process(target=_naive_sqlite_worker, args=(path,)) for _ in range(procs)]
    t0 = time.perf_counter()
    for p in workers:
        p.start()
    for p in workers:
        p.join()
    rate = line(label, time.perf_counter() - t0, tasks)
    shutil.rmtree(tmp)
    return rate


def _naive_pg_worker(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        while True:
            row = conn.execute(
                "UPDATE t SET status = 'claimed' WHERE id = (SELECT id FROM t WHERE status = 'pending' "
                "ORDER BY p DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id").fetchone()
            if row is None:
                return
            conn.execute("UPDATE t SET status = 'done', p = p + 0.5 WHERE id = %s", row)


def naive_pg(tasks: int, procs: int = CPUS, label: str = "naive PostgreSQL (1 task/statement, no ledger)",
             meter: CpuMeter | None = None, baseline: bool = False) -> float:
    dsn = pg_dsn()
    schema = f"bs_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE TABLE {schema}.t (id bigserial PRIMARY KEY, status text, p float8)")
        conn.execute(f"CREATE INDEX ON {schema}.t (p DESC, id) WHERE status = 'pending'")
        conn.execute(f"INSERT INTO {schema}.t (status, p) SELECT 'pending', 0 FROM generate_series(1, %s)", (tasks,))
        setup_backend = conn.info.backend_pid
    workers = [mp.get_context("fork").Process(target=_naive_pg_worker, args=(dsn, schema)) for _ in range(procs)]
    if meter:
        meter.wait_gone(setup_backend)
        meter.start()
    t0 = time.perf_counter()
    for p in workers:
        p.start()
    for p in workers:
        p.join()
    rate = line(label, time.perf_counter() - t0, tasks)
    if meter:
        meter.stop(tasks, baseline)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return rate


# ---- no-op comparison ------------------------------------------------------------------------
def default_noop_batch(tasks: int) -> int:
    return max(1, min(512, tasks // (CPUS * 4)))


def _pool_run(store: str, redis_url_: str | None, tasks: int, procs: int, batch: int, read, *,
              step: str | None = None, meter: CpuMeter | None = None, baseline: bool = False):
    """``tasks`` no-op tasks through the pool in ``procs`` worker processes, on a run of their own:
    (seconds from the workers' start to the last one's exit, ``read(pool)`` taken before the run is
    deleted). With ``step`` the forked workers run that statement in place of ``step_one`` (the
    parent's query table is what they inherit); ``meter`` measures the workers' window."""
    run_id = f"noop-{uuid.uuid4().hex[:8]}"
    queries = pg_store_module.Q
    original = queries["step_one"]
    with open_pool(store, run_id, redis_url=redis_url_) as pool:
        pool.create_run()
        pool.add_tasks(TaskSpec(capability="noop", payload={}) for _ in range(tasks))
        agents = [Agent(f"a{i}", ["noop"], noop_handler) for i in range(procs)]
        if meter:
            meter.start()
        queries["step_one"] = step or original
        try:
            t0 = time.perf_counter()
            run_workers(store, run_id, agents, processes=procs, batch=batch, redis_url=redis_url_)
            seconds = time.perf_counter() - t0
        finally:
            queries["step_one"] = original
        if meter:
            meter.stop(tasks, baseline)
        out = read(pool)
        pool.delete_run()
    return seconds, out


def pool_noop(store: str, redis_url_: str | None, tasks: int, label: str, batch: int, procs: int = CPUS,
              meter: CpuMeter | None = None, baseline: bool = False) -> float:
    outer, rows = _pool_run(store, redis_url_, tasks, procs, batch, lambda pool: pool.event_rows(), meter=meter,
                            baseline=baseline)
    done = [e[9] for e in rows if e[3] == "complete"]
    first_claim = min(e[9] for e in rows if e[3] == "claim")
    assert len(done) == tasks, (len(done), tasks)
    drain = max(done) - first_claim  # from the first claim: a batch's work is inside the window
    return line(f"no-op: this pool, {label}, batch={batch}, {procs} proc", drain, tasks,
                f"(incl. process start: {outer:.2f} s)")


def pool_wall(store: str, redis_url_: str | None, tasks: int, procs: int, step: str | None = None) -> float:
    """Seconds the pool's workers (``procs`` processes, batch 1) take for ``tasks`` no-op tasks, from
    their start to the last one's exit; with ``step`` in place of ``step_one``."""
    seconds, done = _pool_run(store, redis_url_, tasks, procs, 1, lambda pool: pool.counts()["done"], step=step)
    assert done == tasks, (done, tasks)
    return seconds


def naive_wall(tasks: int, procs: int) -> float:
    """The naive loop's wall time for ``tasks`` in ``procs`` processes (its line not printed)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return tasks / naive_pg(tasks, procs)


def bound_rates(store: str, redis_url_: str, tasks: int, procs: int, repeat: int) -> dict[str, float]:
    """Median tasks/s, by wall time less a start-up run of one task per process, of the pool with its
    mirror, without it, without it and its ledger (measure only), and of the naive loop; the four
    take turns, ``repeat`` rounds."""
    step = no_ledger(pg_store_module.Q["step_one"])
    sides = {"pool + Redis": lambda n: pool_wall(store, redis_url_, n, procs),
             "pool, no mirror": lambda n: pool_wall(store, None, n, procs),
             "pool, no mirror, no ledger": lambda n: pool_wall(store, None, n, procs, step),
             "naive loop": lambda n: naive_wall(n, procs)}
    start = {k: statistics.median(f(procs) for _ in range(3)) for k, f in sides.items()}
    rates: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(repeat):
        for k, f in sides.items():
            rates[k].append((tasks - procs) / (f(tasks) - start[k]))
    out = {k: statistics.median(v) for k, v in rates.items()}
    print(f"   bound {procs} proc: " + ", ".join(f"{k} {v:,.0f}" for k, v in out.items()) + " tasks/s", flush=True)
    return out


CELERY_APP = """
import time, redis
from celery import Celery
URL = {url!r}
app = Celery("bsbench", broker=URL)
app.conf.update(task_ignore_result=True, worker_hijack_root_logger=False, task_default_queue={queue!r},
                broker_connection_retry_on_startup=True, worker_enable_remote_control=False)
_r = redis.Redis.from_url(URL)

@app.task(name="noop")
def noop():
    now = repr(time.time())
    p = _r.pipeline(transaction=False)
    p.setnx({key!r} + ":first", now)
    p.set({key!r} + ":last", now)
    p.incr({key!r} + ":n")
    p.execute()
"""

DRAMATIQ_APP = """
import time, redis, dramatiq
from dramatiq.brokers.redis import RedisBroker
URL = {url!r}
broker = RedisBroker(url=URL, namespace={queue!r})
dramatiq.set_broker(broker)
_r = redis.Redis.from_url(URL)

@dramatiq.actor(queue_name="noop", max_retries=0)
def noop():
    now = repr(time.time())
    p = _r.pipeline(transaction=False)
    p.setnx({key!r} + ":first", now)
    p.set({key!r} + ":last", now)
    p.incr({key!r} + ":n")
    p.execute()
"""


def _wait_for(r: redis.Redis, key: str, tasks: int, proc: subprocess.Popen, timeout: float = 600) -> float:
    deadline = time.time() + timeout
    while time.time() < deadline:
        n = int(r.get(key + ":n") or 0)
        if n >= tasks:
            return float(r.get(key + ":last")) - float(r.get(key + ":first"))
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited with {proc.returncode}")
        time.sleep(0.1)
    raise TimeoutError(key)


def external_noop(kind: str, tasks: int) -> float:
    url = redis_url()
    r = redis.Redis.from_url(url)
    tag = uuid.uuid4().hex[:8]
    key, queue = f"bs_bench:{tag}", f"bs_bench_{tag}"
    tmp = Path(tempfile.mkdtemp(prefix="bs-bench-"))
    src = CELERY_APP if kind == "celery" else DRAMATIQ_APP
    name = f"bs_{kind}_app_{tag}"  # a module of its own per run: a repeat must not reuse the last run's queue
    (tmp / f"{name}.py").write_text(textwrap.dedent(src.format(url=url, queue=queue, key=key)))
    env = {**os.environ, "PYTHONPATH": str(tmp)}
    sys.path.insert(0, str(tmp))
    try:
        module = __import__(name)
        if kind == "celery":
            conf = module.app.conf
            settings = (f"worker_prefetch_multiplier={conf.worker_prefetch_multiplier} x concurrency {CPUS} = "
                        f"{conf.worker_prefetch_multiplier * CPUS} messages reserved ahead, "
                        f"task_acks_late={conf.task_acks_late}")
        else:
            from dramatiq.worker import QUEUE_PREFETCH

            settings = (f"queue_prefetch={QUEUE_PREFETCH or 2} per worker process (2 x --threads 1 unless "
                        f"dramatiq_queue_prefetch is set), {CPUS} processes, acks after the actor returns")
        print(f"   {kind} prefetch: {settings}", flush=True)
        for _ in range(tasks):  # enqueue everything first (not timed)
            if kind == "celery":
                module.noop.apply_async()
            else:
                module.noop.send()
        if kind == "celery":
            cmd = [str(VENV_BIN / "celery"), "-A", name, "worker", "--pool=prefork",
                   f"--concurrency={CPUS}", "--loglevel=WARNING", "-Q", queue, "--without-gossip",
                   "--without-mingle", "--without-heartbeat"]
        else:
            cmd = [str(VENV_BIN / "dramatiq"), name, "--processes", str(CPUS), "--threads", "1",
                   "--queues", "noop"]
        proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            drain = _wait_for(r, key, tasks, proc)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        return line(f"no-op: {kind} (Redis broker)", drain, tasks)
    finally:
        sys.path.remove(str(tmp))
        sys.modules.pop(name, None)
        for k in r.scan_iter(match=f"*{tag}*", count=1000):
            r.delete(k)
        shutil.rmtree(tmp)


# ---- pgqueuer -------------------------------------------------------------------------------
PGQUEUER_BATCH = 1  # jobs per dequeue, and the size of its completion log buffer (per-job semantics)


def _pgqueuer_worker(dsn: str, schema: str, out) -> None:
    import asyncio

    from pgqueuer import PsycopgDriver, Queries, QueueManager

    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True, options=f"-c search_path={schema}")
        qm = QueueManager(Queries(PsycopgDriver(conn)))
        times: list[float] = []

        @qm.entrypoint("noop")
        async def noop(job) -> None:
            times.append(time.time())

        await qm.run(batch_size=PGQUEUER_BATCH, mode=_drain(), dequeue_timeout=timedelta(seconds=1),
                     log_aggregation_interval=timedelta(0))
        await conn.close()
        out.send(times)

    asyncio.run(main())


def _drain():
    from pgqueuer.domain.types import QueueExecutionMode

    return QueueExecutionMode.drain


def pgqueuer_noop(tasks: int, procs: int = CPUS) -> float:
    import asyncio

    from pgqueuer import PsycopgDriver, Queries
    from pgqueuer.domain.settings import DBSettings

    dsn = pg_dsn()
    schema = f"bs_pgq_{uuid.uuid4().hex[:8]}"

    async def setup() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
            await c.execute(f"CREATE SCHEMA {schema}")
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True,
                                                         options=f"-c search_path={schema}") as c:
            q = Queries(PsycopgDriver(c))
            await q.install()
            for i in range(0, tasks, 1000):
                k = min(1000, tasks - i)
                await q.enqueue(["noop"] * k, [None] * k, [0] * k)

    asyncio.run(setup())
    print(f"   pgqueuer settings: batch_size={PGQUEUER_BATCH} (jobs per dequeue, and completion log buffer "
          f"max_size={PGQUEUER_BATCH}), {procs} worker processes x 1 QueueManager, durability="
          f"{DBSettings().durability.value} (all tables logged), synchronous_commit on", flush=True)
    ctx = mp.get_context("fork")
    pipes, workers = [], []
    for _ in range(procs):
        parent, child = ctx.Pipe(duplex=False)
        pipes.append(parent)
        workers.append(ctx.Process(target=_pgqueuer_worker, args=(dsn, schema, child)))
    for p in workers:
        p.start()
    times = [t for parent in pipes for t in parent.recv()]
    for p in workers:
        p.join()
    with psycopg.connect(dsn, autocommit=True) as conn:
        left = conn.execute(f"SELECT count(*) FROM {schema}.pgqueuer").fetchone()[0]
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    assert len(times) == tasks and left == 0, (len(times), tasks, left)
    return line("no-op: pgqueuer (PostgreSQL)", max(times) - min(times), tasks)


# ---- repeats and the table -------------------------------------------------------------------
def repeated(name: str, repeat: int, fn) -> tuple[float, float]:
    """(min, median) tasks/s of ``repeat`` runs of ``fn``."""
    rates = sorted(fn() for _ in range(repeat))
    low, med = rates[0], statistics.median(rates)
    print(f"   {name}: min {low:,.0f} / median {med:,.0f} tasks/s over {repeat} runs", flush=True)
    return low, med


def noop_section(args, tmp: str, pg_store: str, redis_store: str) -> None:
    n, rep = args.noop_tasks, args.repeat
    batch = default_noop_batch(n)
    print(f"-- {n} no-op tasks, {CPUS} worker processes each, {rep} runs each; drain time = last finish - first "
          "finish (first claim for the pool)", flush=True)
    k = iter(range(10**6))
    rows = {
        f"this pool, SQLite, batch {batch}": lambda: pool_noop(f"sqlite:///{tmp}/noop{next(k)}.db", None, n,
                                                                "SQLite", batch),
        "this pool, SQLite, batch 1": lambda: pool_noop(f"sqlite:///{tmp}/noop{next(k)}.db", None, n, "SQLite", 1),
        "bare SQLite loop, 2 transactions per task, no ledger": lambda: naive_sqlite(n),
        f"this pool, PostgreSQL + Redis, batch {batch}": lambda: pool_noop(pg_store, redis_store, n,
                                                                           "PostgreSQL + Redis mirror", batch),
        "this pool, PostgreSQL + Redis, batch 1": lambda: pool_noop(pg_store, redis_store, n,
                                                                    "PostgreSQL + Redis mirror", 1),
        "naive SKIP LOCKED loop on PostgreSQL, no ledger": lambda: naive_pg(n),
        "Celery, Redis broker": lambda: external_noop("celery", n),
        "Dramatiq, Redis broker": lambda: external_noop("dramatiq", n),
        "pgqueuer, PostgreSQL, batch_size 1": lambda: pgqueuer_noop(n),
    }
    skip = [w.strip() for w in args.without.split(",") if w.strip()]
    results = {name: repeated(name, rep, fn) for name, fn in rows.items()
               if not any(w.lower() in name.lower() for w in skip)}
    pairs = []
    if args.pairs:
        print(f"-- {args.pairs} alternating pairs: the pool at batch 1 (PostgreSQL + Redis) and the naive loop",
              flush=True)
    for i in range(args.pairs):
        first, second = ("pool", "naive") if i % 2 == 0 else ("naive", "pool")  # which runs first alternates
        rate = {}
        for which in (first, second):
            rate[which] = (pool_noop(pg_store, redis_store, n, "PostgreSQL + Redis mirror", 1) if which == "pool"
                           else naive_pg(n))
        pairs.append(rate["pool"] / rate["naive"])
    sweep, bounds = {}, {}
    if args.sweep:
        counts = [int(x) for x in args.sweep.split(",")]
        m = args.sweep_tasks
        print(f"-- worker sweep: {m} no-op tasks at batch 1 on PostgreSQL, processes {counts}", flush=True)
        for procs in counts:
            pool_cpu, naive_cpu = CpuMeter(), CpuMeter()
            pool_noop(pg_store, redis_store, procs, "PostgreSQL + Redis mirror, start-up baseline", 1, procs=procs,
                      meter=pool_cpu, baseline=True)
            naive_pg(procs, procs, f"naive PostgreSQL loop, {procs} proc, start-up baseline", meter=naive_cpu,
                     baseline=True)
            pool_rate = repeated(f"pool {procs} proc", rep, lambda p=procs, mt=pool_cpu: pool_noop(
                pg_store, redis_store, m, "PostgreSQL + Redis mirror", 1, procs=p, meter=mt))
            naive_rate = repeated(f"naive {procs} proc", rep, lambda p=procs, mt=naive_cpu: naive_pg(
                m, p, f"naive PostgreSQL loop, {p} proc", meter=mt))
            sweep[procs] = (pool_rate, naive_rate, pool_cpu, naive_cpu)
            if args.bound:
                bounds[procs] = bound_rates(pg_store, redis_store, m, procs, rep)
    print(f"\n| no-op tasks through ({n} tasks, {CPUS} worker processes, {rep} runs) | tasks/s min | tasks/s median |")
    print("| --- | --- | --- |")
    for name, (low, med) in results.items():
        print(f"| {name} | {low:,.0f} | {med:,.0f} |")
    print("\nratios of medians (of the rows measured):")
    pg1 = "this pool, PostgreSQL + Redis, batch 1"
    for other in ("naive SKIP LOCKED loop on PostgreSQL, no ledger", "Celery, Redis broker", "Dramatiq, Redis broker",
                  "pgqueuer, PostgreSQL, batch_size 1"):
        if pg1 in results and other in results:
            print(f"  pool PostgreSQL + Redis batch 1 / {other} = {results[pg1][1] / results[other][1]:.2f}x")
    sq1, bare = "this pool, SQLite, batch 1", "bare SQLite loop, 2 transactions per task, no ledger"
    if sq1 in results and bare in results:
        print(f"  pool SQLite batch 1 / bare SQLite 2-transaction loop = {results[sq1][1] / results[bare][1]:.2f}x")
    if pairs:
        pairs.sort()
        print(f"\npool PostgreSQL + Redis batch 1 / naive loop, {len(pairs)} alternating pairs of {n} tasks: "
              f"median {statistics.median(pairs):.2f}x (sorted: {', '.join(f'{r:.2f}' for r in pairs)})")
    if sweep:
        print(f"\n| worker processes ({args.sweep_tasks} tasks, batch 1, PostgreSQL) | pool + Redis tasks/s (median) "
              "| naive loop tasks/s (median) | pool / naive |")
        print("| --- | --- | --- | --- |")
        for procs, (p, q, _pm, _qm) in sweep.items():
            print(f"| {procs} | {p[1]:,.0f} | {q[1]:,.0f} | {p[1] / q[1]:.2f}x |")
        if bounds:
            names = list(next(iter(bounds.values())))
            print(f"\nWhat the mirror and the ledger cost (--bound; measure only: without a ledger the audit "
                  f"would refuse the run), {args.sweep_tasks} tasks, batch 1, PostgreSQL, tasks/s by wall time "
                  "less a start-up run, medians, and each against the naive loop in the same turns:")
            print("| worker processes | " + " | ".join(names) + " |")
            print("|" + " --- |" * (len(names) + 1))
            for procs, b in bounds.items():
                naive = b["naive loop"]
                print(f"| {procs} | " + " | ".join(f"{b[k]:,.0f} ({b[k] / naive:.2f}x)" for k in names) + " |")
        cpu_note = next(iter(sweep.values()))[2].why_not
        print(f"\nCPU per task in the sweep, µs: medians over the runs, beyond a start-up baseline (the same "
              f"processes with one task each). Where the CPU in all times the rate nears {CPUS} CPU-seconds per "
              "second, this machine's CPUs are the limit." + (f" {cpu_note}." if cpu_note else ""))
        parts = ("postgres", "redis", "workers")
        print("| worker processes | " + " | ".join(f"pool: {k}" for k in parts) + " | pool: in all | "
              + " | ".join(f"naive: {k}" for k in parts if k != "redis") + " | naive: in all | pool / naive CPU |")
        print("|" + " --- |" * 9)
        for procs, (_p, _q, pm, qm) in sweep.items():
            pc, qc = pm.median(), qm.median()
            pool_all, naive_all = sum(pc.values()), sum(v for k, v in qc.items() if k != "redis")
            print(f"| {procs} | " + " | ".join(f"{pc.get(k, float('nan')):,.0f}" for k in parts)
                  + f" | {pool_all:,.0f} | " + " | ".join(f"{qc.get(k, float('nan')):,.0f}" for k in parts if k != "redis")
                  + f" | {naive_all:,.0f} | {pool_all / naive_all:.2f}x |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=131072)
    ap.add_argument("--agents", type=int, default=128)
    ap.add_argument("--noop-tasks", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each no-op measurement (min and median printed)")
    ap.add_argument("--sweep", default="1,2,4,8", help="worker process counts of the sweep ('' for none)")
    ap.add_argument("--sweep-tasks", type=int, default=2000)
    ap.add_argument("--bound", action="store_true", help="with the sweep: also the pool without its Redis mirror "
                    "and without mirror and ledger (measure only), to show what each costs")
    ap.add_argument("--pairs", type=int, default=0, help="alternating pairs of the pool at batch 1 and the naive "
                    "loop on PostgreSQL (with noop; default 0: none)")
    ap.add_argument("--without", default="", help="comma-separated rows of the no-op table to leave out (e.g. "
                    "pgqueuer, to run this file against code whose environment lacks it)")
    ap.add_argument("--only", action="append", choices=["l01-sqlite", "naive-sqlite", "l01-pg", "naive-pg", "noop"])
    args = ap.parse_args()
    if args.pairs < 0:
        ap.error("--pairs must be 0 or more")
    only = set(args.only or ["l01-sqlite", "naive-sqlite", "l01-pg", "naive-pg", "noop"])
    print(f"logical CPUs: {CPUS}; figures are noisy (shared 2-core machine)", flush=True)
    tmp = tempfile.mkdtemp(prefix="bs-bench-l01-")
    pg_schema = f"bs_bench_{uuid.uuid4().hex[:8]}"
    pg_store = f"{pg_dsn()}?schema={pg_schema}"
    redis_prefix_ = f"bs_bench_{uuid.uuid4().hex[:8]}:"
    redis_store = f"{redis_url()}?prefix={redis_prefix_}"
    try:
        if "l01-sqlite" in only:
            l01(f"sqlite:///{tmp}/l01.db", None, args.tasks, args.agents)
        if "naive-sqlite" in only:
            naive_sqlite(args.tasks)
        if "l01-pg" in only:
            l01(pg_store, redis_store, args.tasks, args.agents)
        if "naive-pg" in only:
            naive_pg(args.tasks)
        if "noop" in only:
            noop_section(args, tmp, pg_store, redis_store)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        with psycopg.connect(pg_dsn(), autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {pg_schema} CASCADE")
        r = redis.Redis.from_url(redis_url())
        keys = list(r.scan_iter(match=redis_prefix_ + "*", count=1000))
        if keys:
            r.delete(*keys)


if __name__ == "__main__":
    main()
