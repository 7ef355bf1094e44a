"""The pool protocol on every store (SQLite always; PostgreSQL when it is up)."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchscore.swarm import StaleClaim, Task, TaskSpec, TaskStatus, audit_pool, claim_order
from benchscore.swarm.tasks import Claim


def spec(cap="a", p=0.0, attempts=3, **payload):
    return TaskSpec(capability=cap, payload=payload or {"x": 1}, pheromone=p, max_attempts=attempts)


def test_claim_takes_argmax_pheromone_of_agent_capabilities_ties_oldest(new_pool):
    pool = new_pool()
    ids = pool.add_tasks([spec("a", 0.0), spec("a", 0.7), spec("b", 5.0), spec("a", 0.7), spec("a", 0.2)])
    first = pool.claim("ag", ["a"])
    assert [c.task_id for c in first] == [ids[1]]  # 0.7, older of the two
    assert first[0].attempt == 1 and first[0].pheromone == pytest.approx(0.7)
    batch = pool.claim("ag", ["a"], limit=2)
    assert [c.task_id for c in batch] == [ids[3], ids[4]]
    assert [c.task_id for c in pool.claim("other", ["b", "a"], limit=5)] == [ids[2], ids[0]]
    assert pool.claim("ag", ["a", "b"]) == []
    assert pool.claim("ag", ["zzz"]) == []


def test_success_adds_score_and_converge(new_pool):
    pool = new_pool()
    ids = pool.add_tasks([spec(p=0.25), spec(), spec()])
    claims = pool.claim("ag", ["a"], limit=3)
    pool.complete(claims[0], 0.5, "first")
    assert pool.complete_many([(claims[1], 0.9, "best"), (claims[2], 0.1, "low")]) == [True, True]
    ph = {i: p for i, _, p in pool.pheromones()}
    assert ph == pytest.approx({ids[0]: 0.75, ids[1]: 0.9, ids[2]: 0.1})
    result = pool.converge()
    assert (result.accepted_task_id, result.accepted_score, result.accepted_output) == (ids[1], 0.9, "best")
    assert pool.counts() == {"pending": 0, "claimed": 0, "done": 3, "failed": 0}
    pool.record_convergence("run", result, "ab" * 32)
    assert pool.convergences()["run"]["accepted_task_id"] == ids[1]


def test_failure_subtracts_one_requeues_then_fails_at_attempt_limit(new_pool):
    pool = new_pool()
    [tid] = pool.add_tasks([spec(attempts=2)])
    c1 = pool.claim("ag", ["a"])[0]
    assert pool.fail(c1, "boom") is TaskStatus.pending
    assert pool.pheromones()[0][2] == -1.0
    c2 = pool.claim("ag2", ["a"])[0]
    assert (c2.task_id, c2.attempt, c2.pheromone) == (tid, 2, -1.0)
    assert pool.fail(c2, "boom again") is TaskStatus.failed
    assert pool.pheromones()[0][2] == -2.0
    assert pool.claim("ag", ["a"]) == []
    assert pool.counts()["failed"] == 1
    assert pool.converge() is None


def test_stale_completion_is_refused_and_never_completes_twice(new_pool):
    pool = new_pool()
    pool.add_tasks([spec()])
    c1 = pool.claim("ag", ["a"])[0]
    pool.complete(c1, 0.4, "once")
    with pytest.raises(StaleClaim):
        pool.complete(c1, 0.9, "twice")
    with pytest.raises(StaleClaim):
        pool.fail(c1, "late failure")
    forged = Claim(c1.task_id, c1.attempt, "impostor", "a", "{}", 0.0, 3, 0.0)
    assert pool.complete_many([(forged, 1.0, "x")]) == [False]
    assert pool.converge().accepted_output == "once"
    report = audit_pool(pool)
    assert report.completions == 1 and report.verdict == "PASS"


def test_lease_expiry_requeues_and_fences_the_old_attempt(new_pool):
    pool = new_pool(crash_policy="requeue", lease_seconds=0.2)
    [tid] = pool.add_tasks([spec(p=0.3)])
    old = pool.claim("slow", ["a"])[0]
    assert pool.claim("fast", ["a"]) == []  # still leased
    time.sleep(0.3)
    new = pool.claim("fast", ["a"])[0]  # the claim resolves the expired lease first
    assert (new.task_id, new.attempt, new.pheromone) == (tid, 2, 0.3)  # requeue keeps P_t
    with pytest.raises(StaleClaim):
        pool.complete(old, 1.0, "late")
    pool.complete(new, 0.5, "rescued")
    report = audit_pool(pool)
    assert report.lease_expiries == 1 and report.verdict == "PASS"
    assert report.participating_agents == ["fast", "slow"]


def test_lease_expiry_with_fail_policy(new_pool):
    pool = new_pool(crash_policy="fail", lease_seconds=0.1)
    pool.add_tasks([spec()])
    old = pool.claim("dead", ["a"])[0]
    time.sleep(0.2)
    assert pool.expire_leases() == 1
    assert pool.counts()["failed"] == 1
    assert pool.pheromones()[0][2] == -1.0
    with pytest.raises(StaleClaim):
        pool.complete(old, 1.0, "late")
    assert audit_pool(pool).verdict == "PASS"


def test_requeue_of_last_attempt_fails_the_task(new_pool):
    pool = new_pool(crash_policy="requeue", lease_seconds=0.1)
    pool.add_tasks([spec(attempts=1)])
    pool.claim("dead", ["a"])
    time.sleep(0.2)
    assert pool.expire_leases() == 1
    assert pool.counts()["failed"] == 1


def test_ledger_records_every_change_with_run_task_agent_attempt_time(new_pool):
    pool = new_pool()
    pool.add_tasks([spec(attempts=2)])
    c = pool.claim("ag", ["a"])[0]
    pool.fail(c, "x")
    c = pool.claim("ag", ["a"])[0]
    pool.complete(c, 0.8, "ok")
    events = list(pool.events())
    assert [e.kind.value for e in events] == ["create", "claim", "fail", "pheromone", "claim", "complete", "pheromone"]
    assert all(e.run_id == pool.run_id and e.task_id == c.task_id and e.at > 0 for e in events)
    assert [e.attempt for e in events] == [0, 1, 1, 1, 2, 2, 2]
    assert [e.agent for e in events[1:]] == ["ag"] * 6
    assert events[3].value == -1.0 and events[3].delta == -1.0
    assert events[6].value == pytest.approx(-0.2) and events[6].delta == pytest.approx(0.8)
    assert [e.seq for e in events] == sorted(e.seq for e in events)


def test_no_messaging_between_agents():
    """Agents have no channel to each other: the pool API is the only coordination."""
    from benchscore.swarm.agents import Agent
    from benchscore.swarm.stores.base import TaskPool

    public = {n for n in dir(TaskPool) if not n.startswith("_")}
    assert not {n for n in public if "message" in n or "send" in n or "broadcast" in n}
    assert set(Agent.__dataclass_fields__) == {"agent_id", "capabilities", "handler"}


def test_runs_are_isolated_in_one_store(store_url):
    from benchscore.swarm import open_pool

    with open_pool(store_url, "run-x") as a, open_pool(store_url, "run-y") as b:
        a.create_run()
        b.create_run()
        a.add_tasks([spec()])
        assert b.claim("ag", ["a"]) == []
        assert len(a.claim("ag", ["a"])) == 1
        with pytest.raises(ValueError):
            a.create_run()


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, -1.0, 2.5]), min_size=1, max_size=12), st.integers(1, 4))
def test_store_claims_follow_the_pure_claim_order(sqlite_url, ps, batch):
    import uuid

    from benchscore.swarm import open_pool

    with open_pool(sqlite_url, uuid.uuid4().hex) as pool:
        pool.create_run()
        ids = pool.add_tasks([spec("a", p) for p in ps])
        expected = [t.task_id for t in claim_order(
            [Task(i, "a", "{}", TaskStatus.pending, p, None, None, 0, 3) for i, p in zip(ids, ps, strict=True)], ["a"])]
        got = []
        while claims := pool.claim("ag", ["a"], limit=batch):
            got += [c.task_id for c in claims]
        assert got == expected


def test_delete_run_removes_tasks_and_ledger(new_pool):
    pool = new_pool()
    pool.add_tasks([spec()])
    pool.complete(pool.claim("ag", ["a"])[0], 0.5, "x")
    pool.record_convergence("run", pool.converge())
    pool.delete_run()
    assert not pool.run_exists()
    assert pool.event_rows() == [] and pool.tasks() == [] and pool.convergences() == {}


def test_handler_errors_are_task_failures_but_service_errors_stop(new_pool):
    from benchscore.common.errors import ServiceUnavailable
    from benchscore.swarm import Agent, run_agent

    pool = new_pool()
    pool.add_tasks([spec(attempts=1), spec(attempts=1)])

    def broken(claim):
        return 1 / 0

    stats = run_agent(pool, Agent("a", ["a"], broken))
    assert stats.failed == 2 and pool.counts()["failed"] == 2
    assert "ZeroDivisionError" in pool.tasks()[0].output

    pool2 = new_pool()
    pool2.add_tasks([spec()])

    def down(claim):
        raise ServiceUnavailable("budget store unreachable")

    with pytest.raises(ServiceUnavailable):
        run_agent(pool2, Agent("a", ["a"], down))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, -1.0, 2.5]), st.booleans(), st.sampled_from(["a", "b"])),
                min_size=1, max_size=10),
       st.integers(1, 4), st.sampled_from([["a"], ["b"], ["a", "b"]]))
def test_batched_claims_follow_argmax_as_failures_and_completions_move_pheromones(store_url, rows, batch, caps):
    """Each batch claim takes the first ``batch`` tasks of ``claim_order`` over the pool's pending tasks at
    that moment, while failures (P_t - 1, back to pending) and completions keep changing the pool."""
    import uuid

    from benchscore.swarm import open_pool

    with open_pool(store_url, uuid.uuid4().hex) as pool:
        pool.create_run()
        ids = pool.add_tasks([spec(cap, p, attempts=2) for p, _, cap in rows])
        fails_first = {i for i, (_, fail, _) in zip(ids, rows, strict=True) if fail}
        for _ in range(4 * len(rows)):
            expected = [t.task_id for t in claim_order(pool.tasks(), caps)][:batch]
            claims = pool.claim("ag", caps, limit=batch)
            assert [c.task_id for c in claims] == expected
            if not claims:
                break
            pool.fail_many([(c, "x") for c in claims if c.task_id in fails_first and c.attempt == 1])
            pool.complete_many([(c, 0.3, "ok") for c in claims if not (c.task_id in fails_first and c.attempt == 1)])
        assert audit_pool(pool).pheromone_consistent


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=20))
def test_stored_scores_and_pheromones_are_the_exact_floats_and_the_chain_holds(new_pool, rows):
    # the PostgreSQL store sends batches as JSON: every float must come back bit for bit (the
    # audit recomputes the hash chain from the stored values and replays P_t exactly)
    pool = new_pool()
    ids = pool.add_tasks([spec(p=p) for p, _ in rows])
    claims = {c.task_id: c for c in pool.claim("ag", ["a"], limit=len(rows))}
    assert pool.complete_many([(claims[i], s, f"out{i}") for i, (_, s) in zip(ids, rows, strict=True)]) == [True] * len(rows)
    stored = {t.task_id: t for t in pool.tasks()}
    for i, (p, s) in zip(ids, rows, strict=True):
        assert stored[i].score == s and stored[i].pheromone == (p + s if p + s != 0 else 0.0)
    audit = audit_pool(pool)
    assert audit.verdict == "PASS", [v.reason for v in audit.violations][:3]
