"""The ledger audit proves a clean run and refutes every kind of broken one."""

from __future__ import annotations

from benchscore.swarm import audit_events


def ev(seq, task, kind, agent=None, attempt=0, value=None, delta=None, note=None):
    return (seq, "r", task, kind, agent, attempt, value, delta, note, float(seq))


CLEAN = [
    ev(1, 1, "create", value=0.0, note="a"),
    ev(2, 2, "create", value=0.5, note="a"),
    ev(3, 2, "claim", "x", 1, 0.5),
    ev(4, 1, "claim", "y", 1, 0.0),
    ev(5, 2, "complete", "x", 1, 0.9),
    ev(6, 2, "pheromone", "x", 1, 1.4, 0.9, "complete"),
    ev(7, 1, "fail", "y", 1, note="pending"),
    ev(8, 1, "pheromone", "y", 1, -1.0, -1.0, "fail"),
    ev(9, 1, "claim", "x", 2, -1.0),
    ev(10, 1, "lease_expired", "x", 2, note="pending"),
    ev(11, 1, "claim", "y", 3, -1.0),
    ev(12, 1, "complete", "y", 3, 0.3),
    ev(13, 1, "pheromone", "y", 3, -0.7, 0.3, "complete"),
]


def test_clean_ledger_passes_with_history():
    r = audit_events(CLEAN, run_id="r", history=True)
    assert r.verdict == "PASS"
    assert (r.tasks_created, r.tasks_done, r.tasks_failed, r.tasks_unaccounted) == (2, 2, 0, 0)
    assert r.duplicate_claims == [] and r.participating_agents == ["x", "y"]
    assert (r.claims, r.completions, r.failures, r.lease_expiries, r.pheromone_changes) == (4, 2, 1, 1, 3)
    assert r.pheromone_history == {"1": [0.0, -1.0, -0.7], "2": [0.5, 1.4]}
    assert r.final_pheromone == {"1": -0.7, "2": 1.4}


def test_claim_while_claimed_is_a_duplicate():
    rows = CLEAN[:3] + [ev(50, 2, "claim", "z", 2, 0.5)] + CLEAN[3:]
    r = audit_events(rows, run_id="r")
    assert r.verdict == "FAIL" and r.duplicate_claims == [2]
    assert "claimed while claimed" in r.violations[0].reason


def test_second_completion_is_a_duplicate():
    r = audit_events(CLEAN + [ev(20, 2, "complete", "x", 1, 0.9)], run_id="r")
    assert r.verdict == "FAIL" and r.duplicate_claims == [2]


def test_claim_after_done_and_attempt_reuse_are_duplicates():
    r = audit_events(CLEAN + [ev(20, 2, "claim", "q", 2, 1.4)], run_id="r")
    assert r.duplicate_claims == [2]
    rows = CLEAN[:7] + [ev(8, 1, "pheromone", "y", 1, -1.0, -1.0, "fail"), ev(9, 1, "claim", "x", 1, -1.0)]
    r = audit_events(rows, run_id="r")
    assert r.duplicate_claims == [1] and "reused" in r.violations[0].reason


def test_completion_by_another_agent_is_refuted():
    rows = CLEAN[:4] + [ev(5, 2, "complete", "intruder", 1, 0.9)]
    r = audit_events(rows, run_id="r")
    assert r.verdict == "FAIL" and 2 in r.duplicate_claims


def test_unaccounted_task_fails_the_audit():
    r = audit_events(CLEAN[:4], run_id="r")
    assert r.verdict == "FAIL" and r.tasks_unaccounted == 2 and not r.every_task_accounted_for
    assert r.duplicate_claims == []


def test_inconsistent_pheromone_history_fails():
    rows = list(CLEAN)
    rows[5] = ev(6, 2, "pheromone", "x", 1, 9.9, 0.9, "complete")
    r = audit_events(rows, run_id="r")
    assert r.verdict == "FAIL" and not r.pheromone_consistent


def test_event_for_unknown_task_fails():
    r = audit_events(CLEAN + [ev(30, 99, "claim", "x", 1, 0.0)], run_id="r")
    assert r.verdict == "FAIL" and 99 in r.duplicate_claims
