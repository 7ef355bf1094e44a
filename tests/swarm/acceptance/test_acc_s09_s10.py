"""S09 and S10 computed from real runs on SQLite; every condition failing on its own."""

from __future__ import annotations

import pytest

from benchscore.swarm.accept.s09 import (
    ClaimRunEvidence,
    candidate_fusion_check,
    evaluate_s09,
    questioning_consensus_check,
    run_s09,
    scaled_autonomous_claim_check,
)
from benchscore.swarm.accept.s10 import (
    LedgerRow,
    collect_s10_evidence,
    evaluate_s10,
    local_interaction_count,
    run_s10_swarm,
)
from benchscore.swarm.fusion import FusedOutput


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("accept")
    return f"sqlite:///{d}/accept.db", d / "blobs"


@pytest.fixture(scope="module")
def s09(store):
    url, blobs = store
    return run_s09(url, blob_root=blobs, prefix="t")


@pytest.fixture(scope="module")
def s10_evidence(store, s09):
    url, blobs = store
    run_s10_swarm(url, "t-s10", blob_root=blobs)
    runs = [ClaimRunEvidence(**r) for r in s09.checks[0].evidence["runs"]]
    return collect_s10_evidence(url, "t-s10", runs)


def test_s09_passes_on_a_real_run(s09):
    assert s09.passed, [c for c in s09.checks if not c.passed]
    assert [c.name for c in s09.checks] == ["scaled_autonomous_claim_pass", "candidate_fusion_pass",
                                            "questioning_consensus_pass"]
    assert s09.details["ledger_rebuild_matches_run"]
    cons = s09.checks[2].evidence
    assert cons["round_count"] >= 2 and not cons["rounds"][0]["converged"]
    assert (cons["first_round_converged"], cons["last_round_converged"]) == (False, True)  # the seed's names


def good_run(n, **kw):
    base = dict(n=n, run_id=f"r{n}", task_count=2 * n, completed_tasks=2 * n, failed_tasks=0, duplicate_claims=[],
                participating_agents=n, converged=True, all_tasks_done=True)
    return ClaimRunEvidence(**{**base, **kw})


@pytest.mark.parametrize("change", [
    {"converged": False}, {"completed_tasks": 5}, {"failed_tasks": 1}, {"duplicate_claims": [3]},
    {"participating_agents": 4}, {"all_tasks_done": False},
])
def test_each_scaled_claim_condition_fails_on_its_own(change):
    runs = [good_run(3), good_run(5, **change), good_run(7)]
    assert scaled_autonomous_claim_check([good_run(3), good_run(5), good_run(7)]).passed
    assert not scaled_autonomous_claim_check(runs).passed
    assert not scaled_autonomous_claim_check([good_run(3), good_run(7)]).passed  # a missing n fails too


def fused(**kw):
    base = dict(text="argmax pheromone\nleases\nledger\nredis", score=0.85, sources=("quality", "coverage"),
                filtered_out=("noise",), min_score=0.5)
    return FusedOutput(**{**base, **kw})


@pytest.mark.parametrize("change", [
    {"sources": ("coverage", "quality")}, {"sources": ("quality", "coverage", "noise")},
    {"text": "argmax pheromone\nleases\nledger"}, {"text": "argmax pheromone\nleases\nledger\nredis\nLOW-SCORE-NOISE"},
])
def test_each_fusion_condition_fails_on_its_own(change):
    assert candidate_fusion_check(fused()).passed
    assert not candidate_fusion_check(fused(**change)).passed


def test_each_questioning_condition_fails_on_its_own(s09):
    from benchscore.swarm.accept.s09 import CONSENSUS_CANDIDATES, ROLE_WEIGHTS
    from benchscore.swarm.consensus import S09_QUESTIONING_CONSENSUS, ConsensusResult

    good = s09.checks[2]
    assert good.passed
    rounds = good.evidence["rounds"]
    assert len(rounds) == 2

    def result(rs, **kw):
        from benchscore.swarm.consensus import Challenge, ConsensusRound, Revision, Vote
        built = []
        for i, spec in enumerate(rs, start=1):
            built.append(ConsensusRound(
                round=i, scores_after_evaporation={}, votes=(Vote(agent="a", role="skeptic", candidate=spec["leader"],
                                                                  confidence=1.0),),
                vote_increments=(1.0,), challenges=(Challenge(agent="a", question="q"),) if spec.get("ch", True) else (),
                revisions=(Revision(agent="r", answers="a", revised_text="t"),) if spec.get("rev", True) else (),
                scores={}, leader=spec["leader"], leader_share=0.8, margin=1.0, converged=spec["conv"]))
        last = built[-1]
        base = dict(kind="questioning_consensus", candidates=CONSENSUS_CANDIDATES, threshold=0.7, min_margin=0.2,
                    evaporation=S09_QUESTIONING_CONSENSUS.evaporation, role_weights=ROLE_WEIGHTS, rounds=tuple(built),
                    round_count=len(built), converged=last.converged,
                    accepted_candidate=last.leader if last.converged else None)
        return ConsensusResult(**{**base, **kw})

    ok = [{"leader": "approve_fused_candidate", "conv": False}, {"leader": "approve_fused_candidate", "conv": True}]
    assert questioning_consensus_check(result(ok)).passed
    bad_cases = [
        result([{"leader": "approve_fused_candidate", "conv": False}, {"leader": "approve_fused_candidate",
                                                                          "conv": False}]),
        result([ok[0], {"leader": "reject_fused_candidate", "conv": True}]),
        result([{"leader": "approve_fused_candidate", "conv": True}]),
        result([{"leader": "approve_fused_candidate", "conv": True}, ok[1]]),
        result([{**ok[0], "ch": False}, ok[1]]),
        result([ok[0], {**ok[1], "rev": False}]),
    ]
    for bad in bad_cases:
        assert not questioning_consensus_check(bad).passed


def test_evaluate_s09_is_the_conjunction(s09):
    runs = [good_run(n) for n in (3, 5, 7)]
    from benchscore.swarm.consensus import ConsensusResult
    empty = ConsensusResult(kind="q", candidates=("a",), threshold=0.7, min_margin=0.2, evaporation=0.85,
                            role_weights={}, rounds=(), round_count=0, converged=False, accepted_candidate=None)
    r = evaluate_s09(runs, fused(), empty)
    assert not r.passed and [c.passed for c in r.checks] == [True, True, False]


# -- S10 -------------------------------------------------------------------------------------------

def test_s10_passes_on_a_real_run(s10_evidence):
    r = evaluate_s10(s10_evidence)
    assert r.passed, [c for c in r.checks if not c.passed]
    assert [c.name for c in r.checks] == ["F01_decentralization", "F02_self_organization", "F03_emergence",
                                          "F04_robustness", "F05_scalability", "F06_implicit_collaboration"]


def mutate_tasks(ev, fn):
    return ev.model_copy(update={"tasks": tuple(fn(t) for t in ev.tasks)})


def first_task(ev):
    return ev.tasks[0].task_id


CASES = {
    "F01 participating agents": ("F01_decentralization", lambda ev: ev.model_copy(
        update={"participating_agents": ev.participating_agents[:3]})),
    "F01 duplicate claims": ("F01_decentralization", lambda ev: ev.model_copy(update={"duplicate_claims": [1]})),
    "F01 control key": ("F01_decentralization", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"payload": {**t.payload, "leader": "agent-0"}}))),
    "F01 decision records": ("F01_decentralization", lambda ev: ev.model_copy(update={"events": tuple(
        e for e in ev.events if not (e.kind == "claim" and e.task_id == first_task(ev)))})),
    "F01 control key in Redis": ("F01_decentralization", lambda ev: ev.model_copy(
        update={"store_keys": ("swarm:t-s10:pheromone:analysis", "swarm:t-s10:leader")})),
    "F06 message key in Redis": ("F06_implicit_collaboration", lambda ev: ev.model_copy(
        update={"store_keys": ("swarm:t-s10:inbox",)})),
    "F02 global plan": ("F02_self_organization", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"payload": {**t.payload, "assigned_to": "x"}}))),
    "F02 local interactions": ("F02_self_organization", lambda ev: ev.model_copy(update={"events": tuple(
        e.model_copy(update={"agent": "solo"}) for e in ev.events)})),
    "F02 dominant cluster": ("F02_self_organization", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"final_pheromone": 100.0}) if t.capability == "review" else t)),
    "F03 global not above local": ("F03_emergence", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"output": "finding: all"}) if t.status == "done" else t)),
    "F03 accepted not argmax": ("F03_emergence", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"output": (t.output or "") + "\n" + "\n".join(
            f"finding: extra {k}" for k in range(20))}) if t.capability == "review" and t.status == "done" else t)),
    "F04 no failed task": ("F04_robustness", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"status": "done"}))),
    "F04 completed": ("F04_robustness", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"status": "failed"}) if t.task_id != first_task(ev) else t)),
    "F04 negative observation": ("F04_robustness", lambda ev: ev.model_copy(update={"events": tuple(
        e for e in ev.events if not (e.delta is not None and e.delta < 0))})),
    "F04 not converged": ("F04_robustness", lambda ev: ev.model_copy(update={"accepted_task_id": None})),
    "F05 scalability": ("F05_scalability", lambda ev: ev.model_copy(update={"scale_runs": tuple(
        r.model_copy(update={"participating_agents": r.n - 1}) if r.n == 7 else r for r in ev.scale_runs)})),
    "F06 direct message": ("F06_implicit_collaboration", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"payload": {**t.payload, "reply_to": "agent-2"}}))),
    "F06 no trail": ("F06_implicit_collaboration", lambda ev: ev.model_copy(update={"events": tuple(
        e for e in ev.events if e.kind != "pheromone")})),
    "F06 first claim": ("F06_implicit_collaboration", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"initial_pheromone": 5.0}) if t.capability == "review"
        and t.initial_pheromone == 0.0 else t)),
    "F06 high not above medium": ("F06_implicit_collaboration", lambda ev: mutate_tasks(
        ev, lambda t: t.model_copy(update={"final_pheromone": 0.0}) if t.initial_pheromone == 2.0 else t)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_s10_condition_fails_on_its_own(s10_evidence, case):
    feature, mutate = CASES[case]
    r = evaluate_s10(mutate(s10_evidence))
    failed = [c.name for c in r.checks if not c.passed]
    assert feature in failed and not r.passed


def test_local_interaction_definition():
    rows = [LedgerRow(seq=i, task_id=t, kind=k, agent=a, attempt=1, value=None, delta=None, note=None)
            for i, (t, k, a) in enumerate([(1, "claim", "a"), (1, "pheromone", "a"), (2, "claim", "b"),
                                           (2, "pheromone", "b"), (3, "claim", "b"), (4, "claim", "a")])]
    # claim of 2 by b after a's trace: 1; claim of 3 by b after b's own: 0; claim of 4 (other cap): 0
    assert local_interaction_count(rows, {1: "x", 2: "x", 3: "x", 4: "y"}) == 1


@pytest.mark.pg
@pytest.mark.redis
def test_s09_and_s10_on_postgresql_with_redis(pg_schema, redis_prefix, tmp_path):
    from benchscore.swarm.accept.s10 import run_s10

    dsn, schema = pg_schema
    url, prefix = redis_prefix
    store, redis_url = f"{dsn}?schema={schema}", f"{url}?prefix={prefix}"
    s09 = run_s09(store, redis_url=redis_url, blob_root=tmp_path / "blobs", prefix="pg")
    assert s09.passed, [c for c in s09.checks if not c.passed]
    runs = [ClaimRunEvidence(**r) for r in s09.checks[0].evidence["runs"]]
    s10 = run_s10(store, redis_url=redis_url, blob_root=tmp_path / "blobs", prefix="pg", scale_runs=runs)
    assert s10.passed, [c for c in s10.checks if not c.passed]
    assert s10.checks[0].evidence["control_keys"] == []  # the Redis mirror's keys were read and are clean


def _row(i, cap, status, final, output, initial=0.0):
    from benchscore.swarm.accept.s10 import TaskRow

    return TaskRow(task_id=i, capability=cap, payload={}, status=status, initial_pheromone=initial,
                   final_pheromone=final, score=None, output=output)


def test_cluster_score_and_group_scores_definitions():
    from benchscore.swarm.accept.s10 import cluster_scores, findings, group_scores

    tasks = [_row(1, "a", "done", 1.5, "finding: x\nfinding: y"), _row(2, "a", "done", 0.5, "finding: y\nfinding: z"),
             _row(3, "b", "done", 1.9, "finding: w"), _row(4, "b", "failed", 5.0, None)]
    assert cluster_scores(tasks) == {"a": 2.0, "b": 1.9}  # failed tasks do not count
    assert findings("finding: x\nnoise\n  finding:  y  ") == {"x", "y"}
    glob, local = group_scores(tasks)
    assert glob == {"a": 0.75, "b": 0.25}  # |{x,y,z}| / |{x,y,z,w}|
    assert local == {1: 0.5, 2: 0.5, 3: 0.25}
    assert group_scores([_row(1, "a", "failed", 0, None)]) == ({}, {})


def _lying_table(monkeypatch):
    """The pool's task table and status counts say every task is done with P_t 99; the ledger does not."""
    import dataclasses

    from benchscore.swarm import TaskStatus
    from benchscore.swarm.stores.base import TaskPool

    real_tasks = TaskPool.tasks
    monkeypatch.setattr(TaskPool, "tasks", lambda self: [
        dataclasses.replace(t, status=TaskStatus.done, pheromone=99.0) for t in real_tasks(self)])
    monkeypatch.setattr(TaskPool, "counts", lambda self: {"pending": 0, "claimed": 0, "done": 0, "failed": 0})


def test_scaled_claim_evidence_comes_from_the_ledger(store, monkeypatch):
    from benchscore.swarm.accept.s09 import run_claim_scale

    url, blobs = store
    _lying_table(monkeypatch)
    r = run_claim_scale(url, "t-ledger-scale", 3, blob_root=blobs, seconds=0.0)
    assert (r.task_count, r.completed_tasks, r.failed_tasks, r.all_tasks_done) == (6, 6, 0, True)


def test_s10_task_states_come_from_the_ledger(store, s10_evidence, monkeypatch):
    url, _ = store
    honest = {t.task_id: (t.status, t.final_pheromone) for t in s10_evidence.tasks}
    assert sorted(s for s, _ in honest.values()).count("failed") == 1
    _lying_table(monkeypatch)
    ev = collect_s10_evidence(url, "t-s10", s10_evidence.scale_runs)
    assert {t.task_id: (t.status, t.final_pheromone) for t in ev.tasks} == honest
    assert evaluate_s10(ev).passed


def test_ledger_task_states_replay():
    from benchscore.swarm.accept.s10 import ledger_task_states

    def row(seq, task, kind, value=None, note=None):
        return LedgerRow(seq=seq, task_id=task, kind=kind, agent="a", attempt=1, value=value, delta=None, note=note)

    states = ledger_task_states([
        row(1, 1, "create", 2.0), row(2, 2, "create", 0.0), row(3, 3, "create", 1.0),
        row(4, 1, "claim", 2.0), row(5, 1, "complete", 0.9), row(6, 1, "pheromone", 2.9),
        row(7, 2, "claim", 0.0), row(8, 2, "lease_expired", note="failed"), row(9, 2, "pheromone", -1.0),
        row(10, 3, "claim", 1.0), row(11, 3, "fail", note="pending"), row(12, 3, "pheromone", 0.0),
    ])
    assert states == {
        1: {"status": "done", "initial_pheromone": 2.0, "final_pheromone": 2.9, "score": 0.9},
        2: {"status": "failed", "initial_pheromone": 0.0, "final_pheromone": -1.0, "score": None},
        3: {"status": "pending", "initial_pheromone": 1.0, "final_pheromone": 0.0, "score": None},
    }
