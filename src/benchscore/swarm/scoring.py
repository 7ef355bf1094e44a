"""The task score written to the pool (seed section 3), and :func:`at_least`, the one
comparison every threshold of the swarm's scoring goes through (quality gate, fusion, consensus,
S07's accepted score)."""

from __future__ import annotations

import math

#: two values closer than this are equal for every threshold comparison (:func:`at_least`)
THRESHOLD_TOLERANCE = 1e-9


def at_least(value: float, threshold: float) -> bool:
    """``value >= threshold`` as the seed means it on the written numbers, robust to float rounding.

    True when ``value >= threshold - THRESHOLD_TOLERANCE`` (1e-9). Votes of 0.3 and 0.1 give a
    margin of ``0.3 - 0.1 = 0.19999999999999998`` in binary floating point; the seed's margin is
    0.2, which meets ``min_margin = 0.2``. Every input of these comparisons (confidences, role
    weights, scores, ``Q = passed/N``) carries far fewer than nine significant decimals, so a
    difference below 1e-9 is rounding, never a real shortfall: 0.2 - 1e-10 counts as 0.2, while
    0.2 - 1e-8 is below it. Used by ``assess_output_quality`` (``Q >= 0.72``),
    ``fuse_candidate_outputs`` (``score >= min_score``), ``consensus_converged``
    (``leader_share >= threshold``, ``margin >= min_margin``) and S07's ``accepted_score >= 0.75``.
    """
    return value >= threshold - THRESHOLD_TOLERANCE

RISK_SCORE = 0.12
GATE_FAILED_FLOOR = 0.05
INTERMEDIATE_CAP = 0.98
FINAL_STEP_SCORE = 1.0


def score_output(Q: float, *, quality_pass: bool, risk: bool, step_index: int, final_step: bool) -> float:  # noqa: N803
    """``task.score`` of one output (seed section 3).

    - ``R(content)`` (refusal, role refusal, off-topic, quality-failure marker): ``0.12``;
    - no risk, quality gate failed: ``max(0.05, 0.3 + 0.35 Q)``;
    - gate passed on the final step (S07's STEP-07): ``1.0``;
    - gate passed otherwise: ``min(0.98, 0.62 + 0.28 Q + 0.01 i)``, ``i`` the 0-based step index.

    ``Q`` must be in [0, 1] and ``step_index`` >= 0.
    """
    if not (math.isfinite(Q) and 0.0 <= Q <= 1.0):
        raise ValueError(f"Q must be a finite number in [0, 1], got {Q!r}")
    if step_index < 0:
        raise ValueError(f"step_index must be >= 0, got {step_index}")
    if risk:
        return RISK_SCORE
    if not quality_pass:
        return max(GATE_FAILED_FLOOR, 0.3 + 0.35 * Q)
    if final_step:
        return FINAL_STEP_SCORE
    return min(INTERMEDIATE_CAP, 0.62 + 0.28 * Q + 0.01 * step_index)
