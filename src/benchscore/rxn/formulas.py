"""Scoring formulas of testsetV6 (seed section 8) and reference spacing (section 9): pure functions."""

from __future__ import annotations

import math
from collections.abc import Sequence

from . import conventions as c


def effective_score(yield_pct: float | None, ee: float | None = None, dr: float | None = None) -> float:
    """Effective score (seed section 8): ``yield x (100 + ee)/200 x dr/(dr + 1)``.

    A missing ``ee`` or ``dr`` is a factor of 1.0. A missing yield is only allowed for a table that
    reports no yield at all; it is the factor :data:`conventions.NO_YIELD_TABLE_FACTOR` (100), so
    selectivity alone decides.
    """
    y = c.NO_YIELD_TABLE_FACTOR if yield_pct is None else yield_pct
    ee_fraction = 1.0 if ee is None else (100.0 + ee) / 200.0
    dr_fraction = 1.0 if dr is None else dr / (dr + 1.0)
    return y * ee_fraction * dr_fraction


def relative_scores(effective: Sequence[float]) -> list[float]:
    """Relative score (seed section 8): ``effective / max(effective)`` within one question.

    Raises ``ValueError`` when the best effective score is not positive (such a question is skipped).
    """
    best = max(effective)
    if not best > 0:
        raise ValueError("best effective score is 0")
    return [e / best for e in effective]


def best_indices(relative: Sequence[float], tolerance: float = c.TIE_TOLERANCE) -> list[int]:
    """Indices of every tied best option: relative score within ``tolerance`` of 1 (seed 6.3 ``answer``)."""
    return [i for i, r in enumerate(relative) if r >= 1.0 - tolerance]


def denmark_ee(ddg_kcal: float, temperature_k: float = c.DENMARK_TEMPERATURE_K) -> float:
    """ee in percent from ΔΔG‡ (kcal/mol): ``100 tanh(ΔΔG‡ / 2RT)``, R = 1.98720 cal/(mol·K).

    This is er = exp(ΔΔG‡/RT) written as ee = (er - 1)/(er + 1). 3.1346 kcal/mol at 298 K -> 99.0 %.
    """
    return 100.0 * math.tanh(ddg_kcal * 1000.0 / (2.0 * c.GAS_CONSTANT_CAL * temperature_k))


def spaced_positions(pool_size: int, count: int) -> list[int]:
    """``count`` distinct positions spread evenly over ``0..pool_size-1`` (both ends included).

    Used to draw references across the low-to-medium pool sorted by score (seed section 9).
    """
    if count <= 0 or pool_size <= 0:
        return []
    count = min(count, pool_size)
    if count == 1:
        return [0]
    return [round(i * (pool_size - 1) / (count - 1)) for i in range(count)]
