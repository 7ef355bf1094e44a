"""The task score written to the pool (seed section 3)."""

from __future__ import annotations

import math

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
