"""Consensus rounds recorded in a run's ledger, and read back from it.

Every vote, challenge and revision of a :class:`~benchscore.swarm.consensus.ConsensusSwarm` run
goes through the task pool: the environment puts a task (capability ``consensus_vote``,
``consensus_challenge`` or ``consensus_revision``, payload ``{"consensus": kind, "round": r}``)
in the pool, the reviewer (or the reviser) claims it and completes it with the vote, challenge
or revision as JSON output. The ledger therefore holds a claim and a completion, by that agent,
for every vote, challenge and revision, and :func:`consensus_from_ledger` rebuilds every round
(scores after evaporation, votes, increments, challenges, revisions, leader, leader_share,
margin, converged) from the pool alone with the formulas of seed section 7.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from benchscore.swarm import Outcome, TaskPool, TaskSpec, TaskStatus

from ..consensus import (
    Challenge,
    ConsensusParams,
    ConsensusResult,
    ConsensusRound,
    Revision,
    RoundContext,
    Vote,
    consensus_converged,
    evaporate,
    leader_stats,
    vote_increment,
    vote_quorum,
)

VOTE = "consensus_vote"
CHALLENGE = "consensus_challenge"
REVISION = "consensus_revision"
CONSENSUS_CAPABILITIES = (VOTE, CHALLENGE, REVISION)


def _record(pool: TaskPool, agent: str, capability: str, kind: str, round_: int, output: str, score: float) -> int:
    (task_id,) = pool.add_tasks([TaskSpec(capability=capability, payload={"consensus": kind, "round": round_},
                                          max_attempts=1)])
    claims = pool.claim(agent, [capability], limit=1)
    if not claims or claims[0].task_id != task_id:
        raise RuntimeError(f"{agent}: could not claim its {capability} task {task_id}")
    out = Outcome.success(score, output)
    pool.complete(claims[0], out.score, out.output)
    return task_id


class PooledReviewer:
    """A reviewer whose every vote and challenge is a task it claims and completes in the pool."""

    def __init__(self, inner, pool: TaskPool, kind: str) -> None:
        self.inner, self.pool, self.kind = inner, pool, kind
        self.name, self.role = inner.name, inner.role

    def vote(self, ctx: RoundContext) -> Vote:
        v = self.inner.vote(ctx)
        _record(self.pool, self.name, VOTE, self.kind, ctx.round, v.model_dump_json(), max(0.0, v.confidence))
        return v

    def challenge(self, ctx: RoundContext) -> Challenge | None:
        ch = self.inner.challenge(ctx)
        if ch is not None:
            _record(self.pool, self.name, CHALLENGE, self.kind, ctx.round, ch.model_dump_json(), 1.0)
        return ch


class PooledReviser:
    """A reviser whose every revision is a task it claims and completes in the pool."""

    def __init__(self, inner, pool: TaskPool, kind: str, name: str = "reviser") -> None:
        self.inner, self.pool, self.kind, self.name = inner, pool, kind, name

    def revise(self, ctx: RoundContext, challenges: Sequence[Challenge]) -> Sequence[Revision]:
        revisions = list(self.inner.revise(ctx, challenges))
        for rev in revisions:
            _record(self.pool, self.name, REVISION, self.kind, ctx.round, rev.model_dump_json(), 1.0)
        return revisions


def consensus_from_ledger(
    pool: TaskPool,
    kind: str,
    *,
    candidates: Sequence[str],
    params: ConsensusParams,
    role_weights: Mapping[str, float],
    min_rounds: int = 1,
) -> ConsensusResult:
    """Rebuild a consensus run of ``kind`` from the pool's done consensus tasks (in task order),
    recomputing every round with the seed section 7 formulas. The agent of every vote, challenge
    and revision must be the agent the ledger's ``complete`` event names (ValueError otherwise)."""
    completer = {e.task_id: e.agent for e in pool.events() if e.kind.value == "complete"}
    rounds: dict[int, dict[str, list]] = {}
    for t in sorted(pool.tasks(), key=lambda t: t.task_id):
        if t.capability not in CONSENSUS_CAPABILITIES or t.status is not TaskStatus.done:
            continue
        payload = orjson.loads(t.payload)
        if payload.get("consensus") != kind:
            continue
        slot = rounds.setdefault(int(payload["round"]), {"votes": [], "challenges": [], "revisions": []})
        model, key = {VOTE: (Vote, "votes"), CHALLENGE: (Challenge, "challenges"),
                      REVISION: (Revision, "revisions")}[t.capability]
        item = model.model_validate_json(t.output or "")
        if completer.get(t.task_id) != item.agent:
            raise ValueError(f"task {t.task_id}: {t.capability} by {item.agent} completed by "
                             f"{completer.get(t.task_id)}")
        slot[key].append(item)
    scores = {j: 0.0 for j in candidates}
    history: list[ConsensusRound] = []
    subject = ""
    for r in sorted(rounds):
        slot = rounds[r]
        evaporated = evaporate(scores, params.evaporation)
        new = dict(evaporated)
        increments = []
        for v in slot["votes"]:
            if v.status != "ok" or v.candidate is None:  # unparseable / failed: recorded, adds nothing
                increments.append(0.0)
                continue
            inc = vote_increment(v.confidence, role_weights[v.role])
            new[v.candidate] += inc
            increments.append(inc)
        leader, share, margin = leader_stats(new)
        valid = sum(v.status == "ok" and v.candidate is not None for v in slot["votes"])
        quorum = vote_quorum(valid, len(slot["votes"]))
        converged = r >= min_rounds and quorum and leader is not None and consensus_converged(
            share, margin, threshold=params.threshold, min_margin=params.min_margin)
        if slot["revisions"]:
            subject = slot["revisions"][-1].revised_text
        history.append(ConsensusRound(
            round=r, scores_after_evaporation=evaporated, votes=tuple(slot["votes"]),
            vote_increments=tuple(increments), challenges=tuple(slot["challenges"]),
            revisions=tuple(slot["revisions"]), scores=new, leader=leader, leader_share=share, margin=margin,
            converged=converged, valid_votes=valid, quorum=quorum,
        ))
        scores = new
    last = history[-1] if history else None
    return ConsensusResult(
        kind=kind, preset=params.preset, candidates=tuple(candidates), threshold=params.threshold,
        min_margin=params.min_margin, evaporation=params.evaporation, min_rounds=min_rounds,
        role_weights=dict(role_weights), rounds=tuple(history),
        round_count=len(history), converged=bool(last and last.converged),
        accepted_candidate=last.leader if last is not None and last.converged else None,
        final_subject=subject, final_scores=dict(last.scores) if last else {},
    )
