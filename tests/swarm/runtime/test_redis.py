"""The Redis mirror: pheromones as a sorted set per capability, events in a Redis Stream,
rebuilt from the store after Redis loses its data mid-run, retried when Redis stops answering."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

import orjson
import pytest
import redis as redis_lib

from benchscore.swarm import Agent, Outcome, TaskSpec, audit_pool, open_pool, run_swarm
from benchscore.swarm.agents import noop_handler, run_agents

pytestmark = [pytest.mark.redis]


@pytest.fixture
def mirrored(pg_url, redis_prefix):
    url, prefix = redis_prefix
    redis_url = f"{url}?prefix={prefix}"
    pool = open_pool(pg_url, "mirror-run", redis_url=redis_url)
    pool.create_run(crash_policy="requeue", lease_seconds=30)
    yield pool, redis_lib.Redis.from_url(url), prefix
    pool.close()


def _mirror_matches_store(pool) -> None:
    """Exactly: every task's P_t, and the stream holds the ledger's events once each, in ledger order."""
    by_cap: dict[str, dict[int, float]] = {}
    for task_id, cap, p in pool.pheromones():
        by_cap.setdefault(cap, {})[task_id] = p
    for cap, expected in by_cap.items():
        assert pool.mirror.pheromones(cap) == expected, cap
    ledger = [(r[0], *r[2:10]) for r in pool.event_rows()]
    streamed = pool.mirror.stream_events()
    assert len({e[0] for e in streamed}) == len(streamed), "a ledger seq appears twice in the stream"
    assert pool.mirror.stream_event_count() == len(ledger)
    assert streamed == ledger
    check = pool.mirror.compare(pool)
    assert check["consistent"] and check["pheromone_mismatches"] == 0, check


@pytest.mark.pg
def test_pheromones_and_events_are_mirrored(mirrored):
    pool, client, prefix = mirrored
    pool.add_tasks([TaskSpec(capability="a", payload={}, pheromone=0.4), TaskSpec(capability="b", payload={})])
    c = pool.claim("ag", ["a", "b"], limit=2)
    pool.complete(c[0], 0.6, "x")
    pool.fail(c[1], "y")
    _mirror_matches_store(pool)
    assert pool.mirror.top("a") == [(c[0].task_id, pytest.approx(1.0))]
    keys = pool.mirror.keys()
    assert sorted(k.rsplit(":", 1)[-1] for k in keys) == ["a", "b", "events", "mirror", "task"]
    writers = {r[0]: r[11] for r in pool.event_rows()}
    for _entry_id, fields in client.xrange(f"{prefix}swarm:mirror-run:events"):  # each entry names its writer
        assert {writers[e[0]] for e in orjson.loads(fields[b"events"])} == {int(fields[b"w"])}
    assert not [k for k in keys if "control" in k or "message" in k or "plan" in k]
    entry = client.xrange(f"{prefix}swarm:mirror-run:events", count=1)[0][1]
    # the four small transactions went out in one publish (one script call, one stream entry)
    assert entry[b"n"] == b"8" and [e[2] for e in orjson.loads(entry[b"events"])][:3] == ["create", "create", "claim"]


@pytest.mark.pg
def test_redis_flush_mid_run_is_reconciled_from_postgres(mirrored):
    pool, client, prefix = mirrored
    n = 60
    pool.add_tasks(TaskSpec(capability="a", payload={}) for _ in range(n))
    handled = []

    def flushing(claim):
        handled.append(claim.task_id)
        if len(handled) == 25:  # Redis loses everything of this run mid-run
            # what the pool still holds back (PUBLISH_SECONDS) goes out first: on a fast machine the
            # first 25 tasks take under 50 ms, and a flush of a mirror never written needs no rebuild
            pool.flush_mirror()
            keys = list(client.scan_iter(match=prefix + "*"))
            client.delete(*keys)
        return noop_handler(claim)

    run_agents(pool, [Agent("a1", ["a"], flushing), Agent("a2", ["a"], noop_handler)], batch=3)
    assert pool.mirror.rebuilds >= 1  # rebuilt after the flush, mid-run
    assert pool.counts()["done"] == n
    _mirror_matches_store(pool)  # nothing lost: every pheromone and every event is back
    assert pool.converge() is not None
    assert audit_pool(pool).verdict == "PASS"


@pytest.mark.pg
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


@pytest.mark.pg
def test_unreachable_redis_at_start_is_one_error(pg_url):
    from benchscore.common.errors import ServiceUnavailable

    with pytest.raises(ServiceUnavailable, match="redis"):
        open_pool(pg_url, "r", redis_url="redis://127.0.0.1:1/0")


def _delete_run_keys(url: str, prefix: str, run_id: str) -> int:
    client = redis_lib.Redis.from_url(url)
    keys = list(client.scan_iter(match=f"{prefix}swarm:{run_id}:*"))
    if keys:
        client.delete(*keys)
    client.close()
    return len(keys)


def test_flush_mid_run_with_four_workers_leaves_mirror_equal_to_store(store_url, redis_prefix, tmp_path):
    """Issue 9 item 1: 600 tasks, 4 worker processes, the run's Redis keys deleted once mid-run (on
    SQLite and PostgreSQL): afterwards every P_t, the stream length and the stream's seqs equal the store."""
    url, prefix = redis_prefix
    redis_url = f"{url}?prefix={prefix}"
    run_id = "flush-run"
    with open_pool(store_url, run_id) as pool:
        pool.create_run(crash_policy="requeue", lease_seconds=30)
        pool.add_tasks(TaskSpec(capability=f"c{i % 3}", payload={}, pheromone=0.1 * (i % 5)) for i in range(600))
    handled = multiprocessing.get_context("fork").Value("i", 0)
    flag = tmp_path / "flushed"

    def handler(claim):
        with handled.get_lock():
            handled.value += 1
            n = handled.value
        if n >= 250:
            try:
                os.close(os.open(flag, os.O_CREAT | os.O_EXCL))  # once, in whichever worker gets here first
            except FileExistsError:
                pass
            else:
                assert _delete_run_keys(url, prefix, run_id) > 0
        time.sleep(0.0005)
        if claim.task_id % 7 == 0 and claim.attempt == 1:  # some failures: P_t -1.0, requeued
            return Outcome.failure("first attempt fails")
        return noop_handler(claim)

    agents = [Agent(f"ag{i}", ["c0", "c1", "c2"], handler) for i in range(8)]
    report, audit = run_swarm(store_url, run_id, agents, processes=4, batch=3, redis_url=redis_url)
    assert flag.exists() and audit.verdict == "PASS" and report.completed_tasks == 600
    # the workers noticed the flush mid-run and rebuilt the mirror from the store's ledger
    assert any(i.get("error") == "mirror filled from the store's ledger" and i.get("from_seq") == 0
               for i in report.service["incidents"])
    assert report.redis_mirror["consistent"], report.redis_mirror
    with open_pool(store_url, run_id, redis_url=redis_url) as pool:
        _mirror_matches_store(pool)
        assert pool.mirror.stream_event_count() == audit.events


def test_stale_mirror_is_repaired_by_reconcile(store_url, redis_prefix):
    """A mirror that differs from the store (a P_t overwritten, an event stream deleted) is found by
    the comparison of the end-of-run reconcile and rebuilt; the repair is reported."""
    url, prefix = redis_prefix
    with open_pool(store_url, "stale-run", redis_url=f"{url}?prefix={prefix}") as pool:
        pool.create_run()
        pool.add_tasks(TaskSpec(capability="a", payload={}) for _ in range(5))
        for c in pool.claim("ag", ["a"], limit=5):
            pool.complete(c, 0.5, "ok")
        pool.flush_mirror()  # everything published; then the mirror is damaged behind the pool's back
        client = redis_lib.Redis.from_url(url)
        client.zadd(f"{prefix}swarm:stale-run:pheromone:a", {"3": 9.0})
        client.delete(f"{prefix}swarm:stale-run:events")
        check = pool.mirror.compare(pool)
        assert not check["consistent"] and check["pheromone_mismatches"] == 1 and check["stream_entries"] == 0
        result = pool.mirror.reconcile(pool)
        assert result["repaired"] and result["consistent"] and result["before"]["pheromone_mismatches"] == 1
        _mirror_matches_store(pool)
        client.close()


def test_mirror_applies_transactions_once_and_in_ledger_order(redis_prefix):
    """The append script: out-of-order publishes of one writer wait for their predecessor, repeats
    are dropped, an overlapping transaction adds only its new events, writers do not wait for each
    other, and an older P_t never overwrites a newer one (whichever writer publishes it)."""
    from benchscore.common.services import redis_url
    from benchscore.swarm.retry import ServiceLog
    from benchscore.swarm.stores.base import Appended
    from benchscore.swarm.stores.redis_mirror import APPLIED, WAITING, RedisMirror

    url, prefix = redis_prefix
    mirror = RedisMirror.connect(f"{redis_url()}?prefix={prefix}", "order", ServiceLog())

    def tx(writer, prev, seqs, changes=()):
        """changes: (seq, P_t) of task 1; the writer_seq of each follows from its place in seqs"""
        events = [(q, 1, "claim", "ag", 1, 0.0, None, None, 0.0) for q in seqs]
        return Appended(writer, prev, events, [(q, prev + 1 + seqs.index(q), "cap", 1, p) for q, p in changes])

    a = tx(1, 0, [1, 2, 3], [(1, 0.1)])
    b = tx(1, 3, [4, 5], [(4, 0.3)])
    c = tx(1, 5, [6, 7, 8], [(7, 0.5)])
    assert mirror._append(a)[0] == APPLIED
    assert mirror._append(c) == (WAITING, 3, 1)  # its predecessor b has not arrived
    assert mirror._append(b) == (APPLIED, 8, 0)  # b applied, then c from pending
    assert mirror._append(b) == (APPLIED, 8, 0)  # a repeat changes nothing
    assert mirror.pheromones("cap") == {1: 0.5}
    d = tx(1, 6, [7, 8, 9, 10], [(7, 0.5), (10, 0.9)])  # overlaps c
    assert mirror._append(d) == (APPLIED, 10, 0)
    # writer 2 does not wait for writer 1; its change of seq 12 wins, its older one (seq 9.5) cannot
    e = tx(2, 0, [11, 12], [(12, 0.7)])
    assert mirror._append(e) == (APPLIED, 2, 0)
    assert mirror.pheromones("cap") == {1: 0.7}
    old = Appended(3, 0, [(9, 1, "claim", "ag", 1, 0.0, None, None, 0.0)], [(9, 1, "cap", 1, 0.2)])
    assert mirror._append(old) == (APPLIED, 1, 0)
    assert mirror.pheromones("cap") == {1: 0.7}  # seq 9 is older than seq 12: not written
    assert [e[0] for e in mirror.stream_events()] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 10, 11, 12]
    assert [int(f[b"w"]) for _i, f in mirror.client.xrange(mirror.events_key)] == [1, 1, 1, 1, 2, 3]
    assert mirror.client.hgetall(mirror.marker_key) == {
        b"w:1": b"10", b"q:1": b"10", b"w:2": b"2", b"q:2": b"12", b"w:3": b"1", b"q:3": b"9",
        b"events": b"13", b"entries": b"6"}
    mirror.close()


def test_a_flush_is_found_by_any_writer_and_rebuilt(store_url, redis_prefix):
    """After Redis loses the run, the next publish (of any writer, not only the first) finds the
    mirror gone and rebuilds it from every writer's chain."""
    url, prefix = redis_prefix
    redis_url = f"{url}?prefix={prefix}"
    with open_pool(store_url, "two-writers", redis_url=redis_url) as first:
        first.create_run()
        first.add_tasks(TaskSpec(capability="a", payload={}) for _ in range(4))
        with open_pool(store_url, "two-writers", redis_url=redis_url) as second:
            c = second.claim("w2", ["a"])[0]
            second.complete(c, 0.5, "x")
            rebuilds = second.mirror.rebuilds  # (reading the mirror publishes what waits)
            _delete_run_keys(url, prefix, "two-writers")
            c = second.claim("w2", ["a"])[0]
            assert second.mirror.rebuilds == rebuilds + 1  # writer 2's publish found the mirror gone
            second.complete(c, 0.25, "y")
            for c in first.claim("w1", ["a"], limit=2):
                first.complete(c, 0.75, "z")
        assert first.ledger_head().writer_count == 2
        _mirror_matches_store(first)
