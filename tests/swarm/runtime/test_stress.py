"""L01 (seed section 11): the pass formula and a small stress run on each store."""

from __future__ import annotations

import os

import pytest

from benchscore.swarm.stress import default_batch, l01_pass, run_stress

GOOD = dict(worker_processes=2, logical_cpus=2, completed_tasks=100, total_tasks=100, failed_tasks=0,
            duplicate_claims=[], participating_agents=8, total_agents=8, converged_shards=2)


def test_l01_pass_formula():
    assert l01_pass(**GOOD)
    for key, bad in [("worker_processes", 1), ("completed_tasks", 99), ("failed_tasks", 1),
                     ("duplicate_claims", [7]), ("participating_agents", 7), ("converged_shards", 1)]:
        assert not l01_pass(**{**GOOD, key: bad}), key


def test_default_batch_lets_every_agent_claim():
    assert default_batch(131072, 128) == 256
    assert default_batch(10, 128) == 1
    assert default_batch(10**9, 1) == 512


def test_small_stress_passes_on_each_store(store_url):
    # small batches: with few tasks, big batches could let one process drain the pool before the
    # other is scheduled, and L01 rightly fails when an agent never participates
    report = run_stress(store_url, total_agents=4, total_tasks=2000, batch=5)
    assert report.worker_processes == (os.cpu_count() or 1)
    assert report.checks_pass, report.model_dump(exclude={"service"})
    assert report.L01_verdict == "reduced" and not report.L01_PASS  # 4 agents, 2000 tasks: not the seed's size
    assert report.completed_tasks == 2000 and report.duplicate_claims == []
    assert report.converged_shards == report.worker_processes


@pytest.mark.redis
def test_small_stress_with_redis_mirror(pg_url, redis_prefix):
    url, prefix = redis_prefix
    report = run_stress(pg_url, total_agents=4, total_tasks=300, batch=5,
                        redis_url=f"{url}?prefix={prefix}", cleanup=True)
    assert report.checks_pass and report.L01_verdict == "reduced" and report.redis is not None
    from benchscore.swarm import open_pool

    with open_pool(pg_url, report.run_id, redis_url=f"{url}?prefix={prefix}") as pool:
        assert not pool.run_exists() and pool.event_rows() == [] and pool.mirror.keys() == []


def test_fewer_processes_than_cpus_is_not_a_pass(sqlite_url):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs 2 CPUs")
    report = run_stress(sqlite_url, total_agents=4, total_tasks=100, worker_processes=1)
    assert report.completed_tasks == 100 and not report.checks_pass and report.L01_verdict == "FAIL"


@pytest.mark.pg
def test_cleanup_on_postgresql_vacuums_the_swarm_tables(pg_schema):
    # a deleted run's rows stay as dead rows until a vacuum; where autovacuum is off (or behind)
    # each L01 run would otherwise leave ~900,000 of them and the next runs slow down
    import psycopg

    dsn, schema = pg_schema
    report = run_stress(f"{dsn}?schema={schema}", total_agents=4, total_tasks=300, batch=5, cleanup=True)
    assert report.checks_pass
    with psycopg.connect(dsn, autocommit=True) as c:
        # (n_dead_tup is no proof either way: the DELETE's counts may reach the statistics after the VACUUM)
        rows = c.execute("SELECT relname, vacuum_count FROM pg_stat_user_tables WHERE schemaname = %s",
                         (schema,)).fetchall()
    vacuums = dict(rows)
    assert all(vacuums[t] >= 1 for t in ("swarm_events", "swarm_tasks", "swarm_runs", "swarm_convergence")), vacuums
