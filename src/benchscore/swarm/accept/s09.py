"""S09, the next-boundary minimal acceptance (seed section 9), computed from real runs.

``S09_PASS = scaled_autonomous_claim_pass and candidate_fusion_pass and questioning_consensus_pass``.

- Scaled claims: for n in 3, 5, 7 a run with 2n tasks and n agents in n worker processes on one
  shared pool (the runtime's ``run_swarm``); the evidence is the run's ledger audit, its task
  counts and its recorded convergence.
- Candidate fusion: three agents produce the ``quality``, ``coverage`` and low-score ``noise``
  candidates as tasks of one run; :func:`fuse_candidate_outputs` (``min_score = 0.5``) fuses the
  done tasks read back from the pool.
- Questioning consensus: three deterministic reviewers question the fused text; each round
  every reviewer raises a challenge, the reviser answers them (adding at most one missing piece
  of evidence per round) and every reviewer votes; votes, challenges and revisions are tasks of
  a run, and the rounds are rebuilt from that run's ledger (:mod:`.ledger_consensus`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import Field

from benchscore.common.models import Format
from benchscore.swarm import Agent, Outcome, TaskSpec, audit_pool, open_pool, run_swarm, simulated_handler

from ..consensus import (
    S09_QUESTIONING_CONSENSUS,
    Challenge,
    ConsensusResult,
    QuestioningConsensusSwarm,
    Revision,
    RoundContext,
    Vote,
)
from ..fusion import Candidate, FusedOutput, fuse_candidate_outputs
from .evidence import Check, ScenarioResult, all_passed, consensus_evidence
from .ledger_consensus import PooledReviewer, PooledReviser, consensus_from_ledger

S09_SIZES = (3, 5, 7)
FUSION_MIN_SCORE = 0.5
EXPECTED_SOURCES = ("quality", "coverage")

#: the three S09 candidates (seed section 9): two useful ones and low-score noise
S09_CANDIDATES: dict[str, tuple[str, float]] = {
    "quality": ("claim order follows argmax pheromone\nevidence: claim_order\n"
                "leases fence stale completions", 0.9),
    "coverage": ("the ledger records every claim and completion\nevidence: ledger\n"
                 "redis mirrors pheromones per capability", 0.8),
    "noise": ("LOW-SCORE-NOISE: agents should message each other directly", 0.3),
}
EXPECTED_TERMS = ("argmax pheromone", "leases", "ledger", "redis")
NOISE_MARKER = "LOW-SCORE-NOISE"

CONSENSUS_CANDIDATES = ("approve_fused_candidate", "request_more_evidence", "reject_fused_candidate")
ROLE_WEIGHTS = {"quality_reviewer": 1.0, "coverage_reviewer": 1.0, "skeptic": 1.2}
#: what the reviser knows: one evidence line per topic a reviewer may ask for
EVIDENCE_BASE = {
    "claim_order": "evidence: claim_order (claims take argmax P_t, ties oldest first)",
    "ledger": "evidence: ledger (every claim, completion and failure is an event)",
    "lease_fencing": "evidence: lease_fencing (a stale attempt's completion is refused)",
    "redis_reconcile": "evidence: redis_reconcile (pheromones are rebuilt from the store after a flush)",
}


# -- evidence and the pure evaluation ------------------------------------------------------------


class ClaimRunEvidence(Format):
    """What one scaled-claim run left behind, read back from its pool and ledger."""

    n: int
    run_id: str
    task_count: int
    completed_tasks: int
    failed_tasks: int
    duplicate_claims: list[int]
    participating_agents: int
    converged: bool
    all_tasks_done: bool
    audit_verdict: str = ""


def scaled_autonomous_claim_check(runs: Sequence[ClaimRunEvidence], sizes: Sequence[int] = S09_SIZES) -> Check:
    """``for all n in {3,5,7}: converged_n and completed_tasks_n = 2n and failed_tasks_n = 0 and
    duplicate_claims_n empty and participating_agents_n = n and all_tasks_done_n`` (seed section 9)."""
    by_n = {r.n: r for r in runs}
    per = {}
    for n in sizes:
        r = by_n.get(n)
        per[str(n)] = r is not None and (
            r.converged and r.completed_tasks == 2 * n and r.failed_tasks == 0 and not r.duplicate_claims
            and r.participating_agents == n and r.all_tasks_done)
    return Check(name="scaled_autonomous_claim_pass", passed=all(per.values()),
                 condition=f"for n in {tuple(sizes)}: converged, completed_tasks = 2n, failed_tasks = 0, no duplicate "
                           "claim, participating_agents = n, all tasks done",
                 evidence={"per_n": per, "runs": [r.model_dump() for r in runs]})


def candidate_fusion_check(fused: FusedOutput, *, expected_terms: Sequence[str] = EXPECTED_TERMS,
                           noise_marker: str = NOISE_MARKER) -> Check:
    """``source_candidate_ids = ("quality", "coverage") and expected_terms ⊆ fused.text and
    low_score_noise ∉ fused.text`` (seed section 9)."""
    missing = [t for t in expected_terms if t not in fused.text]
    ok = fused.sources == EXPECTED_SOURCES and not missing and noise_marker not in fused.text
    return Check(name="candidate_fusion_pass", passed=ok,
                 condition=f"fused sources = {EXPECTED_SOURCES}, the fused text holds {tuple(expected_terms)}, "
                           f"not {noise_marker}", evidence={
        "sources": list(fused.sources), "fused_score": fused.score, "missing_terms": missing,
        "noise_in_text": noise_marker in fused.text, "filtered_out": list(fused.filtered_out),
        "min_score": fused.min_score})


def questioning_consensus_check(result: ConsensusResult) -> Check:
    """``converged and accepted_candidate = approve_fused_candidate and round_count >= 2 and
    first_round_converged = false and last_round_converged = true and every_round_has_challenges
    and every_round_has_revisions`` (seed section 9)."""
    rounds = result.rounds
    parts = {
        "converged": result.converged,
        "accepted_candidate": result.accepted_candidate == "approve_fused_candidate",
        "round_count": result.round_count >= 2,
        "first_round_not_converged": bool(rounds) and not rounds[0].converged,
        "last_round_converged": bool(rounds) and rounds[-1].converged,
        "every_round_has_challenges": bool(rounds) and all(r.challenges for r in rounds),
        "every_round_has_revisions": bool(rounds) and all(r.revisions for r in rounds),
    }
    trace = consensus_evidence(result)
    for summary, r in zip(trace["rounds"], rounds, strict=True):
        summary.update(votes=len(r.votes), challenges=len(r.challenges), revisions=len(r.revisions))
    return Check(name="questioning_consensus_pass", passed=all(parts.values()),
                 condition=f"converged (leader_share >= {result.threshold} and margin >= {result.min_margin}) on "
                           "approve_fused_candidate, round_count >= 2, first round not converged, last round "
                           "converged, every round has challenges and revisions",
                 evidence={"conditions": parts, "accepted_candidate": result.accepted_candidate,
                           "round_count": result.round_count,
                           "first_round_converged": rounds[0].converged if rounds else None,
                           "last_round_converged": rounds[-1].converged if rounds else None, **trace})


def evaluate_s09(runs: Sequence[ClaimRunEvidence], fused: FusedOutput, consensus: ConsensusResult) -> ScenarioResult:
    """``S09_PASS`` from the three checks (seed section 9)."""
    checks = [scaled_autonomous_claim_check(runs), candidate_fusion_check(fused), questioning_consensus_check(consensus)]
    return ScenarioResult(scenario="S09", mode="local", passed=all_passed(checks), checks=tuple(checks),
                          consensus=consensus)


# -- the runs ------------------------------------------------------------------------------------


class CandidatePayload(Format):
    candidate_id: str
    text: str
    score: float = Field(ge=0.0, le=1.0)


def candidate_handler(claim) -> Outcome:
    """The S09 candidate agents' behaviour: produce the candidate named by the task."""
    p = CandidatePayload.model_validate(orjson.loads(claim.payload))
    return Outcome.success(p.score, p.text)


@dataclass
class EvidenceQuestioner:
    """A deterministic reviewer: it needs an ``evidence: TOPIC`` line for each of its topics.

    Challenge: the first missing topic (``missing evidence: TOPIC``), or, when nothing is missing,
    a request to confirm its first topic. Vote: ``request_more_evidence`` (0.9) while a topic is
    missing, ``approve_fused_candidate`` (0.8) once none is."""

    name: str
    role: str
    topics: tuple[str, ...]

    def _missing(self, text: str) -> list[str]:
        return [t for t in self.topics if f"evidence: {t}" not in text]

    def challenge(self, ctx: RoundContext) -> Challenge:
        missing = self._missing(ctx.subject)
        q = f"missing evidence: {missing[0]}" if missing else f"confirm evidence: {self.topics[0]}"
        return Challenge(agent=self.name, question=q)

    def vote(self, ctx: RoundContext) -> Vote:
        missing = self._missing(ctx.subject)
        if missing:
            return Vote(agent=self.name, role=self.role, candidate="request_more_evidence", confidence=0.9,
                        rationale=f"missing {', '.join(missing)}")
        return Vote(agent=self.name, role=self.role, candidate="approve_fused_candidate", confidence=0.8,
                    rationale="all evidence present")


@dataclass
class EvidenceReviser:
    """Answers every challenge; adds the evidence line of at most one missing topic per round."""

    evidence: dict[str, str]

    def revise(self, ctx: RoundContext, challenges: Sequence[Challenge]) -> list[Revision]:
        text = ctx.subject
        added = None
        for ch in challenges:
            if ch.question.startswith("missing evidence: "):
                topic = ch.question.removeprefix("missing evidence: ")
                if topic in self.evidence and f"evidence: {topic}" not in text:
                    text = f"{text}\n{self.evidence[topic]}"
                    added = topic
                    break
        answers = f"answered {len(challenges)} challenge(s); added evidence: {added or 'none'}"
        return [Revision(agent="reviser", answers=answers, revised_text=text)]


S09_REVIEWERS = (
    EvidenceQuestioner("quality-reviewer", "quality_reviewer", ("claim_order",)),
    EvidenceQuestioner("coverage-reviewer", "coverage_reviewer", ("ledger",)),
    EvidenceQuestioner("skeptic", "skeptic", ("claim_order", "lease_fencing", "redis_reconcile")),
)


def run_claim_scale(store: str, run_id: str, n: int, *, redis_url: str | None = None,
                    blob_root: str | Path | None = None, seconds: float = 0.15) -> ClaimRunEvidence:
    """One scaled-claim run: 2n simulated tasks, n agents in n worker processes, one shared pool.

    Each task holds its agent for ``seconds``: long enough that on a loaded 2-core machine every
    worker process reaches the pool before the others have drained it (S09 needs all n agents to
    take part), short enough to keep the three runs around a second each.
    """
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="s09_work", payload={
            "output": f"s09 n={n} task {k}", "score": round(0.5 + 0.4 * ((k * 7) % 10) / 10, 3), "seconds": seconds})
            for k in range(2 * n)])
    agents = [Agent(f"s09-n{n}-agent-{a}", ["s09_work"], simulated_handler) for a in range(n)]
    run_swarm(store, run_id, agents, processes=n, redis_url=redis_url, blob_root=blob_root)
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        audit = audit_pool(pool)  # every count below is read from the ledger
        converged = "run" in pool.convergences()
    total = audit.tasks_created
    return ClaimRunEvidence(
        n=n, run_id=run_id, task_count=total, completed_tasks=audit.tasks_done, failed_tasks=audit.tasks_failed,
        duplicate_claims=audit.duplicate_claims, participating_agents=len(audit.participating_agents),
        converged=converged, all_tasks_done=audit.tasks_done == total and total > 0, audit_verdict=audit.verdict)


def run_fusion(store: str, run_id: str, *, redis_url: str | None = None,
               blob_root: str | Path | None = None) -> tuple[FusedOutput, list[Candidate]]:
    """Three candidate agents complete the three candidate tasks; fuse what the pool holds."""
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="s09_candidate", payload={"candidate_id": cid, "text": text,
                                                                        "score": score})
                        for cid, (text, score) in S09_CANDIDATES.items()])
    agents = [Agent(f"s09-candidate-agent-{a}", ["s09_candidate"], candidate_handler) for a in range(3)]
    run_swarm(store, run_id, agents, processes=1, redis_url=redis_url, blob_root=blob_root)
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        cands = []
        for t in pool.tasks():
            if t.status.value == "done":
                p = CandidatePayload.model_validate(orjson.loads(t.payload))
                cands.append(Candidate(id=p.candidate_id, text=t.output or "", score=float(t.score or 0.0)))
    return fuse_candidate_outputs(cands, min_score=FUSION_MIN_SCORE), cands


def run_questioning(store: str, run_id: str, subject: str, *, redis_url: str | None = None,
                    max_rounds: int = 6) -> tuple[ConsensusResult, ConsensusResult]:
    """The questioning consensus on ``subject``, recorded in run ``run_id``; returns (the run's
    own result, the result rebuilt from the ledger)."""
    kind = "s09_questioning"
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        pool.create_run()
        reviewers = [PooledReviewer(r, pool, kind) for r in S09_REVIEWERS]
        reviser = PooledReviser(EvidenceReviser(EVIDENCE_BASE), pool, kind)
        swarm = QuestioningConsensusSwarm(CONSENSUS_CANDIDATES, S09_QUESTIONING_CONSENSUS, ROLE_WEIGHTS,
                                          max_rounds=max_rounds)
        live = swarm.run(reviewers, subject, reviser=reviser)
        rebuilt = consensus_from_ledger(pool, kind, candidates=CONSENSUS_CANDIDATES,
                                        params=S09_QUESTIONING_CONSENSUS, role_weights=ROLE_WEIGHTS)
    return live, rebuilt


def run_s09(store: str, *, redis_url: str | None = None, blob_root: str | Path | None = None,
            prefix: str | None = None) -> ScenarioResult:
    """Run everything S09 needs on ``store`` and evaluate it from what the runs left behind."""
    prefix = prefix or f"accept-{uuid.uuid4().hex[:8]}"
    runs = [run_claim_scale(store, f"{prefix}-s09-claim-{n}", n, redis_url=redis_url, blob_root=blob_root)
            for n in S09_SIZES]
    fused, _ = run_fusion(store, f"{prefix}-s09-fusion", redis_url=redis_url, blob_root=blob_root)
    live, rebuilt = run_questioning(store, f"{prefix}-s09-consensus", fused.text, redis_url=redis_url)
    result = evaluate_s09(runs, fused, rebuilt)
    details = {"store": store.split("?")[0] if store.startswith("sqlite") else "postgresql",
               "run_ids": [r.run_id for r in runs] + [f"{prefix}-s09-fusion", f"{prefix}-s09-consensus"],
               "fused_text": fused.text, "ledger_rebuild_matches_run": rebuilt.rounds == live.rounds}
    return result.model_copy(update={"details": details})
