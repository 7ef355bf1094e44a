"""Several processes on one shared pool; a worker killed with kill -9 mid-task."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from benchscore.swarm import Agent, StaleClaim, TaskSpec, audit_pool
from benchscore.swarm.agents import noop_handler
from benchscore.swarm.run import run_workers
from benchscore.swarm.tasks import Claim


def test_concurrent_claims_from_several_processes_never_duplicate(new_pool, store_url):
    pool = new_pool()
    n = 600
    pool.add_tasks(TaskSpec(capability=f"c{i % 3}", payload={}) for i in range(n))
    def busy(claim):  # 1 ms of work, so no process can drain the pool before the others start
        time.sleep(0.001)
        return noop_handler(claim)

    agents = [Agent(f"ag{i}", ["c0", "c1", "c2"], busy) for i in range(12)]
    stats, service, crashed = run_workers(store_url, pool.run_id, agents, processes=3, batch=4)
    assert crashed == 0
    assert stats.completed == n and stats.stale == 0
    report = audit_pool(pool)
    assert report.verdict == "PASS"
    assert report.duplicate_claim_count == 0 and report.claims == n
    assert report.tasks_done == n and report.every_task_accounted_for
    assert len(report.participating_agents) == 12
    assert pool.counts()["done"] == n


WORKER = textwrap.dedent("""
    import sys, time
    from benchscore.swarm import open_pool
    pool = open_pool(sys.argv[1], sys.argv[2])
    claim = pool.claim("doomed", ["x"], limit=1)[0]
    print(claim.task_id, claim.attempt, flush=True)
    time.sleep(120)
""")


def _claim_and_get_killed(url: str, run_id: str) -> tuple[int, int]:
    proc = subprocess.Popen([sys.executable, "-c", WORKER, url, run_id], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        task_id, attempt = map(int, line.split())
        os.kill(proc.pid, signal.SIGKILL)  # kill -9 mid-task
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    return task_id, attempt


@pytest.mark.parametrize("policy", ["requeue", "fail"])
def test_kill_9_worker_loses_its_lease(new_pool, store_url, policy):
    pool = new_pool(crash_policy=policy, lease_seconds=0.5)
    [tid] = pool.add_tasks([TaskSpec(capability="x", payload={}, pheromone=0.2)])
    task_id, attempt = _claim_and_get_killed(store_url, pool.run_id)
    assert (task_id, attempt) == (tid, 1)
    assert pool.counts()["claimed"] == 1
    time.sleep(0.6)
    rescued = pool.claim("rescuer", ["x"])
    if policy == "requeue":
        assert [(c.task_id, c.attempt) for c in rescued] == [(tid, 2)]
        pool.complete(rescued[0], 0.7, "rescued")
        assert pool.counts()["done"] == 1
        assert pool.pheromones()[0][2] == pytest.approx(0.9)
    else:
        assert rescued == []
        assert pool.counts()["failed"] == 1
        assert pool.pheromones()[0][2] == pytest.approx(-0.8)
    # the dead worker's completion, had it been sent late, is refused by attempt fencing
    ghost = Claim(tid, 1, "doomed", "x", "{}", 0.2, 3, 0.0)
    with pytest.raises(StaleClaim):
        pool.complete(ghost, 1.0, "from beyond")
    report = audit_pool(pool)
    assert report.verdict == "PASS" and report.lease_expiries == 1
    assert "doomed" in report.participating_agents


def test_run_survives_a_killed_worker_process(new_pool, store_url):
    """A forked worker gets SIGKILL while it holds claims; the others wait for its leases and finish."""
    pool = new_pool(crash_policy="requeue", lease_seconds=0.5)
    n = 40
    pool.add_tasks(TaskSpec(capability="x", payload={}) for _ in range(n))
    seen = {"n": 0}

    def doomed(claim):
        seen["n"] += 1
        if seen["n"] == 3:  # mid-task, holding this batch: kill -9 of its own worker process
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.01)
        return noop_handler(claim)

    def steady(claim):
        time.sleep(0.01)
        return noop_handler(claim)

    agents = [Agent("victim", ["x"], doomed), Agent("ag1", ["x"], steady), Agent("ag2", ["x"], steady),
              Agent("ag3", ["x"], steady)]
    stats, _, crashed = run_workers(store_url, pool.run_id, agents, processes=2, batch=2)
    assert crashed == 1
    assert pool.counts() == {"pending": 0, "claimed": 0, "done": n, "failed": 0}
    report = audit_pool(pool)
    assert report.verdict == "PASS" and report.duplicate_claim_count == 0
    assert report.lease_expiries >= 1  # the victim's claims came back through their leases
    expired = [e for e in pool.events() if e.kind == "lease_expired"]
    assert {e.agent for e in expired} == {"victim"}


@pytest.mark.pg
def test_postgres_connection_lost_mid_run_is_retried_and_reported(pg_url):
    """The server drops the pool's connection (pg_terminate_backend) mid-run: the pool reconnects
    with backoff, records the retry, and the run still finishes with a clean ledger."""
    import psycopg

    from benchscore.common.services import pg_dsn
    from benchscore.swarm import open_pool
    from benchscore.swarm.agents import run_agents

    pool = open_pool(pg_url, "lost-connection")
    pool.create_run()
    pool.add_tasks(TaskSpec(capability="x", payload={}) for _ in range(30))
    seen = {"n": 0}

    def handler(claim):
        seen["n"] += 1
        if seen["n"] == 10:
            pid = pool.conn.info.backend_pid
            with psycopg.connect(pg_dsn(), autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return noop_handler(claim)

    run_agents(pool, [Agent("a", ["x"], handler)], batch=3)
    assert pool.service_log.retries.get("postgresql", 0) >= 1
    assert pool.service_log.incidents[0]["service"] == "postgresql"
    assert pool.counts() == {"pending": 0, "claimed": 0, "done": 30, "failed": 0}
    assert audit_pool(pool).verdict == "PASS"
    pool.close()


def test_run_report_counts_crashed_workers_and_expired_leases(new_pool, store_url):
    """Issue 9 item 5: a worker killed mid-run shows in the run report (crashed_workers), and so do
    the leases its claims lost (expired_leases, from the ledger)."""
    from benchscore.swarm import run_swarm

    pool = new_pool(crash_policy="requeue", lease_seconds=0.5)
    pool.add_tasks(TaskSpec(capability="x", payload={}) for _ in range(30))
    seen = {"n": 0}

    def doomed(claim):
        seen["n"] += 1
        if seen["n"] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.01)
        return noop_handler(claim)

    def steady(claim):
        time.sleep(0.01)
        return noop_handler(claim)

    agents = [Agent("victim", ["x"], doomed), Agent("ag1", ["x"], steady)]
    report, audit = run_swarm(store_url, pool.run_id, agents, processes=2, batch=2)
    assert report.crashed_workers == 1
    assert report.expired_leases == audit.lease_expiries >= 1
    assert report.completed_tasks == 30 and report.audit_verdict == "PASS"
