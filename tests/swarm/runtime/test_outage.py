"""Issue 15 point 2: a run survives its store going away for a while (a PostgreSQL of the test's
own restarted or stopped mid-run; SQLite locked by another connection): every worker and the
coordinator retry with backoff up to ``--max-outage``, nothing is claimed or completed twice, and
the run ends with exit 0, its report, every task done once and a passing audit. Longer than the
limit, the run stops with one line."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import closing

import orjson
import psycopg
import pytest

from benchscore.common.errors import ServiceUnavailable
from benchscore.swarm import Agent, TaskSpec, audit_pool, open_pool, run_swarm
from benchscore.swarm.agents import noop_handler

from .procs import (
    assert_each_task_done_once,
    completions,
    finish,
    one_error_line,
    start,
    wait_for,
    write_agents,
    write_tasks,
)


@pytest.mark.pg
def test_pool_reconnects_through_a_stopped_server(own_pg):
    """The root cause: a reconnect that fails (the server is still down) was an error of its own that
    escaped the retry loop (``connect_pg(retries=0)`` raised ServiceUnavailable at once). Now it is
    one more failed attempt, retried until the server is back."""
    url = own_pg.fresh_url()
    with open_pool(url, "reconnect") as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="x", payload={})])
        own_pg.stop()
        threading.Timer(2.0, own_pg.start).start()
        t0 = time.monotonic()
        assert pool.counts()["pending"] == 1  # waited for the server, reconnecting with backoff
        assert time.monotonic() - t0 >= 1.5
        [claim] = pool.claim("ag", ["x"])
        pool.complete(claim, 0.5, "ok")
        assert pool.service_log.retries["postgresql"] >= 2
        assert audit_pool(pool).verdict == "PASS"


@pytest.mark.pg
def test_outage_limit_is_one_line(own_pg):
    url = own_pg.fresh_url()
    with open_pool(url, "limit", max_outage=1.0) as pool:
        pool.create_run()
        own_pg.stop()
        t0 = time.monotonic()
        with pytest.raises(ServiceUnavailable, match=r"longer than the outage limit of 1 s \(--max-outage\)"):
            pool.counts()
        assert 1.0 <= time.monotonic() - t0 < 10


class _CommitThenBreak:
    """A connection whose next transaction commits and then loses the connection before the
    client hears of it: the ambiguous COMMIT of a server going down."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self._conn = conn
        self.armed = True

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def transaction(self):
        outer = self

        class Tx:
            def __enter__(self):
                self._tx = outer._conn.transaction()
                return self._tx.__enter__()

            def __exit__(self, *exc):
                out = self._tx.__exit__(*exc)
                if exc[0] is None and outer.armed:
                    outer.armed = False
                    outer._conn.close()
                    raise psycopg.OperationalError("server closed the connection unexpectedly")
                return out

        return Tx()


@pytest.mark.pg
def test_a_claim_whose_commit_went_through_is_not_claimed_again(pg_url):
    """The connection breaks after the claim's COMMIT reached the server: the retry finds the claim's
    ledger rows and returns that claim; it does not claim another batch (which would leave the first
    one held by nobody until its lease expires)."""
    with open_pool(pg_url, "ambiguous") as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="x", payload={}, pheromone=float(i)) for i in range(6)])
        pool.conn = _CommitThenBreak(pool.conn)
        claims = pool.claim("ag", ["x"], limit=2)
        assert pool.service_log.retries["postgresql"] == 1
        assert [c.pheromone for c in claims] == [5.0, 4.0]
        assert pool.counts() == {"pending": 4, "claimed": 2, "done": 0, "failed": 0}
        pool.conn = _CommitThenBreak(pool.conn)
        assert pool.complete_many([(c, 0.5, "ok") for c in claims]) == [True, True]  # the commit's result
        assert pool.counts()["done"] == 2
        rest = pool.claim("ag", ["x"], limit=10)
        pool.complete_many([(c, 0.5, "ok") for c in rest])
        report = audit_pool(pool)
        assert report.verdict == "PASS" and report.claims == 6 and report.completions == 6
        assert report.lease_expiries == 0


@pytest.mark.pg
def test_swarm_run_survives_pg_restart(own_pg, tmp_path):
    """``swarm run`` while the server is restarted (``pg_ctl restart -m fast``): exit 0 and a report."""
    url = own_pg.fresh_url()
    n = 160
    tasks = write_tasks(tmp_path, n, seconds=0.02, fail_every=16)
    agents = write_agents(tmp_path, ["ag1", "ag2", "ag3", "ag4"])
    proc = start("swarm", "run", tasks, agents, "--store", url, "--run-id", "restart", "--processes", "2",
                 "--blobs", tmp_path / "blobs", "--output", tmp_path / "run.json")
    wait_for(lambda: completions(url, "restart") >= 10, proc)
    own_pg.restart()
    code, _out, err = finish(proc)
    assert code == 0, err[-3000:]
    report = orjson.loads((tmp_path / "run.json").read_bytes())
    assert report["completed_tasks"] == n and report["audit_verdict"] == "PASS" and report["converged"]
    assert report["service"]["retries"]["postgresql"] >= 1
    assert_each_task_done_once(url, "restart", n)


@pytest.mark.pg
def test_swarm_stress_survives_pg_stopped_for_seconds(own_pg, tmp_path):
    """``swarm stress`` (reduced) while the server is stopped for 3 s and started again."""
    url = own_pg.fresh_url()
    n = 3000
    proc = start("swarm", "stress", "--agents", "4", "--tasks", n, "--processes", "2", "--batch", "8",
                 "--store", url, "--output", tmp_path / "l01.json")
    wait_for(lambda: completions(url) >= 100, proc)
    own_pg.stop()
    time.sleep(3)
    own_pg.start()
    code, _out, err = finish(proc)
    assert code == 1, err[-3000:]  # reduced (below L01's size): exit 1, the report written
    report = orjson.loads((tmp_path / "l01.json").read_bytes())
    assert report["completed_tasks"] == n and report["duplicate_claims"] == [] and report["failed_tasks"] == 0
    assert report["audit_verdict"] == "PASS" and report["L01_verdict"] == "reduced"
    assert report["service"]["retries"]["postgresql"] >= 4  # every worker and the coordinator retried
    assert_each_task_done_once(url, report["run_id"], n)


# ---- SQLite: database is locked -----------------------------------------------------------------
LOCKER = textwrap.dedent("""
    import sqlite3, sys, time
    path, holds, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    for _ in range(holds):
        c = sqlite3.connect(path, isolation_level=None, timeout=60)
        c.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        time.sleep(seconds)
        c.execute("COMMIT")
        c.close()
        time.sleep(0.2)
    print("done", flush=True)
""")


def _locker(path, holds: int, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(path), str(holds), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.parametrize("holds", [3])
def test_sqlite_lock_storm_is_ridden_out(tmp_path, holds):
    """Another connection holds the database exclusively locked again and again (1 s each) while the
    run goes on: the run waits each lock out and finishes with every task done once."""
    db = tmp_path / "run.db"
    url = f"sqlite:///{db}"
    n = 200
    with open_pool(url, "storm") as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="x", payload={}) for _ in range(n)])

    def slow(claim):
        time.sleep(0.01)
        return noop_handler(claim)

    locker = _locker(db, holds, 1.0)
    report, audit = run_swarm(url, "storm", [Agent(f"ag{i}", ["x"], slow) for i in range(4)], processes=2)
    assert locker.wait(60) == 0
    assert report.completed_tasks == n and audit.verdict == "PASS"
    assert_each_task_done_once(url, "storm", n)


def test_sqlite_locked_longer_than_the_limit_is_one_line(tmp_path):
    """``--max-outage 1`` and a lock held for 4 s: ``swarm run`` stops with one line naming the limit."""
    db = tmp_path / "run.db"
    tasks = write_tasks(tmp_path, 4)
    agents = write_agents(tmp_path, ["ag1"])
    with open_pool(f"sqlite:///{db}", "other") as pool:  # the database exists (another run in it)
        pool.create_run()
    locker = _locker(db, 1, 4.0)
    proc = start("swarm", "run", tasks, agents, "--store", f"sqlite:///{db}", "--run-id", "locked",
                 "--max-outage", "1", "--blobs", tmp_path / "blobs", "--output", tmp_path / "run.json")
    code, _out, err = finish(proc)
    locker.wait(60)
    assert code == 2
    line = one_error_line(err)
    assert "longer than the outage limit of 1 s" in line and "locked" in line
    assert not (tmp_path / "run.json").exists()
    with closing(sqlite3.connect(db)) as c:
        assert c.execute("SELECT run_id FROM swarm_runs").fetchall() == [("other",)]


@pytest.mark.redis
def test_swarm_run_survives_a_redis_restart(own_redis, tmp_path):
    """The mirror's Redis (a redis-server of the test's own, no persistence) is killed mid-run and
    started again empty: the run goes on (the store is the source of truth), the mirror is rebuilt
    from the ledger, and the report says it is consistent. (The simulated outage of the existing
    test_redis.py::test_unreachable_redis_mid_run_is_retried_and_reported stays.)"""
    store = f"sqlite:///{tmp_path}/run.db"
    n = 120
    tasks = write_tasks(tmp_path, n, seconds=0.02)
    agents = write_agents(tmp_path, ["ag1", "ag2"])
    proc = start("swarm", "run", tasks, agents, "--store", store, "--redis", own_redis.url, "--run-id", "redis",
                 "--processes", "2", "--blobs", tmp_path / "blobs", "--output", tmp_path / "run.json")
    wait_for(lambda: completions(store, "redis") >= 10, proc)
    own_redis.stop()
    time.sleep(0.5)
    own_redis.start()
    code, _out, err = finish(proc)
    assert code == 0, err[-3000:]
    report = orjson.loads((tmp_path / "run.json").read_bytes())
    assert report["completed_tasks"] == n and report["audit_verdict"] == "PASS"
    assert report["service"]["retries"]["redis"] >= 1
    assert report["redis_mirror"]["consistent"]
    assert_each_task_done_once(store, "redis", n)
