"""The public projection of a score (seed "隐藏数据边界"), built from an allowlist.

Only these leave: the user-visible prompt, intent, difficulty, timing status, scorer ownership
weights (criterion id, weight, scorer), sanitized results (metric values and the counts behind them,
the 95 % intervals of the overall numbers;
per-repetition mode, whether its case counted it, status, timing credit, official or untimed task
success and whether it needed task-solving help), experiment identity (benchmark id, contract
version and sha256), method notes and the deviations, unchanged. Nothing is copied wholesale,
so private fixtures, raw trajectories, hidden evaluator details, credentials, judge evidence
and free-text reasons cannot reach it.
"""

from __future__ import annotations

from typing import Any

from .formats import ScoreOutput


def _values(metrics: dict[str, Any]) -> dict[str, Any]:
    return {name: m.value for name, m in metrics.items()}


def _intervals(metrics: dict[str, Any]) -> dict[str, Any]:
    """The 95 % interval of each public number that has one (``ci95``, ``ci_method``, ``ci_reason``)."""
    return {name: {"ci95": m.ci95, "ci_method": m.ci_method, **({"ci_reason": m.ci_reason} if m.ci_reason else {})}
            for name, m in metrics.items() if m.ci_method is not None}


def timing_status(scoring_class: str, t_soft_s: float | None) -> str:
    if scoring_class == "diagnostic_untimed":
        return "diagnostic_untimed: no fair, stable timing budget; scored without timing credit"
    return f"frozen budget: T_soft {t_soft_s!r} s, T_hard {2 * t_soft_s!r} s"  # type: ignore[operator]


def project(score: ScoreOutput, deviations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The public projection dict (see :class:`PublicProjection`), without provenance.

    ``deviations``: the score file's deviations exactly as written (default: from ``score``).
    """
    used = {rid for c in score.cases for rid in c.repetitions_used}
    reps_by_case: dict[str, list[dict[str, Any]]] = {}
    for r in score.repetitions:
        reps_by_case.setdefault(r.case_id, []).append({
            "repetition": r.repetition,
            "execution_mode": r.execution_mode,
            "comparability": r.comparability,
            "used": r.id in used,
            "status": r.status,
            "timing_credit": r.timing_credit,
            "official_task_success": r.official_task_success,
            "untimed_task_success": r.untimed_task_success,
            "needed_task_solving_help": r.needed_task_solving_help,
        })
    cases = []
    for c in score.cases:
        d = c.definition
        cases.append({
            "case_id": c.case_id,
            "intent": d.intent,
            "difficulty": d.difficulty,
            "prompt": d.prompt,
            "scoring_class": d.scoring_class,
            "timing_status": timing_status(d.scoring_class, d.t_soft_s),
            "t_soft_s": d.t_soft_s,
            "t_hard_s": c.t_hard_s,
            "criteria": [{"id": k.id, "weight": k.weight, "scorer": k.scorer} for k in d.criteria],
            "status": c.status,
            "planned_repetitions": c.planned_repetitions,
            "valid_comparable_repetition_count": c.valid_comparable_repetition_count,
            "beyond_planned_count": c.beyond_planned_count,
            "results": _values(c.metrics),
            "repetitions": sorted(reps_by_case.get(c.case_id, []), key=lambda r: r["repetition"]),
        })
    method = {k: score.method[k] for k in ("judge", "timing", "comparability", "calibration_policy") if k in score.method}
    return {
        "benchmark_id": score.benchmark_id,
        "contract_version": score.contract_version,
        "contract_sha256": score.contract_sha256,
        "status": score.status,
        "overall": _values(score.overall),
        "diagnostic_untimed": _values(score.diagnostic_untimed),
        "intervals": {"overall": _intervals(score.overall), "diagnostic_untimed": _intervals(score.diagnostic_untimed)},
        "cases": cases,
        **({"judge": score.judge.model_dump(mode="json")} if score.judge is not None else {}),
        "deviations": deviations if deviations is not None else [d.model_dump(mode="json") for d in score.deviations],
        "method": method,
    }
