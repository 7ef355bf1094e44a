"""What the mira commands print: every count and metric of the JSON they write, rounded for reading.

Tables go through :func:`benchscore.common.terminal.print_table` (rich on a terminal; plain aligned,
untruncated lines when piped or too wide for the terminal), each followed by a blank line. Headers are
the JSON key names; floats are rounded to 4 significant digits (:func:`benchscore.common.terminal.fmt`;
the JSON keeps every digit), percentages (Reliability, Pass@1, Stable@3, Complete@3) say ``%``,
booleans are yes/no, null ``-``, lists joined by ``, `` (``-`` when empty).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from benchscore.common.terminal import fmt, metric_cell, print_line, print_table


def cell(value: Any) -> Any:
    """A table cell: floats rounded for reading (:func:`fmt`), lists joined; None and booleans are left
    to print_table."""
    if isinstance(value, float):
        return fmt(value)
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or "-"
    return value


def _table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    print_table(title, columns, [[cell(v) for v in row] for row in rows])
    print_line("")


def _metrics(title: str, values: dict[str, Any]) -> None:
    _table(title, ["metric", "value"], ((k, metric_cell(k, v)) for k, v in values.items()))


_CASE_COUNTS = ("status", "planned_repetitions", "valid_comparable_repetition_count", "beyond_planned_count")


def _cases(cases: list[dict[str, Any]], values_of: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """One table per scoring class: the case's status and counts, then every metric value."""
    for scoring_class in ("automated_scored", "diagnostic_untimed"):
        mine = [c for c in cases if c["scoring_class"] == scoring_class]
        if not mine:
            continue
        names = list(dict.fromkeys(name for c in mine for name in values_of(c)))
        _table(f"cases ({scoring_class})", ["case_id", *_CASE_COUNTS, *names],
               ([c["case_id"], *(c[k] for k in _CASE_COUNTS), *(metric_cell(n, values_of(c).get(n)) for n in names)]
                for c in mine))


def _deviations(deviations: list[dict[str, Any]]) -> None:
    if deviations:
        _table("deviations", ["id", "affects", "text"], ([d["id"], d.get("affects", []), d["text"]] for d in deviations))


_REPETITION_FIELDS = ("execution_mode", "comparability", "status", "raw_success", "timing_band", "timing_credit",
                      "official_task_success", "untimed_task_success", "elapsed_s", "soft_timeout",
                      "needed_task_solving_help", "hard_fail_rules")


def print_score(out: dict[str, Any]) -> None:
    """The whole score: identity and status, both aggregates, every case, every repetition (with its
    derivation, so a fail shows its reason), what is missing and the deviations."""
    _table(f"mira score: {out['benchmark_id']} {out['contract_version']}", ["field", "value"], [
        ("status", out["status"]),
        ("infrastructure_invalid_count", out["infrastructure_invalid_count"]["value"]),
        ("contract_sha256", out["contract_sha256"]),
    ])
    _metrics("overall (automated_scored)", {k: m["value"] for k, m in out["overall"].items()})
    _metrics("diagnostic_untimed", {k: m["value"] for k, m in out["diagnostic_untimed"].items()})
    _table("95 % intervals (ci95: cases are the unit; docs/statistics.md)",
           ["aggregate", "metric", "value", "ci95_low", "ci95_high", "ci_method", "ci_reason"],
           ([key, name, *(metric_cell(name, v) for v in (m["value"], *(m["ci95"] or (None, None)))), m["ci_method"],
             m.get("ci_reason")]
            for key in ("overall", "diagnostic_untimed") for name, m in out[key].items() if "ci_method" in m))
    if out.get("judge"):
        print_score_judge(out["judge"])
    _cases(out["cases"], lambda c: {k: m["value"] for k, m in c["metrics"].items()})
    _table("repetitions", ["id", *_REPETITION_FIELDS, "governance_violations", "derivation"], (
        [r["id"], *(r[k] for k in _REPETITION_FIELDS),
         [f"{v['kind']} ({v['severity']})" for v in r["governance_violations"]], r["derivation"]]
        for r in out["repetitions"]))
    if out["missing"]:
        _table("missing", ["case_id", "scoring_class", "planned_repetitions", "valid_comparable_repetition_count",
                           "missing"], ([m["case_id"], m["scoring_class"], m["planned_repetitions"],
                                         m["valid_comparable_repetition_count"], m["missing"]] for m in out["missing"]))
    _deviations(out["deviations"])


_PUBLIC_REPETITION_FIELDS = ("execution_mode", "comparability", "used", "status", "timing_credit",
                             "official_task_success", "untimed_task_success", "needed_task_solving_help")


def print_public(out: dict[str, Any]) -> None:
    """The whole public projection: identity and status, both aggregates, every case and repetition, deviations."""
    _table(f"mira public projection: {out['benchmark_id']} {out['contract_version']}", ["field", "value"], [
        ("status", out["status"]), ("contract_sha256", out["contract_sha256"])])
    _metrics("overall (automated_scored)", out["overall"])
    _metrics("diagnostic_untimed", out["diagnostic_untimed"])
    _cases(out["cases"], lambda c: c["results"])
    _table("repetitions", ["id", *_PUBLIC_REPETITION_FIELDS], (
        [f"{c['case_id']}#{r['repetition']}", *(r[k] for k in _PUBLIC_REPETITION_FIELDS)]
        for c in out["cases"] for r in c["repetitions"]))
    _deviations(out["deviations"])


def print_calibration(contract: dict[str, Any]) -> None:
    """The policy's parameters and, per case, its budget (or none) and what calibration found."""
    policy = contract["calibration_policy"]
    _table("calibration_policy", ["field", "value"], policy.items())
    _table(f"calibration ({policy['policy']})", ["case_id", "scoring_class", "t_soft_s", "observations", "note"], (
        [c["case_id"], c["scoring_class"], c["t_soft_s"], c["calibration"]["observations"], c["calibration"]["note"]]
        for c in contract["cases"]))


_CALL_FIELDS = ("status", "latency_s", "tokens_in", "tokens_out", "attempts")


def print_verdicts(out: dict[str, Any]) -> None:
    """Verdict counts, then every packet: verdict, the model's answer, why it is judge_failed, its call's audit."""
    verdicts = out["verdicts"]
    _table("mira judge: verdicts", ["verdict", "count"],
           ([name, sum(v["verdict"] == name for v in verdicts)] for name in ("pass", "fail", "judge_failed")))
    _table("packets", ["packet_id", "verdict", "answer", "reason", *_CALL_FIELDS], (
        [v["packet_id"], v["verdict"], repr(v["answer"]) if v["answer"] is not None else None, v["reason"],
         *((v["call"] or {}).get(k) for k in _CALL_FIELDS)]
        for v in verdicts))


def _interval(stat: dict[str, Any], metric: str = "") -> str:
    if stat.get("ci95"):
        low, high = stat["ci95"]
        return f"[{metric_cell(metric, low)}, {metric_cell(metric, high)}]"
    return f"none ({stat.get('ci_reason')})" if stat.get("ci_reason") else "-"


def _agreement(agreement: dict[str, Any], title: str) -> None:
    t = agreement["table"]
    _table(f"{title}: {agreement['known']} known verdicts against the judge's ({agreement['judge_failed']} judge_failed "
           "apart)", ["known \\ judged", "pass", "fail"],
           [("pass", t["true_pass"], t["false_fail"]), ("fail", t["false_pass"], t["true_fail"])])
    _table("answers (share of the calibration packets)", ["answer", "judge", "known"],
           ([a, agreement["answers"][a], agreement["known_answers"].get(a)] for a in ("pass", "fail", "judge_failed")))
    _table("agreement (95 % intervals)", ["statistic", "value", "ci95", "ci_method"], [
        *((name, agreement[name]["value"], _interval(agreement[name]), agreement[name]["ci_method"])
          for name in ("sensitivity", "specificity", "kappa")),
        ("percent_agreement", agreement["percent_agreement"], "-", "-")])


def print_judge_report(out: dict[str, Any]) -> None:
    """``mira judge-report``: the answer first (measured or not, and why), then the table, the shares, each
    statistic with its interval, and every packet with its known verdict and reason."""
    a = out["agreement"]
    word = "measured" if a["measured"] else "not a measured judge"
    print_line(f"judge {out['model']}: {word}: {a['measured_reason']}")
    if a["always_answers"]:
        print_line(f"this judge always answers {a['always_answers']}")
    print_line("")
    _agreement(a, f"judge {out['model']}")
    _table("packets", ["packet_id", "known_verdict", "verdict", "agrees", "known_reason"],
           ([p["packet_id"], p["known_verdict"], p["verdict"], p["agrees"], p["known_reason"]] for p in out["packets"]))


def print_score_judge(judge: dict[str, Any]) -> None:
    """The judge beside the score: its status in words, its agreement, and the corrected numbers beside the
    contract's."""
    print_line(f"judge{' ' + judge['model'] if judge.get('model') else ''}: {judge['words']}")
    if judge["agreement"] and judge["agreement"]["always_answers"]:
        print_line(f"this judge always answers {judge['agreement']['always_answers']}")
    print_line("")
    if judge["agreement"]:
        _agreement(judge["agreement"], "judge calibration")
    if judge["corrected"]:
        _table("corrected for the judge's errors (beside the contract's numbers, which stay as the contract computes "
               "them)", ["metric", "contract_value", "corrected", "ci95", "ci_method", "lam", "known", "judge_only",
                         "fixed"],
               ([name, metric_cell(name, c["contract_value"]), metric_cell(name, c["value"]), _interval(c, name),
                 c["ci_method"], c["lam"], c["known"], c["judge_only"], c["fixed"]]
                for name, c in judge["corrected"].items()))


def print_conversion(conv: Any, output: str) -> None:
    """``mira from-inspect``: the headline (what was written, counted against the contract's plan, and
    whether every log finished), each log (how its run ended), each repetition's outcome, retried
    attempts, score edits and approvals that are not ordinary, and every planned repetition that has
    no record, with why."""
    unfinished = conv.unfinished_logs
    head = (f"mira from-inspect: wrote {conv.written} repetitions of {conv.cases} cases from {len(conv.logs)} log(s) to "
            f"{output}; {conv.invalid} infrastructure-invalid, {len(conv.missing)} of the contract's {conv.planned} "
            "planned repetitions missing")
    if unfinished:
        head += "; NOT FINAL: " + "; ".join(f"log {i.name} ended with {i.header.ended()}" for i in unfinished)
    elif conv.missing:
        head += " (incomplete: score them with `mira score`, a case short of its plan is incomplete)"
    print_line(head)
    print_line("")
    _table("logs", ["log", "task", "model", "status", "epochs", "samples", "not contract cases (skipped)", "eval_id",
                    "inspect_ai"],
           [(i.name, i.header.task, i.header.model, i.header.status, i.header.epochs, i.samples, i.skipped,
             i.header.eval_id, i.header.inspect_version) for i in conv.logs])
    unlogged_said: set[str] = set()
    for i in conv.logs:
        if i.header.error is not None:
            print_line(f"log {i.name} ended with {i.header.ended()}")
        loc = i.header.location
        if loc.eval_set is not None:
            older = f"; older logs of the task not read: {', '.join(loc.replaced)}" if loc.replaced else ""
            print_line(f"log {i.name}: the final log of task {loc.task_id} of eval set {loc.eval_set}{older}")
            if loc.unlogged and loc.eval_set not in unlogged_said:
                unlogged_said.add(loc.eval_set)
                print_line(f"eval set {loc.eval_set}: no log of task(s) {', '.join(loc.unlogged)} (listed in its "
                           "eval-set.json; never run, or their logs are gone)")
    _table("repetitions written", ["outcome", "repetitions"], sorted(conv.outcomes.items()))
    if conv.notes:
        _table("retried attempts, score edits, approvals", ["case_id", "repetition", "what"], conv.notes)
    reasons: dict[tuple[str, int], str] = {}
    for log, case, epoch, reason in conv.left_out:
        reasons[(case, epoch)] = f"{reason} ({log})"
    for log, case, epoch in conv.absent:
        reasons.setdefault((case, epoch), f"not in {log} (the eval stopped before it, or it was never run)")
    rows = [(case, n, reasons.get((case, n), "no log holds it")) for case, n in conv.missing]
    if rows:
        _table("planned repetitions with no record (missing)", ["case_id", "repetition", "why"], rows)
