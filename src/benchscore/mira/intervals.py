"""95 % intervals beside the overall Mira metrics (issue 16).

The repetitions of one case share its task, its fixtures and its difficulty, so they are not
independent; cases are. Every interval therefore takes the case as the unit:

- Task Success, Reliability (and the diagnostic untimed Task Success) pool the used repetitions of
  every formal case: the ratio over cases (numerator and repetitions per case) by
  :func:`benchscore.stats.intervals.ratio_interval` (``cluster_wilson``, or ``units_wilson`` when too few
  cases pass or fail to estimate their spread);
- Pass@1, Stable@3, Complete@3 are percentages of cases, one 0/1 outcome per case: ``exact_mid_p``.

An interval is written only where its number is (the score is complete for the scoring class);
otherwise it is null with the reason.
"""

from __future__ import annotations

from typing import Any

from benchscore.stats import intervals as S

#: overall metric -> (per-repetition field summed per case, or None for a per-case 0/1 metric, scale)
_POOLED = {
    "task_success": ("official_task_success", 1.0),
    "reliability": ("status", 100.0),
    "untimed_task_success": ("untimed_task_success", 1.0),
}
_PER_CASE = ("pass_at_1", "stable_at_3", "complete_at_3")
UNIT = "case"


def _why_null(mine: list[dict[str, Any]], name: str) -> str:
    if not mine:
        return "no case of this scoring class"
    incomplete = [c["case_id"] for c in mine if c["status"] != "formal"]
    if incomplete:
        named = ", ".join(incomplete[:3]) + (f" and {len(incomplete) - 3} more" if len(incomplete) > 3 else "")
        return f"the result is incomplete (case {named}): no interval without every planned repetition"
    return f"{name} is undefined in a case"


def _pooled(mine: list[dict[str, Any]], field: str) -> tuple[list[float], list[float]]:
    num, den = [], []
    for c in mine:
        used = c["_used"]
        if field == "status":
            num.append(float(sum(1 for r in used if r["status"] == "pass")))
        else:
            num.append(float(sum(r[field] for r in used)))
        den.append(float(len(used)))
    return num, den


def add_intervals(metrics: dict[str, dict[str, Any]], case_results: list[dict[str, Any]], scoring_class: str) -> None:
    """Add ``ci95`` and ``ci_method`` (and ``ci_reason`` when null) to the headline metrics of one
    aggregate (``overall`` or ``diagnostic_untimed``), in place. ``case_results`` still carry
    each case's ``_used`` repetitions (:func:`benchscore.mira.scoring.score_cases`)."""
    mine = [c for c in case_results if c["scoring_class"] == scoring_class]
    for name, metric in metrics.items():
        if name in _POOLED:
            field, scale = _POOLED[name]
            method = "cluster_wilson"

            def compute(field: str = field) -> S.Interval:
                num, den = _pooled(mine, field)
                return S.ratio_interval(num, den, unit=UNIT)
        elif name in _PER_CASE:
            scale, method = 100.0, "exact_mid_p"

            def compute(name: str = name) -> S.Interval:
                values = [1.0 if c["metrics"][name]["value"] else 0.0 for c in mine]
                return S.ratio_interval(values, [1.0] * len(values), unit=UNIT)
        else:
            continue
        unavailable = _why_null(mine, name) if metric["value"] is None else None
        metric.update(S.beside(compute, scale=scale, unavailable=unavailable, method=method))
