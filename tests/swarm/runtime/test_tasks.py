"""Seed sections 4 and 5 as pure functions: pheromone rules, claim order, converge."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.swarm import (
    ConvergeResult,
    Task,
    TaskSpec,
    TaskStatus,
    claim_order,
    converge,
    pheromone_on_failure,
    pheromone_on_success,
    status_after_failure,
)
from benchscore.swarm.lease import CrashPolicy, resolve_expired_lease
from benchscore.swarm.tasks import INITIAL_PHEROMONE, AgentSpec, unknown_capabilities


def _task(i, p, cap="a", status=TaskStatus.pending):
    return Task(i, cap, "{}", status, p, None, None, 0, 3)


def test_initial_pheromone_is_zero():
    assert INITIAL_PHEROMONE == 0.0
    assert TaskSpec(capability="a", payload={}).pheromone == 0.0


def test_success_adds_score_failure_subtracts_one():
    assert pheromone_on_success(0.0, 0.62) == pytest.approx(0.62)
    assert pheromone_on_success(0.5, 1.0) == pytest.approx(1.5)
    assert pheromone_on_failure(0.0) == -1.0
    assert pheromone_on_failure(0.25) == -0.75


def test_failure_requeues_until_attempt_limit():
    assert status_after_failure(1, 3) is TaskStatus.pending
    assert status_after_failure(2, 3) is TaskStatus.pending
    assert status_after_failure(3, 3) is TaskStatus.failed
    assert status_after_failure(1, 1) is TaskStatus.failed


def test_claim_order_is_argmax_pheromone_ties_oldest_first():
    tasks = [_task(1, 0.0), _task(2, 0.9), _task(3, 0.9), _task(4, 2.0, cap="b"), _task(5, 5.0, status=TaskStatus.done)]
    assert [t.task_id for t in claim_order(tasks, ["a"])] == [2, 3, 1]
    assert [t.task_id for t in claim_order(tasks, ["a", "b"])] == [4, 2, 3, 1]
    assert claim_order(tasks, ["c"]) == []


def test_converge_picks_highest_score_and_records_the_three_fields():
    result = converge([(1, 0.12, "risky"), (2, 0.98, "step"), (3, 1.0, "final")])
    assert result == ConvergeResult(accepted_task_id=3, accepted_score=1.0, accepted_output="final")
    assert converge([]) is None
    assert converge([(5, 0.5, "x"), (4, 0.5, "y")]).accepted_task_id == 4  # tie: oldest


def test_converge_rejects_non_finite_scores():
    with pytest.raises(ValueError):
        converge([(1, math.nan, "x")])


def test_crash_policy_resolution():
    assert resolve_expired_lease(CrashPolicy.requeue, 1, 3, 0.5) == (TaskStatus.pending, 0.5)
    assert resolve_expired_lease(CrashPolicy.requeue, 3, 3, 0.5) == (TaskStatus.failed, -0.5)
    assert resolve_expired_lease(CrashPolicy.fail, 1, 3, 0.5) == (TaskStatus.failed, -0.5)


def test_unknown_capabilities():
    tasks = [TaskSpec(capability="a", payload={}), TaskSpec(capability="z", payload={})]
    agents = [AgentSpec(agent_id="x", capabilities=["a", "b"])]
    assert unknown_capabilities(tasks, agents) == {1: "z"}


def test_formats_reject_bad_values():
    with pytest.raises(ValueError):
        TaskSpec(capability="a", payload={}, pheromone=math.inf)
    with pytest.raises(ValueError):
        TaskSpec(capability="a", payload={}, max_attempts=0)
    with pytest.raises(ValueError):
        TaskSpec(capability=" a", payload={})
    with pytest.raises(ValueError):
        AgentSpec(agent_id="x", capabilities=["a", "a"])
    with pytest.raises(ValueError):
        AgentSpec(agent_id="x", capabilities=[])


scores = st.floats(min_value=-10, max_value=10, allow_nan=False)


@given(st.lists(st.tuples(st.integers(1, 10**6), scores), min_size=1, max_size=30, unique_by=lambda t: t[0]))
def test_converge_is_the_argmax(items):
    result = converge([(i, s, f"out{i}") for i, s in items])
    best = max(s for _, s in items)
    assert result.accepted_score == best
    assert result.accepted_task_id == min(i for i, s in items if s == best)
    assert result.accepted_output == f"out{result.accepted_task_id}"
    # order of the input does not matter
    assert converge([(i, s, f"out{i}") for i, s in reversed(items)]) == result


@given(st.lists(scores, min_size=1, max_size=30), st.floats(0, 1))
def test_success_raises_and_failure_lowers_pheromone(ps, score):
    for p in ps:
        assert pheromone_on_success(p, score) >= p
        assert pheromone_on_failure(p) < p


@given(st.lists(st.tuples(scores, st.sampled_from(["a", "b"])), min_size=1, max_size=30))
def test_claim_order_first_is_argmax(items):
    tasks = [_task(i + 1, p, cap) for i, (p, cap) in enumerate(items)]
    order = claim_order(tasks, ["a"])
    eligible = [t for t in tasks if t.capability == "a"]
    if not eligible:
        assert order == []
        return
    assert order[0].pheromone == max(t.pheromone for t in eligible)
    assert all((-x.pheromone, x.task_id) < (-y.pheromone, y.task_id) for x, y in zip(order, order[1:], strict=False))
