"""L02: the TPM budget ledger (seed section 11)."""

from __future__ import annotations

import multiprocessing as mp
import threading
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchscore.swarm.budget import (
    TPMBudget,
    budget_utilization,
    first_fitting_window,
    l02_derivation,
    l02_pass,
    run_l02,
    spread_overshoot,
)


def test_seed_l02_derivation():
    d = l02_derivation(3000, 50)
    assert d == {"task_count": 60, "total_token_demand": 3000, "simulated_minutes": 1}
    assert budget_utilization(3000, 1, 3000) == 1.0
    assert budget_utilization(2940, 1, 3000) == pytest.approx(0.98)


def test_l02_pass_formula():
    ok = dict(target_tpm=3000, required_tpm=3000, max_tokens_in_a_minute=3000, total_reserved_tokens=3000,
              task_count=60, tokens_per_task=50, budget_utilization=1.0, completed_tasks=60, failed_tasks=0,
              duplicate_claims=[], participating_agents=4, agent_count=4, converged=True)
    assert l02_pass(**ok)
    for key, bad in [("max_tokens_in_a_minute", 3001), ("total_reserved_tokens", 2950), ("budget_utilization", 0.5),
                     ("failed_tasks", 1), ("duplicate_claims", [3]), ("participating_agents", 3),
                     ("converged", False), ("target_tpm", 2000), ("completed_tasks", 59)]:
        assert not l02_pass(**{**ok, key: bad}), key


def test_run_l02_reproduces_the_seed():
    r = run_l02(3000, 50, agent_count=4, processes=2)
    assert (r.task_count, r.total_reserved_tokens, r.simulated_minutes, r.budget_utilization) == (60, 3000, 1, 1.0)
    assert r.max_tokens_in_a_minute == 3000 and r.tokens_by_minute == {"0": 3000}
    assert (r.completed_tasks, r.failed_tasks, r.duplicate_claims, r.participating_agents) == (60, 0, [], 4)
    assert r.converged and r.L02_PASS


def test_run_l02_other_budget_is_not_a_pass():
    r = run_l02(1000, 50, agent_count=2, processes=1)
    assert r.total_reserved_tokens == 1000 and r.budget_utilization == 1.0
    assert not r.L02_PASS  # the seed's target is 3000 TPM


def test_window_choice_and_overshoot_spreading():
    assert first_fitting_window({0: 2990}, 0, 20, 3000) == 1
    assert first_fitting_window({0: 2980, 1: 3000}, 0, 20, 3000) == 0
    assert first_fitting_window({0: 3000, 1: 2999}, 0, 2, 3000) == 2
    with pytest.raises(ValueError):
        first_fitting_window({}, 0, 3001, 3000)
    assert spread_overshoot({0: 2990, 1: 100}, 0, 30, 3000) == [(0, 10), (1, 20)]


def test_reserve_and_reconcile(tmp_path):
    with TPMBudget(f"sqlite:///{tmp_path}/b.db", "b", 100, simulated=True) as b:
        r1 = b.reserve(60)
        r2 = b.reserve(60)  # does not fit beside r1: next simulated minute
        assert (r1.minute, r2.minute) == (0, 1)
        b.reconcile(r1, 30)  # unused tokens go back
        assert b.windows() == {0: 30, 1: 60}
        r3 = b.reserve(70)
        assert r3.minute == 0
        b.reconcile(r2, 90)  # overshoot: charged to window 1 as far as it has room
        assert b.windows() == {0: 100, 1: 90}
        b.reconcile(r3, 100)  # 30 more: window 0 is full, window 1 has 10, window 2 takes 20
        assert b.windows() == {0: 100, 1: 100, 2: 20}
        with pytest.raises(ValueError):
            b.reserve(101)


def test_wall_clock_reservation_waits_for_its_minute(tmp_path):
    now = [600.0]  # minute 10
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    with TPMBudget(f"sqlite:///{tmp_path}/b.db", "w", 100, clock=lambda: now[0], sleep=sleep) as b:
        assert b.reserve(80).minute == 10 and slept == []
        r = b.reserve(50)
        assert r.minute == 11 and slept == [pytest.approx(60.0)]


def _reserve_many(url, n, tokens, out):
    with TPMBudget(url, "shared", 1000, simulated=True) as b:
        for _ in range(n):
            out.put(b.reserve(tokens).minute)


def test_reservations_are_atomic_across_processes(tmp_path):
    url = f"sqlite:///{tmp_path}/b.db"
    q = mp.get_context("fork").Queue()
    procs = [mp.get_context("fork").Process(target=_reserve_many, args=(url, 25, 30, q)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    minutes = [q.get() for _ in range(100)]
    with TPMBudget(url, "shared", 1000, simulated=True) as b:
        windows = b.windows()
    assert sum(windows.values()) == 3000
    assert max(windows.values()) <= 1000
    assert windows == {0: 990, 1: 990, 2: 990, 3: 30}  # 33 reservations of 30 fill a window
    assert sorted(minutes).count(0) == 33


@pytest.mark.pg
def test_reservations_are_atomic_on_postgres(pg_url):
    results: list[int] = []

    def worker():
        with TPMBudget(pg_url, "pgb", 500, simulated=True) as b:
            for _ in range(20):
                r = b.reserve(45)
                results.append(r.minute)
                b.reconcile(r, 40)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with TPMBudget(pg_url, "pgb", 500, simulated=True) as b:
        windows = b.windows()
    assert max(windows.values()) <= 500 and sum(windows.values()) == 80 * 40


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    tpm=st.integers(50, 400),
    demand=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 120)), min_size=1, max_size=40),
    threads=st.integers(1, 4),
)
def test_no_window_ever_exceeds_the_target(tmp_path_factory, tpm, demand, threads):
    """Property: for random demand (reserved, actually used), from concurrent callers, every
    minute window stays within the target, and the windows hold exactly the tokens used."""
    url = f"sqlite:///{tmp_path_factory.mktemp('b')}/b.db"
    chunks = [demand[i::threads] for i in range(threads)]

    def worker(items):
        with TPMBudget(url, "prop", tpm, simulated=True) as b:
            for reserve, actual in items:
                r = b.reserve(min(reserve, tpm))
                b.reconcile(r, actual)

    ts = [threading.Thread(target=worker, args=(c,)) for c in chunks]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    with TPMBudget(url, "prop", tpm, simulated=True) as b:
        windows = b.windows()
    assert all(v <= tpm for v in windows.values())
    assert sum(windows.values()) == sum(a for _, a in demand)


def test_run_l02_reads_completions_from_the_ledger(monkeypatch):
    """L02's completed/failed tasks come from the ledger audit, not from the pool's status counts."""
    from benchscore.swarm.stores.base import TaskPool

    monkeypatch.setattr(TaskPool, "counts", lambda self: {"pending": 0, "claimed": 0, "done": 0, "failed": 60})
    r = run_l02(3000, 50, agent_count=2, processes=1)
    assert (r.completed_tasks, r.failed_tasks) == (60, 0) and r.L02_PASS


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("pg", marks=pytest.mark.pg)])
def test_wall_clock_minute_is_read_inside_the_lock(tmp_path, request, backend):
    """Issue 9 item 4: a caller reads the clock at 59.999 s, waits for the lock while another caller
    fills minute 1 (60.5 s, 3000 tokens); its reservation must not land in minute 0, which has ended."""
    url = f"sqlite:///{tmp_path}/b.db" if backend == "sqlite" else request.getfixturevalue("pg_url")
    now = [59.999]
    with TPMBudget(url, "edge", 3000, clock=lambda: 60.5, sleep=lambda s: None) as other, \
            TPMBudget(url, "edge", 3000, clock=lambda: now[0], sleep=lambda s: None) as late:
        real_tx = late._tx

        @contextmanager
        def slow_lock():
            other.reserve(3000)  # while `late` waits for the lock, minute 1 fills up ...
            now[0] = 60.5  # ... and the wall clock passes the minute boundary
            with real_tx() as cur:
                yield cur

        late._tx = slow_lock
        r = late.reserve(50)
        late._tx = real_tx
        assert r.minute == 2  # minute 1 is full, minute 0 is over
        assert [(w.minute, w.reserved_tokens, w.actual_tokens) for w in late.window_usage()] == [(1, 3000, 3000),
                                                                                                   (2, 50, 50)]


def test_window_usage_reports_reserved_and_actual_tokens(tmp_path):
    """Issue 10: every window with the tokens reserved in it and the tokens it holds after
    reconciliation, against the target."""
    with TPMBudget(f"sqlite:///{tmp_path}/b.db", "u", 100, simulated=True) as b:
        r1 = b.reserve(60)
        r2 = b.reserve(60)
        b.reconcile(r1, 30)  # 30 unused tokens go back to minute 0
        b.reconcile(r2, 90)  # 30 more than reserved: minute 1 has room for 30
        usage = [(w.minute, w.reserved_tokens, w.actual_tokens, w.target_tpm) for w in b.window_usage()]
    assert usage == [(0, 60, 30, 100), (1, 60, 90, 100)]


def test_l02_report_lists_its_windows():
    r = run_l02(3000, 50, agent_count=2, processes=1)
    assert [w.model_dump() for w in r.windows] == [
        {"minute": 0, "reserved_tokens": 3000, "actual_tokens": 3000, "target_tpm": 3000}]
