"""Candidate fusion (seed section 6): filter, sort, merge lines, self-weighted score ``F``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import Field

from benchscore.common.models import Format

from .scoring import at_least

DEFAULT_MIN_SCORE = 0.5  # the S09 value (seed section 1.1)


class Candidate(Format):
    """One candidate output: an id, its text and its score (finite, >= 0)."""

    id: str = Field(min_length=1)
    text: str
    score: float = Field(ge=0.0)


class FusedOutput(Format):
    """The result of :func:`fuse_candidate_outputs`."""

    text: str
    score: float
    sources: tuple[str, ...]
    filtered_out: tuple[str, ...]
    min_score: float


def _line_key(line: str) -> str:
    return " ".join(line.split())


def fuse_candidate_outputs(candidates: Sequence[Candidate], *, min_score: float = DEFAULT_MIN_SCORE) -> FusedOutput:
    """Fuse candidates into one output (seed section 6).

    ``U = {c_i | score_i >= min_score and text_i non-empty}`` (``>=`` through
    :func:`~benchscore.swarm.scoring.at_least`, a tolerance of 1e-9 for float rounding); ``U`` is sorted by score,
    highest first (ties keep input order); the texts are merged line by line, a line being
    kept only the first time it appears (lines compared with whitespace collapsed; blank
    lines dropped); ``F = sum(score_i^2) / sum(score_i)`` over ``U``; ``sources`` is the
    ordered ids of ``U``. When ``U`` is empty, ``F = 0`` and the text is empty; when every score
    in ``U`` is 0 (possible only with ``min_score = 0``), ``F = 0`` and the text is still the
    merge of ``U``. Candidate ids must be unique.
    """
    if not math.isfinite(min_score) or min_score < 0:
        raise ValueError(f"min_score must be a finite number >= 0, got {min_score!r}")
    ids = [c.id for c in candidates]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"candidate ids must be unique; {dup!r} appears twice")
    kept = [c for c in candidates if at_least(c.score, min_score) and c.text.strip()]
    dropped = tuple(c.id for c in candidates if c not in kept)
    kept.sort(key=lambda c: -c.score)  # stable: ties keep input order
    seen: set[str] = set()
    lines: list[str] = []
    for cand in kept:
        for line in cand.text.splitlines():
            key = _line_key(line)
            if key and key not in seen:
                seen.add(key)
                lines.append(line.rstrip())
    total = math.fsum(c.score for c in kept)
    score = math.fsum(c.score * c.score for c in kept) / total if total > 0 else 0.0
    return FusedOutput(
        text="\n".join(lines),
        score=score,
        sources=tuple(c.id for c in kept),
        filtered_out=dropped,
        min_score=min_score,
    )
