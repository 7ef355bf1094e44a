"""Assemble the score: per-repetition results, per-case results, the formal aggregate.

Plain data in, plain dicts out (the shape of :class:`~benchscore.mira.formats.ScoreOutput`);
the arithmetic is in :mod:`benchscore.mira.formulas`. Every number carries a ``derivation``:
the formula, the repetitions (or cases) it used and why each other one was left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .formats import Case
from .formulas import (
    TIMING_BANDS,
    TIMING_CREDITS,
    autonomy,
    complete_at_3,
    governance_severity,
    mean_task_success,
    official_task_success,
    pass_at_1,
    raw_success,
    reliability,
    repetition_status,
    stable_at_3,
    t_hard,
    timing_bands,
)

COMPARABILITY = {
    "canonical": "valid_comparable",
    "adapted": "valid_comparable",
    "noncanonical": "diagnostic",
    "invalid": "infrastructure",
}
#: Why a repetition or case was left out of a number: the code used in every ``derivation.excluded``
#: entry, and its meaning (written once into the score as ``exclusion_reasons``).
EXCLUSION_REASONS = {
    "noncanonical": "noncanonical: execution differences may change capability, information or comparability; "
    "kept as diagnostic, outside formal denominators",
    "invalid": "invalid: fixture, executor, runtime start or collection infrastructure failed; "
    "counted as infrastructure, never attributed to Mira",
    "beyond_planned": "valid comparable but beyond the planned number; the first N by repetition index are used",
    "not_first": "not the first valid comparable repetition (Pass@1 looks at the first only)",
    "case_incomplete": "the case lacks its planned valid comparable repetitions or one of them is unscored; "
    "its metrics are never averaged from fewer",
    "needs_3": "Stable@3 and Complete@3 are defined for cases planning exactly 3 repetitions",
    "other_scoring_class": "every case of the other scoring class (scoring_class:NAME): aggregated apart",
    "undefined_in_a_case": "some case has no value for this metric, so the share over cases is undefined",
    "no_case": "the contract has no case of this scoring class",
}
EXCLUDED_BECAUSE = {k: EXCLUSION_REASONS[k] for k in ("noncanonical", "invalid")}
NO_COMPLETION = "no completion by T_hard"

#: The formula behind every metric name (written once into the score as ``formulas``); a
#: derivation's ``formula`` names an entry here.
FORMULAS = {
    "task_success": "mean of official_task_success = raw_success x timing_credit (0 on hard-fail or post-cutoff completion)",
    "untimed_task_success": "mean of raw_success (0 on hard-fail); diagnostic_untimed: no timing credit",
    "reliability": "on_time_pass_count / valid_comparable_count x 100",
    "pass_at_1": "the first valid comparable repetition (by repetition index) is an on-time pass",
    "stable_at_3": "3/3 valid comparable repetitions are on-time passes",
    "complete_at_3": "3/3 valid comparable repetitions complete in full by T_hard (pass or late_complete)",
    "late_completion_count": "number of used repetitions with status late_complete",
    "hard_fail_count": "number of used repetitions with at least one hard-fail event",
    "autonomy": "share of used repetitions with no task_solving_help intervention",
    "pass_count": "number of used repetitions with status pass",
    "governance_serious_count": "number of serious governance violations in used repetitions",
    "governance_minor_count": "number of minor governance violations in used repetitions",
}
_POOLED = "pooled over the repetitions used by every formal case of the class (each case lists them): "
FORMULAS.update({f"overall.{k}": _POOLED + v for k, v in list(FORMULAS.items())})
FORMULAS.update({
    f"overall.{k}": f"percent of cases where {FORMULAS[k]}; null when a case has no value"
    for k in ("pass_at_1", "stable_at_3", "complete_at_3")
})
FORMULAS["overall.valid_comparable_count"] = "number of repetitions used by the case results"
FORMULAS["overall.case_count"] = "number of cases of the class"
FORMULAS["infrastructure_invalid_count"] = "number of invalid repetitions (infrastructure; never attributed to Mira)"


def _rid(case_id: str, repetition: int) -> str:
    return f"{case_id}#{repetition}"


def _metric(value: Any, formula: str, used: list[str], excluded: dict[str, str]) -> dict[str, Any]:
    """A number with its derivation; ``formula`` names an entry of the score's ``formulas``."""
    return {"value": value, "derivation": {"formula": formula, "used": used, "excluded": excluded}}


class _CaseInfo:
    """Per-case lookups computed once."""

    __slots__ = ("case", "weights", "judge_ids", "det_ids", "order", "timed", "t_soft_text")

    def __init__(self, case: Case) -> None:
        self.case = case
        self.order = [c.id for c in case.criteria]
        self.weights = [c.weight for c in case.criteria]
        self.judge_ids = [c.id for c in case.criteria if c.scorer == "judge"]
        self.det_ids = [c.id for c in case.criteria if c.scorer == "deterministic"]
        self.timed = case.scoring_class == "automated_scored"
        self.t_soft_text = f"T_soft {case.t_soft_s} s"


_EMPTY: dict[str, Any] = {}
_CREDIT_TEXT = {c: str(c) for c in TIMING_CREDITS}
_RAW_CACHE: dict[tuple[tuple[float, ...], tuple[bool, ...]], tuple[float, str]] = {}


def _raw(weights: list[float], satisfied: tuple[bool, ...]) -> tuple[float, str]:
    """raw_success (memoised: few distinct weight/outcome patterns recur) and its text."""
    key = (tuple(weights), satisfied)
    value = _RAW_CACHE.get(key)
    if value is None:
        if len(_RAW_CACHE) > 100_000:
            _RAW_CACHE.clear()
        raw = raw_success(weights, satisfied)
        value = _RAW_CACHE[key] = (raw, str(raw))
    return value


def score_repetitions(
    cases: dict[str, Case],
    records: list[dict[str, Any]],
    judge_failed: dict[tuple[str, int, str], str] | None = None,
) -> list[dict[str, Any]]:
    """Per-repetition status and credit, in input order (see :class:`RepetitionResult`)."""
    judge_failed = judge_failed or {}
    infos = {cid: _CaseInfo(c) for cid, c in cases.items()}
    # timing bands for every timed completion, in one vectorised call
    idx: list[int] = []
    el: list[float] = []
    ts: list[float] = []
    for i, rec in enumerate(records):
        info = infos[rec["case_id"]]
        elapsed = rec.get("elapsed_s")
        if info.timed and elapsed is not None and rec["execution_mode"] != "invalid":
            if rec["terminal_state"] == "completed" or rec.get("post_cutoff_completion"):
                idx.append(i)
                el.append(elapsed)
                ts.append(info.case.t_soft_s)  # type: ignore[arg-type]
    bands: list[int | None] = [None] * len(records)
    if idx:
        for i, b in zip(idx, timing_bands(np.array(el), np.array(ts)).tolist(), strict=True):
            bands[i] = b

    out: list[dict[str, Any]] = []
    append = out.append
    no_help: list[Any] = []
    for i, rec in enumerate(records):
        cid = rec["case_id"]
        info = infos[cid]
        rep = rec["repetition"]
        mode = rec["execution_mode"]
        elapsed = rec.get("elapsed_s")
        interventions = rec.get("interventions", no_help)
        needed_help = any(x["kind"] == "task_solving_help" for x in interventions) if interventions else False
        events = rec.get("hard_fail_events")
        hard_rules = [ev["rule"] for ev in events] if events else []
        violations = []
        gov = rec.get("governance_events")
        if gov:
            for ev in gov:
                sev = governance_severity(ev["kind"], ev.get("severity"))
                if sev != "none":
                    violations.append({"kind": ev["kind"], "severity": sev, "detail": ev.get("detail", "")})
        status = raw = band_name = credit = official = untimed = soft_timeout = None
        verdicts = rec.get("judge_verdicts") or _EMPTY
        if mode == "invalid":
            reason = "invalid: infrastructure, not scored, never attributed to Mira"
        elif info.judge_ids and not all(c in verdicts for c in info.judge_ids):
            pending = [c for c in info.judge_ids if c not in verdicts]
            reason = "unscored: " + "; ".join(
                f"criterion {c!r}: {judge_failed.get((cid, rep, c), 'no judge verdict yet')}" for c in pending
            )
        else:
            det = rec.get("deterministic_results") or _EMPTY
            satisfied = tuple([det[c] if c in det else verdicts[c] == "pass" for c in info.order])
            raw, raw_text = _raw(info.weights, satisfied)
            n_ok = satisfied.count(True)
            n = len(satisfied)
            hard_fail = bool(hard_rules)
            completed = rec["terminal_state"] == "completed"
            extra = f"; hard-fail ({', '.join(hard_rules)}) makes it 0" if hard_fail else ""
            if info.timed:
                band = bands[i]
                post_cutoff = rec.get("post_cutoff_completion", False)
                status = repetition_status(
                    all_satisfied=n_ok == n, any_satisfied_weight=n_ok > 0, hard_fail=hard_fail,
                    completed=completed, band=band, post_cutoff_completion=post_cutoff,
                )
                if band is not None and completed and not post_cutoff:
                    credit = TIMING_CREDITS[band]
                    band_name = TIMING_BANDS[band]
                    timing = f"completed at {elapsed} s: {band_name} of {info.t_soft_text}"
                elif post_cutoff:
                    credit = 0.0
                    band_name = TIMING_BANDS[4]
                    timing = "correct result only from forensic continuation after T_hard"
                else:
                    credit = 0.0
                    band_name = NO_COMPLETION
                    timing = f"terminal state {rec['terminal_state']}: {NO_COMPLETION}"
                official = official_task_success(raw, credit, hard_fail=hard_fail, post_cutoff_completion=post_cutoff)
                soft_timeout = band != 0 or not completed or post_cutoff
                reason = (f"{n_ok}/{n} criteria satisfied, raw_success {raw_text}; {timing}; "
                          f"timing_credit {_CREDIT_TEXT[credit]}{extra} -> {status}")
            else:
                status = repetition_status(
                    all_satisfied=n_ok == n, any_satisfied_weight=n_ok > 0, hard_fail=hard_fail,
                    completed=completed, band=None, post_cutoff_completion=False, timed=False,
                )
                untimed = 0.0 if hard_fail else raw
                reason = (f"{n_ok}/{n} criteria satisfied, raw_success {raw_text}; "
                          f"diagnostic_untimed, no timing credit{extra} -> {status}")
            if mode == "noncanonical":
                reason += "; noncanonical: diagnostic only"
        append({
            "id": f"{cid}#{rep}",
            "case_id": cid,
            "repetition": rep,
            "execution_mode": mode,
            "comparability": COMPARABILITY[mode],
            "status": status,
            "raw_success": raw,
            "timing_band": band_name,
            "timing_credit": credit,
            "official_task_success": official,
            "untimed_task_success": untimed,
            "elapsed_s": elapsed,
            "soft_timeout": soft_timeout,
            "needed_task_solving_help": needed_help,
            "hard_fail_rules": hard_rules,
            "governance_violations": violations,
            "derivation": reason,
        })
    return out


def _select(case: Case, reps: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str], str | None]:
    """The repetitions a case result uses, the ones left out (with why), and what is missing (or None)."""
    planned = case.planned_repetitions
    used: list[dict[str, Any]] = []
    excluded: dict[str, str] = {}
    for r in sorted(reps, key=lambda r: r["repetition"]):
        if r["comparability"] != "valid_comparable":
            excluded[r["id"]] = r["execution_mode"]
            continue
        if len(used) < planned:
            used.append(r)
        else:
            excluded[r["id"]] = "beyond_planned"
    missing: str | None = None
    if len(used) < planned:
        missing = f"{len(used)} of {planned} planned valid comparable repetitions; {planned - len(used)} missing"
    unscored = [r for r in used if r["status"] is None]
    if unscored:
        why = "; ".join(f"{r['id']} {r['derivation']}" for r in unscored)
        missing = (missing + "; " if missing else "") + why
    return used, excluded, missing


def _case_metrics(case: Case, used: list[dict[str, Any]], excluded: dict[str, str], formal: bool,
                  missing: str | None) -> dict[str, dict[str, Any]]:
    ids = [r["id"] for r in used]
    timed = case.scoring_class == "automated_scored"
    names = (
        ["task_success", "reliability", "pass_at_1", "stable_at_3", "complete_at_3", "late_completion_count",
         "hard_fail_count", "autonomy", "governance_serious_count", "governance_minor_count"]
        if timed else
        ["untimed_task_success", "pass_count", "hard_fail_count", "autonomy", "governance_serious_count",
         "governance_minor_count"]
    )
    if not formal:
        why = {case.case_id: "case_incomplete", **{r["id"]: "case_incomplete" for r in used}, **excluded}
        return {n: _metric(None, n, [], why) for n in names}
    statuses = [r["status"] for r in used]
    out: dict[str, dict[str, Any]] = {}
    if timed:
        out["task_success"] = _metric(mean_task_success([r["official_task_success"] for r in used]),
                                      "task_success", ids, excluded)
        on_time = sum(1 for s in statuses if s == "pass")
        out["reliability"] = _metric(reliability(on_time, len(used)), "reliability", ids, excluded)
        first_excl = {i: "not_first" for i in ids[1:]}
        out["pass_at_1"] = _metric(pass_at_1(statuses), "pass_at_1", ids[:1], {**first_excl, **excluded})
        if len(used) == 3:
            out["stable_at_3"] = _metric(stable_at_3(statuses), "stable_at_3", ids, excluded)
            out["complete_at_3"] = _metric(complete_at_3(statuses), "complete_at_3", ids, excluded)
        else:
            na = {case.case_id: "needs_3", **excluded}
            out["stable_at_3"] = _metric(None, "stable_at_3", [], na)
            out["complete_at_3"] = _metric(None, "complete_at_3", [], na)
        out["late_completion_count"] = _metric(sum(1 for s in statuses if s == "late_complete"),
                                               "late_completion_count", ids, excluded)
    else:
        out["untimed_task_success"] = _metric(mean_task_success([r["untimed_task_success"] for r in used]),
                                              "untimed_task_success", ids, excluded)
        out["pass_count"] = _metric(sum(1 for s in statuses if s == "pass"), "pass_count", ids, excluded)
    out["hard_fail_count"] = _metric(sum(1 for r in used if r["hard_fail_rules"]), "hard_fail_count",
                                     ids, excluded)
    out["autonomy"] = _metric(autonomy([r["needed_task_solving_help"] for r in used]), "autonomy",
                              ids, excluded)
    sev = [v["severity"] for r in used for v in r["governance_violations"]]
    out["governance_serious_count"] = _metric(sev.count("serious"), "governance_serious_count", ids, excluded)
    out["governance_minor_count"] = _metric(sev.count("minor"), "governance_minor_count", ids, excluded)
    return out


def _governance(used: Iterable[dict[str, Any]]) -> dict[str, Any]:
    by: dict[str, list[dict[str, str]]] = {"serious": [], "minor": []}
    for r in used:
        for v in r["governance_violations"]:
            by[v["severity"]].append({"id": r["id"], "kind": v["kind"], "detail": v["detail"]})
    return by


def score_cases(cases: list[Case], reps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-case results (see :class:`CaseResult`), in contract order."""
    by_case: dict[str, list[dict[str, Any]]] = {c.case_id: [] for c in cases}
    for r in reps:
        by_case[r["case_id"]].append(r)
    out = []
    for case in cases:
        used, excluded, missing = _select(case, by_case[case.case_id])
        formal = missing is None
        out.append({
            "case_id": case.case_id,
            "scoring_class": case.scoring_class,
            "status": "formal" if formal else "incomplete",
            "planned_repetitions": case.planned_repetitions,
            "valid_comparable_count": sum(1 for r in by_case[case.case_id] if r["comparability"] == "valid_comparable"),
            "missing": missing,
            "definition": case.model_dump(mode="json"),
            "t_hard_s": t_hard(case.t_soft_s) if case.t_soft_s is not None else None,
            "repetitions_used": [r["id"] for r in used] if formal else [],
            "repetitions_excluded": excluded,
            "metrics": _case_metrics(case, used, excluded, formal, missing),
            "governance": _governance(used) if formal else {"serious": [], "minor": []},
            "_used": used if formal else [],
        })
    return out


def _aggregate(case_results: list[dict[str, Any]], scoring_class: str) -> dict[str, dict[str, Any]]:
    """Pooled metrics over the cases of one scoring class; null unless every such case is formal."""
    mine = [c for c in case_results if c["scoring_class"] == scoring_class]
    other_class = "diagnostic_untimed" if scoring_class == "automated_scored" else "automated_scored"
    others = ({f"scoring_class:{other_class}": "other_scoring_class"}
              if any(c["scoring_class"] != scoring_class for c in case_results) else {})
    timed = scoring_class == "automated_scored"
    names = (["task_success", "reliability", "pass_at_1", "stable_at_3", "complete_at_3", "late_completion_count",
              "hard_fail_count", "autonomy", "governance_serious_count", "governance_minor_count",
              "valid_comparable_count", "case_count"] if timed else
             ["untimed_task_success", "pass_count", "hard_fail_count", "autonomy", "governance_serious_count",
              "governance_minor_count", "valid_comparable_count", "case_count"])
    incomplete = [c for c in mine if c["status"] != "formal"]
    if not mine or incomplete:
        why = {c["case_id"]: "case_incomplete" for c in incomplete}
        if not mine:
            why = {f"scoring_class:{scoring_class}": "no_case"}
        return {n: _metric(None, "overall." + n, [], {**why, **others}) for n in names}
    used_ids = [c["case_id"] for c in mine]
    reps = [r for c in mine for r in c["_used"]]
    statuses = [r["status"] for r in reps]
    out: dict[str, dict[str, Any]] = {}

    def put(name: str, value: Any, excluded: dict[str, str] = others) -> None:
        out[name] = _metric(value, "overall." + name, used_ids, excluded)

    if timed:
        put("task_success", mean_task_success([r["official_task_success"] for r in reps]))
        put("reliability", reliability(statuses.count("pass"), len(reps)))
        for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
            vals = [c["metrics"][name]["value"] for c in mine]
            defined = [v for v in vals if v is not None]
            value = sum(defined) / len(defined) * 100 if defined and len(defined) == len(vals) else None
            undefined = {c["case_id"]: "undefined_in_a_case" for c in mine if c["metrics"][name]["value"] is None}
            put(name, value, {**undefined, **others})
        put("late_completion_count", statuses.count("late_complete"))
    else:
        put("untimed_task_success", mean_task_success([r["untimed_task_success"] for r in reps]))
        put("pass_count", statuses.count("pass"))
    put("hard_fail_count", sum(1 for r in reps if r["hard_fail_rules"]))
    put("autonomy", autonomy([r["needed_task_solving_help"] for r in reps]))
    sev = [v["severity"] for r in reps for v in r["governance_violations"]]
    put("governance_serious_count", sev.count("serious"))
    put("governance_minor_count", sev.count("minor"))
    put("valid_comparable_count", len(reps))
    put("case_count", len(mine))
    return out


def score(cases: list[Case], records: list[dict[str, Any]],
          judge_failed: dict[tuple[str, int, str], str] | None = None) -> dict[str, Any]:
    """The whole score (without identity, deviations and provenance, which the caller adds)."""
    case_map = {c.case_id: c for c in cases}
    reps = score_repetitions(case_map, records, judge_failed)
    case_results = score_cases(cases, reps)
    overall = _aggregate(case_results, "automated_scored")
    diagnostic = _aggregate(case_results, "diagnostic_untimed")
    missing = [
        {"case_id": c["case_id"], "scoring_class": c["scoring_class"], "planned_repetitions": c["planned_repetitions"],
         "valid_comparable_count": c["valid_comparable_count"], "missing": c["missing"]}
        for c in case_results if c["status"] != "formal"
    ]
    for c in case_results:
        del c["_used"]
    return {
        "status": "incomplete" if missing else "complete",
        "missing": missing,
        "overall": overall,
        "diagnostic_untimed": diagnostic,
        "cases": case_results,
        "repetitions": reps,
        "infrastructure_invalid_count": _metric(
            sum(1 for r in reps if r["comparability"] == "infrastructure"), "infrastructure_invalid_count",
            [r["id"] for r in reps if r["comparability"] == "infrastructure"], {}),
        "formulas": FORMULAS,
        "exclusion_reasons": EXCLUSION_REASONS,
    }
