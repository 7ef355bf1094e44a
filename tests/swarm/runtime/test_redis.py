"""The Redis mirror: pheromones as a sorted set per capability, events in a Redis Stream,
rebuilt from PostgreSQL after Redis loses its data mid-run, retried when Redis stops answering."""

from __future__ import annotations

import threading
import time

import pytest
import redis as redis_lib

from benchscore.swarm import Agent, TaskSpec, audit_pool, open_pool
from benchscore.swarm.agents import noop_handler, run_agents

pytestmark = [pytest.mark.pg, pytest.mark.redis]


@pytest.fixture
def mirrored(pg_url, redis_prefix):
    url, prefix = redis_prefix
    redis_url = f"{url}?prefix={prefix}"
    pool = open_pool(pg_url, "mirror-run", redis_url=redis_url)
    pool.create_run(crash_policy="requeue", lease_seconds=30)
    yield pool, redis_lib.Redis.from_url(url), prefix
    pool.close()


def _mirror_matches_store(pool) -> None:
    by_cap: dict[str, dict[int, float]] = {}
    for task_id, cap, p in pool.pheromones():
        by_cap.setdefault(cap, {})[task_id] = p
    for cap, expected in by_cap.items():
        assert pool.mirror.pheromones(cap) == pytest.approx(expected)
    ledger = [tuple(r[2:]) for r in pool.event_rows()]
    assert pool.mirror.stream_event_count() == len(ledger)
    assert sorted(pool.mirror.stream_events(), key=repr) == sorted(ledger, key=repr)


def test_pheromones_and_events_are_mirrored(mirrored):
    pool, client, prefix = mirrored
    pool.add_tasks([TaskSpec(capability="a", payload={}, pheromone=0.4), TaskSpec(capability="b", payload={})])
    c = pool.claim("ag", ["a", "b"], limit=2)
    pool.complete(c[0], 0.6, "x")
    pool.fail(c[1], "y")
    _mirror_matches_store(pool)
    assert pool.mirror.top("a") == [(c[0].task_id, pytest.approx(1.0))]
    keys = pool.mirror.keys()
    assert sorted(k.rsplit(":", 1)[-1] for k in keys) == ["a", "b", "events", "mirror"]
    assert not [k for k in keys if "control" in k or "message" in k or "plan" in k]
    entry = client.xrange(f"{prefix}swarm:mirror-run:events", count=1)[0][1]
    assert entry[b"n"] == b"2" and b'"create"' in entry[b"events"]


def test_redis_flush_mid_run_is_reconciled_from_postgres(mirrored):
    pool, client, prefix = mirrored
    n = 60
    pool.add_tasks(TaskSpec(capability="a", payload={}) for _ in range(n))
    handled = []

    def flushing(claim):
        handled.append(claim.task_id)
        if len(handled) == 25:  # Redis loses everything of this run mid-run
            keys = list(client.scan_iter(match=prefix + "*"))
            client.delete(*keys)
        return noop_handler(claim)

    run_agents(pool, [Agent("a1", ["a"], flushing), Agent("a2", ["a"], noop_handler)], batch=3)
    assert pool.mirror.rebuilds >= 2  # once at attach, once after the flush
    assert pool.counts()["done"] == n
    _mirror_matches_store(pool)  # nothing lost: every pheromone and every event is back
    assert pool.converge() is not None
    assert audit_pool(pool).verdict == "PASS"


def test_unreachable_redis_mid_run_is_retried_and_reported(mirrored):
    pool, _client, _prefix = mirrored
    pool.add_tasks(TaskSpec(capability="a", payload={}) for _ in range(20))
    real = pool.mirror.client
    dead = redis_lib.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    restored = threading.Event()

    def outage(claim):
        if pool.mirror.client is real and not restored.is_set():
            pool.mirror.client = dead

            def restore():
                time.sleep(0.3)
                pool.mirror.client = real
                restored.set()

            threading.Thread(target=restore, daemon=True).start()
        return noop_handler(claim)

    run_agents(pool, [Agent("a1", ["a"], outage)], batch=2)
    assert pool.service_log.retries.get("redis", 0) >= 1
    assert any(i["service"] == "redis" for i in pool.service_log.incidents)
    pool.mirror.reconcile(pool)
    _mirror_matches_store(pool)
    assert pool.counts()["done"] == 20


def test_unreachable_redis_at_start_is_one_error(pg_url):
    from benchscore.common.errors import ServiceUnavailable

    with pytest.raises(ServiceUnavailable, match="redis"):
        open_pool(pg_url, "r", redis_url="redis://127.0.0.1:1/0")
