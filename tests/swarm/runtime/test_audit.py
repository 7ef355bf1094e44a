"""The ledger audit proves a clean run and refutes every kind of broken one."""

from __future__ import annotations

from benchscore.swarm import audit_events
from benchscore.swarm.ledger import GENESIS, event_digest


def ev(seq, task, kind, agent=None, attempt=0, value=None, delta=None, note=None):
    return (seq, "r", task, kind, agent, attempt, value, delta, note, float(seq))


def chained(rows):
    """The rows with valid hash chains (in their order): what a store would have written. A row
    goes to the first writer whose last seq is below its own (writer 1 unless the rows' seqs fall)."""
    out, heads = [], []  # heads: [last seq, hash, rows] per writer
    for row in rows:
        w = next((i for i, h in enumerate(heads) if h[0] < row[0]), None)
        if w is None:
            heads.append([0, GENESIS, 0])
            w = len(heads) - 1
        h = heads[w]
        h[0], h[1], h[2] = row[0], event_digest(h[1], *row[1:9]), h[2] + 1
        out.append((*row, h[1], w + 1, h[2]))
    return out


def audit(rows, **kw):
    return audit_events(chained(rows), run_id="r", **kw)


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
    r = audit(CLEAN, history=True)
    assert r.verdict == "PASS"
    assert (r.tasks_created, r.tasks_done, r.tasks_failed, r.tasks_unaccounted) == (2, 2, 0, 0)
    assert r.duplicate_claims == [] and r.participating_agents == ["x", "y"]
    assert (r.claims, r.completions, r.failures, r.lease_expiries, r.pheromone_changes) == (4, 2, 1, 1, 3)
    assert r.pheromone_history == {"1": [0.0, -1.0, -0.7], "2": [0.5, 1.4]}
    assert r.final_pheromone == {"1": -0.7, "2": 1.4}


def test_claim_while_claimed_is_a_duplicate():
    rows = CLEAN[:3] + [ev(50, 2, "claim", "z", 2, 0.5)] + CLEAN[3:]
    r = audit(rows)
    assert r.verdict == "FAIL" and r.duplicate_claims == [2]
    assert "claimed while claimed" in r.violations[0].reason


def test_second_completion_is_a_duplicate():
    r = audit(CLEAN + [ev(20, 2, "complete", "x", 1, 0.9)])
    assert r.verdict == "FAIL" and r.duplicate_claims == [2]


def test_claim_after_done_and_attempt_reuse_are_duplicates():
    r = audit(CLEAN + [ev(20, 2, "claim", "q", 2, 1.4)])
    assert r.duplicate_claims == [2]
    rows = CLEAN[:7] + [ev(8, 1, "pheromone", "y", 1, -1.0, -1.0, "fail"), ev(9, 1, "claim", "x", 1, -1.0)]
    r = audit(rows)
    assert r.duplicate_claims == [1] and "reused" in r.violations[0].reason


def test_completion_by_another_agent_is_refuted():
    rows = CLEAN[:4] + [ev(5, 2, "complete", "intruder", 1, 0.9)]
    r = audit(rows)
    assert r.verdict == "FAIL" and 2 in r.duplicate_claims


def test_unaccounted_task_fails_the_audit():
    r = audit(CLEAN[:4])
    assert r.verdict == "FAIL" and r.tasks_unaccounted == 2 and not r.every_task_accounted_for
    assert r.duplicate_claims == []


def test_inconsistent_pheromone_history_fails():
    rows = list(CLEAN)
    rows[5] = ev(6, 2, "pheromone", "x", 1, 9.9, 0.9, "complete")
    r = audit(rows)
    assert r.verdict == "FAIL" and not r.pheromone_consistent


def test_event_for_unknown_task_fails():
    r = audit(CLEAN + [ev(30, 99, "claim", "x", 1, 0.0)])
    assert r.verdict == "FAIL" and 99 in r.duplicate_claims


def _replace(rows, seq, new):
    return [new if r[0] == seq else r for r in rows]


def test_pheromone_changes_must_follow_the_seed_rule():
    """Seed section 4: a completion adds task.score, a failure subtracts 1.0. A ledger whose
    history is arithmetically consistent but applies another rule is refuted."""
    doubled = _replace(CLEAN, 6, ev(6, 2, "pheromone", "x", 1, 2.3, 1.8, "complete"))  # 0.5 + 2 * 0.9
    r = audit(doubled)
    assert r.verdict == "FAIL" and not r.pheromone_consistent
    assert "task.score" in r.violations[0].reason
    half_penalty = _replace(CLEAN, 8, ev(8, 1, "pheromone", "y", 1, -0.5, -0.5, "fail"))
    half_penalty = [r if r[0] < 9 else ev(r[0], r[2], r[3], r[4], r[5],
                                          (r[6] + 0.5) if r[3] in ("claim", "pheromone") else r[6], r[7], r[8])
                    for r in half_penalty]
    r = audit(half_penalty)
    assert r.verdict == "FAIL" and not r.pheromone_consistent
    assert "-1.0" in r.violations[0].reason


def test_completion_or_failure_without_its_pheromone_change_is_refuted():
    r = audit([row for row in CLEAN if row[0] != 6])
    assert r.verdict == "FAIL" and not r.pheromone_consistent
    r = audit([row for row in CLEAN if row[0] != 8])
    assert r.verdict == "FAIL"


def test_claim_must_record_the_current_pheromone():
    r = audit(_replace(CLEAN, 9, ev(9, 1, "claim", "x", 2, 3.0)))
    assert r.verdict == "FAIL" and not r.pheromone_consistent


def test_lease_expiry_pheromone_rule():
    """requeue keeps P_t (no pheromone change); a lease expiry that fails the task costs 1.0."""
    base = CLEAN[:2] + [ev(3, 1, "claim", "x", 1, 0.0), ev(4, 1, "lease_expired", "x", 1, note="failed")]
    ok = base + [ev(5, 1, "pheromone", "x", 1, -1.0, -1.0, "lease_expired"), ev(6, 2, "claim", "y", 1, 0.5),
                 ev(7, 2, "complete", "y", 1, 0.2), ev(8, 2, "pheromone", "y", 1, 0.7, 0.2, "complete")]
    assert audit(ok).verdict == "PASS"
    assert audit(_replace(ok, 5, ev(5, 1, "pheromone", "x", 1, -2.0, -2.0, "lease_expired"))).verdict == "FAIL"
    requeued_with_change = CLEAN[:8] + [ev(9, 1, "claim", "x", 2, -1.0), ev(10, 1, "lease_expired", "x", 2,
                                                                            note="pending"),
                                        ev(11, 1, "pheromone", "x", 2, -2.0, -1.0, "lease_expired"),
                                        ev(12, 1, "claim", "y", 3, -2.0), ev(13, 1, "complete", "y", 3, 0.3),
                                        ev(14, 1, "pheromone", "y", 3, -1.7, 0.3, "complete")]
    r = audit(requeued_with_change)
    assert r.verdict == "FAIL" and not r.pheromone_consistent and r.every_task_accounted_for


def test_rule_check_holds_for_large_pheromones_on_a_real_store(tmp_path):
    """(P + score) - P is not exactly score in floating point: the rule is checked on the values."""
    from benchscore.swarm import TaskSpec, audit_pool, open_pool

    with open_pool(f"sqlite:///{tmp_path}/r.db", "big") as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="a", payload={}, pheromone=1e9 + 0.1, max_attempts=2),
                        TaskSpec(capability="a", payload={}, pheromone=0.1)])
        c = pool.claim("x", ["a"])[0]
        pool.fail(c, "once")
        pool.complete(pool.claim("x", ["a"])[0], 0.3, "ok")
        pool.complete(pool.claim("x", ["a"])[0], 0.7, "ok")
        assert audit_pool(pool).verdict == "PASS"
