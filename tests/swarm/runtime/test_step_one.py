"""Issue 19: a round of one task on PostgreSQL runs ``step_one``, one plain prepared statement, not
the plpgsql ``swarm_step``. The two must leave the same store: the same task states, the same
answers, and a ledger whose rows, hashes and chain heads are byte for byte the same (and the
same as SQLite's, whose hashes are computed in Python)."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from benchscore.swarm import TaskSpec, audit_pool, open_pool
from benchscore.swarm.stores.base import RunNotFound
from benchscore.swarm.stores.postgres import PostgresPool, positional

pytestmark = pytest.mark.pg


def scenario(pool) -> list:
    """Every kind of one-task round: claim, done + claim, a failure that requeues (swarm_step), a
    stale finish that is refused, a terminal failure, a finish without a claim, a drain to empty."""
    out = []
    pool.create_run()
    pool.add_tasks([TaskSpec(capability="a", payload={"i": i}, pheromone=0.1 * i, max_attempts=1 + i % 2)
                    for i in range(7)] + [TaskSpec(capability="b", payload={"i": 9})])

    def step(results=(), failures=(), limit=1, caps=("a",)):
        accepted, statuses, claims = pool.finish_and_claim(list(results), list(failures), "x", list(caps),
                                                           limit=limit)
        out.append((accepted, [s and s.value for s in statuses],
                    [(c.task_id, c.attempt, c.capability, c.payload, c.pheromone, c.max_attempts) for c in claims]))
        return claims

    first = step()[0]
    second = step(results=[(first, 0.5, "out 1")])[0]
    third = step(failures=[(second, "boom")])[0]  # max_attempts 2: requeued
    assert out[-1][1] == ["pending"]
    fourth = step(results=[(first, 0.7, "stale")])[0]  # first is done: refused
    assert out[-1][0] == [False]
    odd = third if third.max_attempts == 1 else fourth
    rest = [c for c in (third, fourth) if c is not odd]
    step(failures=[(odd, "terminal")], limit=0)  # max_attempts 1: failed, nothing claimed
    assert out[-1][1:] == (["failed"], [])
    held = rest
    while held:  # the last claims take the task of capability b too, then find nothing
        held = step(results=[(held[0], 0.25, "out")], caps=("a", "b"))
    return out


def ledger(pool) -> list[tuple]:
    """The ledger without seq and time (which differ between stores and runs)."""
    return [r[1:9] + r[10:] for r in pool.event_rows()]


def heads(pool) -> list[tuple]:
    return [(w, bytes(h), n) for w, h, n, _seq in pool._chains()]


@pytest.fixture
def second_pg_url(pg_schema):
    dsn, _ = pg_schema
    schema = f"bs_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}"
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_step_one_leaves_the_store_swarm_step_leaves(pg_url, second_pg_url, tmp_path, monkeypatch):
    used = []
    real = PostgresPool._step_call

    def spy(self, *args):
        call = real(self, *args)
        used.append(call[2])  # prepared: step_one
        return call

    monkeypatch.setattr(PostgresPool, "_step_call", spy)
    with open_pool(pg_url, "same") as fast:
        fast_out = scenario(fast)
        assert True in used and False in used, "the scenario runs both statements"
        fast_ledger, fast_heads, fast_tasks = ledger(fast), heads(fast), fast._task_states()
        assert audit_pool(fast).verdict == "PASS"
        seqs = [(r[11], r[12], r[0]) for r in fast.event_rows()]
        for writer in {w for w, _, _ in seqs}:  # each writer's rows: seq order is chain order
            mine = [(k, q) for w, k, q in seqs if w == writer]
            assert sorted(mine) == sorted(mine, key=lambda x: x[1])
    used.clear()
    monkeypatch.setattr(PostgresPool, "_one_task_round", staticmethod(lambda rows, limit: False))
    with open_pool(second_pg_url, "same") as reference:
        assert scenario(reference) == fast_out
        assert used and not any(used)
        assert ledger(reference) == fast_ledger
        assert heads(reference) == fast_heads
        assert reference._task_states() == fast_tasks
    with open_pool(f"sqlite:///{tmp_path}/same.db", "same") as lite:
        assert scenario(lite) == fast_out
        assert ledger(lite) == fast_ledger
        assert heads(lite) == fast_heads


def test_step_one_without_its_chain_row_changes_nothing(pg_url):
    """A writer whose chain row is gone (the run deleted under it): the step fails as swarm_step
    does, and its finish and claim are rolled back with it."""
    with open_pool(pg_url, "gone") as pool:
        pool.create_run()
        pool.add_tasks(TaskSpec(capability="a", payload={"i": i}) for i in range(3))
        claim = pool.finish_and_claim([(pool.claim("x", ["a"])[0], 0.5, "ok")], [], "x", ["a"])[2][0]
        before = pool._task_states()
        pool._connection().execute("DELETE FROM swarm_chains WHERE run_id = 'gone'")
        with pytest.raises(psycopg.errors.RaiseException, match="no ledger writer 1 of run gone"):
            pool.finish_and_claim([(claim, 0.5, "ok")], [], "x", ["a"])
        assert pool._task_states() == before
        pool._writer_events = None  # a pool that does not know its chain's length asks for it first
        with pytest.raises(RunNotFound, match="no ledger writer 1 of run 'gone'"):
            pool.finish_and_claim([(claim, 0.5, "ok")], [], "x", ["a"])
        assert pool._task_states() == before


def test_step_one_is_prepared_once_per_connection(pg_url):
    """psycopg ignores prepare=True on a connection whose prepare_threshold is None (the store's
    used to be): the statement was then planned at every call, about 1 ms for one of this size."""
    with open_pool(pg_url, "prepared") as pool:
        pool.create_run()
        pool.add_tasks(TaskSpec(capability="a", payload={"i": i}) for i in range(12))
        held = pool.claim("x", ["a"])
        while held:
            held = pool.finish_and_claim([(held[0], 0.5, "ok")], [], "x", ["a"])[2]
        rows = pool._connection().execute(
            "SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements").fetchall()
        uses = [n for text, n in rows if "INSERT INTO swarm_events" in text]
        # one prepared statement per set of parameter types (a round without a finish sends NULLs)
        assert 1 <= len(uses) <= 2 and sum(uses) >= 13


def test_positional_numbers_each_name_once_and_refuses_a_stray_percent():
    assert positional("SELECT %(a)s, %(b)s::int, %(a)s") == ("SELECT $1, $2::int, $1", ("a", "b"))
    with pytest.raises(ValueError, match="not a %"):
        positional("SELECT %(a)s LIKE 'x%'")
