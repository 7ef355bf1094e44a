"""Multi-round consensus (seed section 7): ``ConsensusSwarm`` and ``QuestioningConsensusSwarm``.

Each candidate ``j`` carries a consensus score ``S_j`` (0 at the start). Every round:

1. evaporation: ``S_j <- evaporation * S_j``;
2. (questioning only) every reviewer may raise a challenge against the subject, and the
   reviser answers each round's challenges with revisions, which replace the subject text;
3. every reviewer votes for one candidate: ``S_candidate += max(0, confidence_a) * weight_a``,
   ``weight_a`` the weight of the reviewer's role;
4. ``leader = argmax_j S_j`` (ties: the candidate listed first; no leader, ``None``, when every
   ``S_j`` is 0: a round in which nobody scored has nobody ahead),
   ``leader_share = S_leader / sum_j max(0, S_j)`` (0 when that sum is 0),
   ``margin = S_leader - S_second`` (``S_second = 0`` with one candidate; 0 without a leader),
   ``consensus_converged = leader_share >= threshold and margin >= min_margin``, both ``>=``
   through :func:`~benchscore.swarm.scoring.at_least` (values within 1e-9 of a threshold meet it:
   votes 0.3 and 0.1 give the seed's margin 0.2, not 0.19999999999999998).

Refinement of seed section 7 (issue 20), :func:`vote_quorum`: a vote is ``ok`` (it names a candidate),
``unparseable`` (the answer named none: recorded as such, ``candidate`` null, no increment) or
``call_failed``; a round converges only when its ``ok`` votes are a strict majority of its votes
(``2 * ok > votes``), so that one parseable vote among three unparseable ones cannot carry a
"consensus": ``converged = vote_quorum and consensus_converged``.

The run stops at the first converged round (not before ``min_rounds``) or after
``max_rounds``. Every round's scores, votes, challenges and revisions are kept in a
:class:`ConsensusRound` and handed to ``on_round`` (the scenarios write them to the run's
ledger). Reviewers are plain objects (see :class:`Reviewer`); they see the previous rounds
and the current scores, never each other's messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import Field

from benchscore.common.models import Format

from .scoring import at_least


@dataclass(frozen=True)
class ConsensusParams:
    """``threshold``, ``min_margin`` and ``evaporation`` of a consensus (seed section 7);
    ``preset`` names the seed's parameter set (``S07_quality``, ``S09_questioning``)."""

    threshold: float
    min_margin: float
    evaporation: float
    preset: str = "custom"


#: S07 quality consensus (seed section 7): threshold 0.7, min_margin 0.25, evaporation 0.82
S07_QUALITY_CONSENSUS = ConsensusParams(threshold=0.7, min_margin=0.25, evaporation=0.82, preset="S07_quality")
#: S09 questioning consensus (seed section 7): threshold 0.7, min_margin 0.2, evaporation 0.85
S09_QUESTIONING_CONSENSUS = ConsensusParams(threshold=0.7, min_margin=0.2, evaporation=0.85,
                                            preset="S09_questioning")


class Vote(Format):
    """One reviewer's vote; ``status`` ``unparseable`` / ``call_failed`` votes name no candidate and add nothing."""

    agent: str
    role: str
    candidate: str | None
    confidence: float
    rationale: str = ""
    status: Literal["ok", "unparseable", "call_failed"] = "ok"
    #: the constraint the vote's answer was produced under (json_object_schema, ..., none), where a model voted
    constraint: str | None = None


class Challenge(Format):
    agent: str
    question: str


class Revision(Format):
    agent: str
    answers: str
    revised_text: str


class ConsensusRound(Format):
    """One round as recorded in the ledger."""

    round: int
    scores_after_evaporation: dict[str, float]
    votes: tuple[Vote, ...]
    vote_increments: tuple[float, ...]
    challenges: tuple[Challenge, ...] = ()
    revisions: tuple[Revision, ...] = ()
    scores: dict[str, float]
    leader: str | None
    leader_share: float
    margin: float
    converged: bool
    #: votes that named a candidate, and whether they are a strict majority (:func:`vote_quorum`)
    valid_votes: int | None = None
    quorum: bool = True


class ConsensusResult(Format):
    """A whole consensus run: the parameters (``preset``, ``threshold``, ``min_margin``,
    ``evaporation``, ``min_rounds``) and every round (``leader_share`` and ``margin`` per round
    are what the thresholds are compared with)."""

    kind: str
    preset: str = "custom"
    candidates: tuple[str, ...]
    threshold: float
    min_margin: float
    evaporation: float
    min_rounds: int = 1
    role_weights: dict[str, float]
    rounds: tuple[ConsensusRound, ...]
    round_count: int
    converged: bool
    accepted_candidate: str | None
    final_subject: str = ""
    final_scores: dict[str, float] = Field(default_factory=dict)


# -- formulas -----------------------------------------------------------------------------------


def evaporate(scores: Mapping[str, float], evaporation: float) -> dict[str, float]:
    """``S_j <- evaporation * S_j`` for every candidate (seed section 7)."""
    return {j: evaporation * s for j, s in scores.items()}


def vote_increment(confidence: float, role_weight: float) -> float:
    """``max(0, confidence_a) * weight_a`` (seed section 7)."""
    return max(0.0, confidence) * role_weight


def leader_stats(scores: Mapping[str, float]) -> tuple[str | None, float, float]:
    """``(leader, leader_share, margin)`` of seed section 7 (see the module docstring for ties and zeros):
    no leader (``None``, share 0, margin 0) when no candidate has a positive score."""
    if not scores:
        raise ValueError("leader_stats needs at least one candidate")
    order = list(scores)
    positive = math.fsum(max(0.0, s) for s in scores.values())
    if positive <= 0:
        return None, 0.0, 0.0
    leader = max(order, key=lambda j: (scores[j], -order.index(j)))
    share = scores[leader] / positive
    others = sorted((scores[j] for j in order if j != leader), reverse=True)
    second = others[0] if others else 0.0
    return leader, share, scores[leader] - second


def vote_quorum(valid_votes: int, votes: int) -> bool:
    """``2 * valid_votes > votes``: the votes that named a candidate are a strict majority of the round's votes
    (issue 20's refinement of seed section 7: a round of mostly unparseable votes does not converge)."""
    return 2 * valid_votes > votes


def consensus_converged(leader_share: float, margin: float, *, threshold: float, min_margin: float) -> bool:
    """``leader_share >= threshold and margin >= min_margin`` (seed section 7), each ``>=`` through
    :func:`~benchscore.swarm.scoring.at_least` (a tolerance of 1e-9 for float rounding)."""
    return at_least(leader_share, threshold) and at_least(margin, min_margin)


# -- reviewers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoundContext:
    """What a reviewer sees: the round number, the candidates, the subject text under review,
    the scores after this round's evaporation, and every earlier round (the shared environment)."""

    round: int
    candidates: tuple[str, ...]
    subject: str
    scores: Mapping[str, float]
    history: tuple[ConsensusRound, ...]
    challenges: tuple[Challenge, ...] = ()


class Reviewer(Protocol):
    name: str
    role: str

    def vote(self, ctx: RoundContext) -> Vote: ...


class QuestioningReviewer(Reviewer, Protocol):
    def challenge(self, ctx: RoundContext) -> Challenge | None: ...


class Reviser(Protocol):
    def revise(self, ctx: RoundContext, challenges: Sequence[Challenge]) -> Sequence[Revision]: ...


class ConsensusSwarm:
    """Multi-round weighted voting with evaporation (seed section 7, ``ConsensusSwarm.run``)."""

    kind = "consensus"

    def __init__(
        self,
        candidates: Sequence[str],
        params: ConsensusParams,
        role_weights: Mapping[str, float],
        *,
        max_rounds: int = 6,
        min_rounds: int = 1,
        on_round: Callable[[ConsensusRound], None] | None = None,
    ) -> None:
        if not candidates or len(set(candidates)) != len(candidates):
            raise ValueError("candidates must be a non-empty list of distinct names")
        if not 0.0 <= params.evaporation <= 1.0:
            raise ValueError("evaporation must be in [0, 1]")
        if any(not math.isfinite(w) or w < 0 for w in role_weights.values()):
            raise ValueError("role weights must be finite and >= 0")
        if not 1 <= min_rounds <= max_rounds:
            raise ValueError("need 1 <= min_rounds <= max_rounds")
        self.candidates = tuple(candidates)
        self.params = params
        self.role_weights = dict(role_weights)
        self.max_rounds = max_rounds
        self.min_rounds = min_rounds
        self.on_round = on_round

    def _tally(self, scores: dict[str, float], votes: Sequence[Vote]) -> tuple[dict[str, float], list[float]]:
        out = dict(scores)
        increments = []
        for v in votes:
            if v.status != "ok":
                if v.candidate is not None:
                    raise ValueError(f"{v.agent}: a {v.status} vote names no candidate")
                increments.append(0.0)
                continue
            if v.candidate not in out:
                raise ValueError(f"{v.agent} voted for unknown candidate {v.candidate!r}")
            if v.role not in self.role_weights:
                raise ValueError(f"{v.agent} has role {v.role!r} with no weight")
            if not math.isfinite(v.confidence):
                raise ValueError(f"{v.agent} gave a non-finite confidence")
            inc = vote_increment(v.confidence, self.role_weights[v.role])
            out[v.candidate] += inc
            increments.append(inc)
        return out, increments

    def _round(self, r: int, scores: dict[str, float], subject: str, history: list[ConsensusRound],
               reviewers: Sequence[Reviewer], reviser: Reviser | None) -> tuple[ConsensusRound, str]:
        evaporated = evaporate(scores, self.params.evaporation)
        ctx = RoundContext(r, self.candidates, subject, evaporated, tuple(history))
        challenges: list[Challenge] = []
        revisions: list[Revision] = []
        if reviser is not None:
            for rev in reviewers:
                ch = rev.challenge(ctx)  # type: ignore[attr-defined]
                if ch is not None:
                    challenges.append(ch)
            revisions = list(reviser.revise(ctx, challenges))
            if revisions:
                subject = revisions[-1].revised_text
            ctx = RoundContext(r, self.candidates, subject, evaporated, tuple(history), tuple(challenges))
        votes = [rev.vote(ctx) for rev in reviewers]
        new_scores, increments = self._tally(evaporated, votes)
        leader, share, margin = leader_stats(new_scores)
        valid = sum(v.status == "ok" for v in votes)
        quorum = vote_quorum(valid, len(votes))
        converged = r >= self.min_rounds and quorum and leader is not None and consensus_converged(
            share, margin, threshold=self.params.threshold, min_margin=self.params.min_margin)
        record = ConsensusRound(
            round=r, scores_after_evaporation=evaporated, votes=tuple(votes), vote_increments=tuple(increments),
            challenges=tuple(challenges), revisions=tuple(revisions), scores=new_scores, leader=leader,
            leader_share=share, margin=margin, converged=converged, valid_votes=valid, quorum=quorum,
        )
        return record, subject

    def _run(self, reviewers: Sequence[Reviewer], subject: str, reviser: Reviser | None) -> ConsensusResult:
        if not reviewers:
            raise ValueError("a consensus needs at least one reviewer")
        scores = {j: 0.0 for j in self.candidates}
        history: list[ConsensusRound] = []
        for r in range(1, self.max_rounds + 1):
            record, subject = self._round(r, scores, subject, history, reviewers, reviser)
            history.append(record)
            scores = dict(record.scores)
            if self.on_round is not None:
                self.on_round(record)
            if record.converged:
                break
        last = history[-1]
        return ConsensusResult(
            kind=self.kind, preset=self.params.preset, candidates=self.candidates, threshold=self.params.threshold,
            min_margin=self.params.min_margin, evaporation=self.params.evaporation, min_rounds=self.min_rounds,
            role_weights=self.role_weights, rounds=tuple(history), round_count=len(history),
            converged=last.converged, accepted_candidate=last.leader if last.converged else None,
            final_subject=subject, final_scores=dict(last.scores),
        )

    def run(self, reviewers: Sequence[Reviewer], subject: str = "") -> ConsensusResult:
        """Run rounds until convergence or ``max_rounds``; returns every round."""
        return self._run(reviewers, subject, None)


class QuestioningConsensusSwarm(ConsensusSwarm):
    """Consensus where reviewers challenge the subject and a reviser answers with revisions
    before each round's votes (seed sections 7 and 9, ``QuestioningConsensusSwarm.run``)."""

    kind = "questioning_consensus"

    def run(self, reviewers: Sequence[QuestioningReviewer], subject: str = "",  # type: ignore[override]
            reviser: Reviser | None = None) -> ConsensusResult:
        if reviser is None:
            raise ValueError("a questioning consensus needs a reviser")
        return self._run(reviewers, subject, reviser)
