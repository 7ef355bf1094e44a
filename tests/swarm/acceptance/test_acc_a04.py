"""A04: pheromone-driven claiming vs FIFO on a workload with failing and varying-quality tasks."""

from __future__ import annotations

from benchscore.swarm.accept.a04 import (
    StrategyResult,
    Workload,
    a04_pass,
    run_a04,
    run_fifo,
    run_swarm_strategy,
)


def res(conv, score, name="x"):
    return StrategyResult(strategy=name, executions_to_convergence=conv, seconds_to_convergence=None,
                          accepted_score_at_budget=score, executions=10, failures=0, wall_time_s=0.0)


def test_a04_pass_rule():
    assert a04_pass(res(10, 0.9), res(20, 0.8))
    assert a04_pass(res(10, 0.9), res(None, 0.8))  # FIFO never converging counts as infinitely slow
    assert not a04_pass(res(None, 1.0), res(None, 0.8))
    assert not a04_pass(res(30, 0.9), res(20, 0.8))
    assert not a04_pass(res(10, 0.7), res(20, 0.8))


def test_workload_is_seeded_and_has_broken_tasks():
    w = Workload(seed=3)
    assert w.root_qualities() == Workload(seed=3).root_qualities()
    assert any(b for _, b in w.root_qualities()) and all(0.3 <= q <= 0.8 for q, _ in w.root_qualities())


def test_trail_is_what_makes_the_difference():
    w = Workload(work_s=0.0, seed=7)
    r = run_a04(w)
    assert r.A04_PASS and r.swarm.failures >= 1 and r.fifo.failures >= 1
    no_trail = run_swarm_strategy(w, trail=False)
    assert no_trail.executions_to_convergence > r.swarm.executions_to_convergence
    # FIFO is deterministic: same workload, same numbers
    assert run_fifo(w).executions_to_convergence == r.fifo.executions_to_convergence
