"""Assemble the score: per-repetition results, per-case results, the formal aggregate.

Plain data in, plain dicts out (the shape of :class:`~benchscore.mira.formats.ScoreOutput`);
the arithmetic is in :mod:`benchscore.mira.formulas`. Every number carries a ``derivation``:
the formula, the repetitions (or cases) it used and why each other one was left out. What a group
of numbers used and left out is written once, in the group's shared derivation (a case's
``derivation``, ``overall_derivation``, ``diagnostic_untimed_derivation``); a number's own
derivation names its formula and only what differs (see :func:`effective_derivation`).
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from pydantic import TypeAdapter

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
    timing_band_of,
)
from .intervals import add_intervals

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
    "not_first": "not the first valid comparable repetition (Pass@1 looks at the first only; in the pass_at_1 "
    "derivation, added to its case's)",
    "case_incomplete": "the case lacks its planned valid comparable repetitions or one of them is unscored; "
    "its metrics are never averaged from fewer",
    "needs_3": "Stable@3 and Complete@3 are defined for cases planning exactly 3 repetitions (in their own "
    "derivation, added to the case's; they use none of its repetitions)",
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
    "reliability": "on_time_pass_count / valid_comparable_repetition_count x 100",
    "on_time_pass_count": "number of used repetitions with status pass (complete, no hard-fail, within T_soft)",
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
_POOLED = "pooled over the repetitions used by every formal case of the class (each case's derivation lists them): "
FORMULAS.update({f"overall.{k}": _POOLED + v for k, v in list(FORMULAS.items())})
FORMULAS.update({
    f"overall.{k}": f"percent of cases where {FORMULAS[k]}; null when a case has no value"
    for k in ("pass_at_1", "stable_at_3", "complete_at_3")
})
FORMULAS["overall.valid_comparable_repetition_count"] = (
    "number of repetitions used by the case results (each case's valid_comparable_repetition_count, summed)")
FORMULAS["overall.beyond_planned_count"] = (
    "number of valid comparable repetitions left out as beyond_planned (each case's beyond_planned_count, summed)")
FORMULAS["overall.case_count"] = "number of cases of the class"
FORMULAS["infrastructure_invalid_count"] = "number of invalid repetitions (infrastructure; never attributed to Mira)"
FORMULAS["derivation"] = (
    "how to read a derivation: a case metric's derivation names its formula; the repetitions it used and why "
    "each other one was left out are its case's `derivation` (used: repetition ids CASE#N; excluded: id -> "
    "reason code), written once for all the case's metrics. A metric that used fewer gives its own `used`, which "
    "replaces the shared one (pass_at_1: the first repetition), and its own `excluded` entries add to the shared "
    "ones (not_first, needs_3). overall and diagnostic_untimed metrics read the same way against "
    "`overall_derivation` and `diagnostic_untimed_derivation`, whose used/excluded name cases (each case's "
    "derivation names its repetitions) or scoring_class:NAME. infrastructure_invalid_count spells out its own."
)


def _rid(case_id: str, repetition: int) -> str:
    return f"{case_id}#{repetition}"


def _metric(value: Any, formula: str, used: list[str], excluded: dict[str, str]) -> dict[str, Any]:
    """A number with a complete derivation of its own (formula, used, excluded)."""
    return {"value": value, "derivation": {"formula": formula, "used": used, "excluded": excluded}}


def effective_derivation(shared: dict[str, Any], derivation: dict[str, Any]) -> dict[str, Any]:
    """The full derivation of one metric: ``used`` and ``excluded`` spelled out.

    A case metric's derivation names its ``formula`` and refers to the ``derivation`` its case
    shares by all its metrics (``overall`` and ``diagnostic_untimed`` metrics: ``overall_derivation``
    and ``diagnostic_untimed_derivation``). A metric that used fewer repetitions (or cases) gives its
    own ``used``, which replaces the shared one; its own ``excluded`` entries add to the shared ones.
    """
    return {
        "formula": derivation["formula"],
        "used": derivation["used"] if "used" in derivation else shared["used"],
        "excluded": {**shared["excluded"], **derivation["excluded"]} if "excluded" in derivation
        else shared["excluded"],
    }


class _Pattern:
    """What a set of criteria (ids, weights, scorers, in contract order) implies; shared by every case using it."""

    __slots__ = ("order", "weights", "judge_ids", "judge_set", "number")

    def __init__(self, criteria: tuple[tuple[str, float, str], ...], number: int) -> None:
        self.order = tuple([c[0] for c in criteria])
        self.weights = tuple([c[1] for c in criteria])
        self.judge_ids = tuple([c[0] for c in criteria if c[2] == "judge"])
        self.judge_set = frozenset(self.judge_ids)
        self.number = number


class _CaseInfo:
    """Per-case lookups computed once."""

    __slots__ = ("case", "weights", "judge_ids", "judge_set", "order", "timed", "t_soft", "t_soft_text", "key")

    def __init__(self, case: Case, patterns: dict[tuple[Any, ...], _Pattern]) -> None:
        self.case = case
        criteria = tuple([(c.id, c.weight, c.scorer) for c in case.criteria])
        pattern = patterns.get(criteria)
        if pattern is None:
            pattern = patterns[criteria] = _Pattern(criteria, len(patterns))
        self.order = pattern.order
        self.weights = pattern.weights
        self.judge_ids = pattern.judge_ids
        self.judge_set = pattern.judge_set
        self.timed = case.scoring_class == "automated_scored"
        self.t_soft = t_soft = case.t_soft_s
        self.t_soft_text = text = f"T_soft {t_soft} s"
        self.key = (pattern.number, self.timed, text)


_EMPTY: dict[str, Any] = {}
_CREDIT_TEXT = {c: str(c) for c in TIMING_CREDITS}
#: (status, raw_success, timing_band, timing_credit, official, untimed, soft_timeout, derivation
#: text before the elapsed time, text after it or None when the text does not name the time)
_Outcome = tuple[str, float, str | None, float | None, float | None, float | None, bool | None, str, str | None]
_OUTCOMES: dict[tuple[Any, ...], _Outcome] = {}
#: criteria pattern (ids, weights, judge ids) -> a small int naming it in the keys of _OUTCOMES
_PATTERNS: dict[tuple[Any, ...], _Pattern] = {}


def _outcome(info: _CaseInfo, det: dict[str, bool], verdicts: dict[str, str], band: int | None,
             terminal_state: str, post_cutoff: bool, mode: str, hard_rules: list[str]) -> _Outcome:
    """Status, credit and derivation text of one scored repetition from its outcomes as written."""
    satisfied = [det[c] if c in det else verdicts[c] == "pass" for c in info.order]
    raw = raw_success(info.weights, satisfied)
    raw_text = str(raw)
    n_ok = satisfied.count(True)
    n = len(satisfied)
    hard_fail = bool(hard_rules)
    completed = terminal_state == "completed"
    extra = f"; hard-fail ({', '.join(hard_rules)}) makes it 0" if hard_fail else ""
    band_name = credit = official = untimed = soft_timeout = None
    head_of_time = None
    if info.timed:
        status = repetition_status(
            all_satisfied=n_ok == n, any_satisfied_weight=n_ok > 0, hard_fail=hard_fail,
            completed=completed, band=band, post_cutoff_completion=post_cutoff,
        )
        if band is not None and completed and not post_cutoff:
            credit = TIMING_CREDITS[band]
            band_name = TIMING_BANDS[band]
            head_of_time = "completed at "
            timing = f" s: {band_name} of {info.t_soft_text}"
        elif post_cutoff:
            credit = 0.0
            band_name = TIMING_BANDS[4]
            timing = ("correct result" if status == "post_cutoff_completion" else "result") + \
                " only from forensic continuation after T_hard"
        else:
            credit = 0.0
            band_name = NO_COMPLETION
            timing = f"terminal state {terminal_state}: {NO_COMPLETION}"
        official = official_task_success(raw, credit, hard_fail=hard_fail, post_cutoff_completion=post_cutoff)
        soft_timeout = band != 0 or not completed or post_cutoff
        head = f"{n_ok}/{n} criteria satisfied, raw_success {raw_text}; "
        tail = f"; timing_credit {_CREDIT_TEXT[credit]}{extra} -> {status}"
    else:
        status = repetition_status(
            all_satisfied=n_ok == n, any_satisfied_weight=n_ok > 0, hard_fail=hard_fail,
            completed=completed, band=None, post_cutoff_completion=False, timed=False,
        )
        untimed = 0.0 if hard_fail else raw
        head = f"{n_ok}/{n} criteria satisfied, raw_success {raw_text}; "
        timing = "diagnostic_untimed, no timing credit"
        tail = f"{extra} -> {status}"
    if mode == "noncanonical":
        tail += "; noncanonical: diagnostic only"
    if head_of_time is None:
        return status, raw, band_name, credit, official, untimed, soft_timeout, head + timing + tail, None
    return status, raw, band_name, credit, official, untimed, soft_timeout, head + head_of_time, timing + tail


def _violations(events: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    for ev in events:
        sev = governance_severity(ev["kind"], ev.get("severity"))
        if sev != "none":
            out.append({"kind": ev["kind"], "severity": sev, "detail": ev.get("detail", "")})
    return out


def score_repetitions(
    cases: dict[str, Case],
    records: list[dict[str, Any]],
    judge_failed: dict[tuple[str, int, str], str] | None = None,
) -> list[dict[str, Any]]:
    """Per-repetition status and credit, in input order (see :class:`RepetitionResult`).

    The outcome of a record (status, credit, derivation text around its elapsed time) depends only
    on its case's criteria and timing budget and on the record's outcomes as written, so it is
    computed once per distinct combination (a hard-fail record is always computed afresh).
    """
    judge_failed = judge_failed or {}
    outcomes = _OUTCOMES
    if len(outcomes) > 100_000 or len(_PATTERNS) > 100_000:
        outcomes.clear()
        _PATTERNS.clear()
    infos = {cid: _CaseInfo(c, _PATTERNS) for cid, c in cases.items()}
    out: list[dict[str, Any]] = []
    append = out.append
    for rec in records:
        get = rec.get
        cid = rec["case_id"]
        info = infos[cid]
        rep = rec["repetition"]
        mode = rec["execution_mode"]
        elapsed = get("elapsed_s")
        interventions = get("interventions")
        needed_help = any(x["kind"] == "task_solving_help" for x in interventions) if interventions else False
        events = get("hard_fail_events")
        hard_rules = [ev["rule"] for ev in events] if events else []
        gov = get("governance_events")
        violations = _violations(gov) if gov else []
        verdicts = get("judge_verdicts") or _EMPTY
        if mode == "invalid":
            status = raw = band_name = credit = official = untimed = soft_timeout = None
            reason = "invalid: infrastructure, not scored, never attributed to Mira"
        elif not verdicts.keys() >= info.judge_set:
            status = raw = band_name = credit = official = untimed = soft_timeout = None
            pending = [c for c in info.judge_ids if c not in verdicts]
            reason = "unscored: " + "; ".join(
                f"criterion {c!r}: {judge_failed.get((cid, rep, c), 'no judge verdict yet')}" for c in pending
            )
        else:
            det = get("deterministic_results") or _EMPTY
            terminal = rec["terminal_state"]
            post_cutoff = get("post_cutoff_completion", False)
            band = (timing_band_of(elapsed, info.t_soft)
                    if info.timed and elapsed is not None and (terminal == "completed" or post_cutoff) else None)
            if hard_rules:
                got = _outcome(info, det, verdicts, band, terminal, post_cutoff, mode, hard_rules)
            else:
                key = (info.key, tuple(det.items()), tuple(verdicts.items()), band, terminal, post_cutoff, mode)
                got = outcomes.get(key)
                if got is None:
                    got = outcomes[key] = _outcome(info, det, verdicts, band, terminal, post_cutoff, mode, hard_rules)
            status, raw, band_name, credit, official, untimed, soft_timeout, reason, tail = got
            if tail is not None:
                reason = f"{reason}{elapsed}{tail}"
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


_BY_REPETITION = itemgetter("repetition")


def _select(case: Case, reps: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str], str | None, int]:
    """The repetitions a case result uses, the ones left out (with why), what is missing (or None),
    and how many valid comparable repetitions lie beyond the plan."""
    planned = case.planned_repetitions
    used: list[dict[str, Any]] = []
    excluded: dict[str, str] = {}
    valid = 0
    for r in sorted(reps, key=_BY_REPETITION):
        if r["comparability"] != "valid_comparable":
            excluded[r["id"]] = r["execution_mode"]
            continue
        valid += 1
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
    return used, excluded, missing, valid - len(used)


_TIMED_NAMES = ("task_success", "reliability", "on_time_pass_count", "pass_at_1", "stable_at_3", "complete_at_3",
                "late_completion_count", "hard_fail_count", "autonomy", "governance_serious_count", "governance_minor_count")
_UNTIMED_NAMES = ("untimed_task_success", "pass_count", "hard_fail_count", "autonomy", "governance_serious_count",
                  "governance_minor_count")


#: The derivation of a metric that used exactly its group's shared derivation: only its formula.
_F: dict[str, dict[str, str]] = {name: {"formula": name} for name in FORMULAS}
#: Metrics of an incomplete case (all null; the case's derivation says why), shared by such cases.
_INCOMPLETE = {
    timed: {n: {"value": None, "derivation": _F[n]} for n in (_TIMED_NAMES if timed else _UNTIMED_NAMES)}
    for timed in (True, False)
}


def _case_metrics(case: Case, used: list[dict[str, Any]], ids: list[str], formal: bool) -> dict[str, dict[str, Any]]:
    """A case's metrics; each derivation names its formula and, where it differs from the case's
    shared ``derivation``, its own ``used`` (replacing) and ``excluded`` (adding)."""
    timed = case.scoring_class == "automated_scored"
    if not formal:
        return _INCOMPLETE[timed]
    statuses = [r["status"] for r in used]
    hard_fail_count = 0
    needed_help = []
    serious = minor = 0
    for r in used:
        if r["hard_fail_rules"]:
            hard_fail_count += 1
        needed_help.append(r["needed_task_solving_help"])
        for v in r["governance_violations"]:
            if v["severity"] == "serious":
                serious += 1
            elif v["severity"] == "minor":
                minor += 1
    if timed:
        on_time = statuses.count("pass")
        if len(used) == 3:
            stable = {"value": stable_at_3(statuses), "derivation": _F["stable_at_3"]}
            complete = {"value": complete_at_3(statuses), "derivation": _F["complete_at_3"]}
        else:
            na = {case.case_id: "needs_3"}
            stable = {"value": None, "derivation": {"formula": "stable_at_3", "used": [], "excluded": na}}
            complete = {"value": None, "derivation": {"formula": "complete_at_3", "used": [], "excluded": na}}
        head = {
            "task_success": {"value": mean_task_success([r["official_task_success"] for r in used]),
                             "derivation": _F["task_success"]},
            "reliability": {"value": reliability(on_time, len(used)), "derivation": _F["reliability"]},
            "on_time_pass_count": {"value": on_time, "derivation": _F["on_time_pass_count"]},
            "pass_at_1": {"value": pass_at_1(statuses), "derivation": {
                "formula": "pass_at_1", "used": ids[:1], "excluded": dict.fromkeys(ids[1:], "not_first")}},
            "stable_at_3": stable,
            "complete_at_3": complete,
            "late_completion_count": {"value": statuses.count("late_complete"),
                                      "derivation": _F["late_completion_count"]},
        }
    else:
        head = {
            "untimed_task_success": {"value": mean_task_success([r["untimed_task_success"] for r in used]),
                                     "derivation": _F["untimed_task_success"]},
            "pass_count": {"value": statuses.count("pass"), "derivation": _F["pass_count"]},
        }
    head["hard_fail_count"] = {"value": hard_fail_count, "derivation": _F["hard_fail_count"]}
    head["autonomy"] = {"value": autonomy(needed_help), "derivation": _F["autonomy"]}
    head["governance_serious_count"] = {"value": serious, "derivation": _F["governance_serious_count"]}
    head["governance_minor_count"] = {"value": minor, "derivation": _F["governance_minor_count"]}
    return head


_NO_VIOLATIONS: dict[str, list[Any]] = {"serious": [], "minor": []}


def _governance(used: Iterable[dict[str, Any]]) -> dict[str, Any]:
    by: dict[str, list[dict[str, str]]] = {"serious": [], "minor": []}
    for r in used:
        for v in r["governance_violations"]:
            by[v["severity"]].append({"id": r["id"], "kind": v["kind"], "detail": v["detail"]})
    return by


_CASES = TypeAdapter(list[Case])


def score_cases(cases: list[Case], reps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-case results (see :class:`CaseResult`), in contract order."""
    by_case: dict[str, list[dict[str, Any]]] = {c.case_id: [] for c in cases}
    for r in reps:
        by_case[r["case_id"]].append(r)
    # one call for every case definition; credentials never leave the contract, not even into the private score
    definitions = _CASES.dump_python(cases, mode="json", exclude={"__all__": {"credentials"}})
    out = []
    for case, definition in zip(cases, definitions, strict=True):
        mine = by_case[case.case_id]
        used, excluded, missing, beyond = _select(case, mine)
        formal = missing is None
        ids = [r["id"] for r in used]
        if formal:
            shared = {"used": ids, "excluded": excluded}
        else:
            shared = {"used": [], "excluded": {case.case_id: "case_incomplete",
                                               **dict.fromkeys(ids, "case_incomplete"), **excluded}}
        out.append({
            "case_id": case.case_id,
            "scoring_class": case.scoring_class,
            "status": "formal" if formal else "incomplete",
            "planned_repetitions": case.planned_repetitions,
            "valid_comparable_repetition_count": len(used),
            "beyond_planned_count": beyond,
            "missing": missing,
            "definition": definition,
            "t_hard_s": t_hard(case.t_soft_s) if case.t_soft_s is not None else None,
            "repetitions_used": ids if formal else [],
            "repetitions_excluded": excluded,
            "derivation": shared,
            "metrics": _case_metrics(case, used, ids, formal),
            "governance": _governance(used) if formal else {"serious": [], "minor": []},
            "_used": used if formal else [],
        })
    return out


def _aggregate(case_results: list[dict[str, Any]], scoring_class: str) -> tuple[dict[str, dict[str, Any]],
                                                                                  dict[str, Any]]:
    """Pooled metrics over the cases of one scoring class (null unless every such case is formal)
    and the derivation they share: the cases used, and why every other case was left out."""
    mine = [c for c in case_results if c["scoring_class"] == scoring_class]
    other_class = "diagnostic_untimed" if scoring_class == "automated_scored" else "automated_scored"
    others = ({f"scoring_class:{other_class}": "other_scoring_class"}
              if any(c["scoring_class"] != scoring_class for c in case_results) else {})
    timed = scoring_class == "automated_scored"
    names = [*(_TIMED_NAMES if timed else _UNTIMED_NAMES), "valid_comparable_repetition_count",
             "beyond_planned_count", "case_count"]
    incomplete = [c for c in mine if c["status"] != "formal"]
    if not mine or incomplete:
        why = {c["case_id"]: "case_incomplete" for c in incomplete}
        if not mine:
            why = {f"scoring_class:{scoring_class}": "no_case"}
        return ({n: {"value": None, "derivation": _F["overall." + n]} for n in names},
                {"used": [], "excluded": {**why, **others}})
    reps = [r for c in mine for r in c["_used"]]
    statuses = [r["status"] for r in reps]
    out: dict[str, dict[str, Any]] = {}

    def put(name: str, value: Any, excluded: dict[str, str] | None = None) -> None:
        derivation = _F["overall." + name] if excluded is None else {
            "formula": "overall." + name, "excluded": excluded}
        out[name] = {"value": value, "derivation": derivation}

    if timed:
        put("task_success", mean_task_success([r["official_task_success"] for r in reps]))
        on_time = statuses.count("pass")
        put("reliability", reliability(on_time, len(reps)))
        put("on_time_pass_count", on_time)
        for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
            vals = [c["metrics"][name]["value"] for c in mine]
            defined = [v for v in vals if v is not None]
            value = sum(defined) / len(defined) * 100 if defined and len(defined) == len(vals) else None
            undefined = {c["case_id"]: "undefined_in_a_case" for c in mine if c["metrics"][name]["value"] is None}
            put(name, value, undefined or None)
        put("late_completion_count", statuses.count("late_complete"))
    else:
        put("untimed_task_success", mean_task_success([r["untimed_task_success"] for r in reps]))
        put("pass_count", statuses.count("pass"))
    put("hard_fail_count", sum(1 for r in reps if r["hard_fail_rules"]))
    put("autonomy", autonomy([r["needed_task_solving_help"] for r in reps]))
    sev = [v["severity"] for r in reps for v in r["governance_violations"]]
    put("governance_serious_count", sev.count("serious"))
    put("governance_minor_count", sev.count("minor"))
    put("valid_comparable_repetition_count", len(reps))
    put("beyond_planned_count", sum(c["beyond_planned_count"] for c in mine))
    put("case_count", len(mine))
    return out, {"used": [c["case_id"] for c in mine], "excluded": others}


def score(cases: list[Case], records: list[dict[str, Any]],
          judge_failed: dict[tuple[str, int, str], str] | None = None) -> dict[str, Any]:
    """The whole score (without identity, deviations and provenance, which the caller adds); the
    overall headline metrics carry their 95 % intervals (:mod:`benchscore.mira.intervals`)."""
    case_map = {c.case_id: c for c in cases}
    reps = score_repetitions(case_map, records, judge_failed)
    case_results = score_cases(cases, reps)
    overall, overall_derivation = _aggregate(case_results, "automated_scored")
    diagnostic, diagnostic_derivation = _aggregate(case_results, "diagnostic_untimed")
    add_intervals(overall, case_results, "automated_scored")
    add_intervals(diagnostic, case_results, "diagnostic_untimed")
    missing = [
        {"case_id": c["case_id"], "scoring_class": c["scoring_class"], "planned_repetitions": c["planned_repetitions"],
         "valid_comparable_repetition_count": c["valid_comparable_repetition_count"], "missing": c["missing"]}
        for c in case_results if c["status"] != "formal"
    ]
    for c in case_results:
        del c["_used"]
    infrastructure = [r["id"] for r in reps if r["comparability"] == "infrastructure"]
    return {
        "status": "incomplete" if missing else "complete",
        "missing": missing,
        "overall": overall,
        "overall_derivation": overall_derivation,
        "diagnostic_untimed": diagnostic,
        "diagnostic_untimed_derivation": diagnostic_derivation,
        "cases": case_results,
        "repetitions": reps,
        "infrastructure_invalid_count": _metric(len(infrastructure), "infrastructure_invalid_count", infrastructure, {}),
        "formulas": FORMULAS,
        "exclusion_reasons": EXCLUSION_REASONS,
    }
