"""swarm in the HTML report: the acceptance matrix with the reason for every FAIL, pheromone P_t over
time from the ledger, consensus share and margin per round against threshold/min_margin, L01
throughput, L02 tokens per minute window against the target (3,000 TPM in the seed).

Reads the outputs of ``swarm accept`` (kinds ``acceptance-matrix``, ``scenario``, ``model-io``),
``swarm run`` (``run``), ``swarm audit`` (``audit``), ``swarm stress`` (``L01``) and ``swarm budget``
(``L02``) as plain dicts; only :mod:`benchscore.common` and matplotlib are used. What an output does
not carry is not drawn, and the page says which field is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchscore.common import html, plot
from benchscore.common.html import Output

TITLE = "swarm: swarm-minimal"
KINDS = {
    "acceptance-matrix": "swarm accept all",
    "scenario": "swarm accept S07|S08|S09|S10|L01|L02",
    "model-io": "swarm accept S07|S08 (FILE.model-io.json)",
    "run": "swarm run",
    "audit": "swarm audit",
    "L01": "swarm stress",
    "L02": "swarm budget",
}


def output_formats() -> dict[str, type]:
    """kind -> the format each output is validated against before it is drawn (the report's hook): the
    models of the files as written (:func:`benchscore.swarm.outputs.output_formats`)."""
    from .outputs import output_formats as formats

    return formats()


def kind_of(doc: Any) -> str | None:
    """The kind from ``provenance.metric_id`` (``swarm.run``, ``swarm.audit``, ``swarm.L01``, ``swarm.L02``,
    ``swarm.acceptance.WHICH``) and, for the acceptance outputs that share a metric id, the shape."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return None
    metric = str(doc["provenance"].get("metric_id", ""))
    if metric.startswith("swarm.acceptance."):
        if isinstance(doc.get("scenarios"), dict) and isinstance(doc.get("checks"), list):
            return "acceptance-matrix"
        if isinstance(doc.get("records"), list) and "calls_issued" in doc:
            return "model-io"
        if isinstance(doc.get("checks"), list) and "verdict" in doc:
            return "scenario"
        return None
    return {"swarm.run": "run", "swarm.audit": "audit", "swarm.L01": "L01", "swarm.L02": "L02"}.get(metric)


def render(outputs: Sequence[Output]) -> list[str]:
    draw = {"acceptance-matrix": _matrix, "scenario": _scenario, "model-io": _model_io, "run": _run,
            "audit": _audit, "L01": _l01, "L02": _l02}
    return [draw[o.kind](o) for o in outputs]


def _title(out: Output) -> str:
    return f"{out.label}: {out.kind} ({KINDS[out.kind]})"


# ---- the summary table -----------------------------------------------------------------------------
def _verdict(ok: Any) -> str:
    return "PASS" if ok else "FAIL"


def _closed_loop_failures(d: dict[str, Any]) -> str:
    """Why MINIMAL_CLOSED_LOOP_PASS is false: each failed closed-loop item with its reason."""
    failures = {f"{s}.{k}": v for s, sc in d["scenarios"].items() for k, v in (sc.get("failures") or {}).items()}
    reasons = d.get("compliance_input_reasons") or {}
    return "; ".join(f"{k}: {_closed_loop_reason(k, d['checks'], failures, reasons) or 'no reason recorded'}"
                     for k, v in (d.get("closed_loop") or {}).items() if v != "PASS")


def _short_head(d: dict[str, Any]) -> str:
    n = sum(1 for v in (d.get("closed_loop") or {}).values() if v != "PASS")
    return f"MINIMAL_CLOSED_LOOP_PASS = false: {n} item{'s' * (n != 1)} not PASS (the checks table says why in full):"


def _closed_loop_items(d: dict[str, Any]) -> tuple[str, ...]:
    """Why MINIMAL_CLOSED_LOOP_PASS is false, as a short list: per failed closed-loop item, whether it ran
    live where the seed needs it and the names of its failed checks (their conditions and evidence are in
    the page's checks table and the JSON)."""
    from .accept.evidence import LIVE_ONLY

    scenarios: dict[str, Any] = d.get("scenarios") or {}
    items = []
    for item, verdict in (d.get("closed_loop") or {}).items():
        if verdict == "PASS":
            continue
        key = item.split("_")[0]
        sc = scenarios.get(key) or {}
        failed = [k for k in (sc.get("failures") or {}) if k != "scenario"] or [
            str(c.get("id", "")).split(".", 1)[-1] for c in d.get("checks") or []
            if str(c.get("id", "")).split(".")[0] in (item, key) and c.get("verdict") != "PASS"]
        parts = []
        if key in LIVE_ONLY and sc.get("mode") not in (None, "live"):
            parts.append(f"ran {sc.get('mode')}, not live (only a live run counts)")
        if sc.get("mode") == "not_run":
            parts.append(f"not run: {sc.get('reason') or 'no reason recorded'}")
        parts.append(f"checks not met: {', '.join(failed)}" if failed else "its checks passed")
        items.append(f"{item}: {'; '.join(parts)}")
    return tuple(items)


def _local_failures(d: dict[str, Any]) -> str:
    """Why LOCAL_SCALE_AND_BUDGET_PASS is false: L01 and L02 with the reasons of their failed checks."""
    out = []
    for name in ("L01", "L02"):
        sc = d["scenarios"].get(name) or {}
        if sc.get("verdict") != "PASS":
            why = "; ".join(f"{v}" for v in (sc.get("failures") or {}).values()) or sc.get("reason") or "no reason recorded"
            out.append(f"{name} {sc.get('verdict', 'missing')}: {why}")
    return "; ".join(out)


def summary_rows(out: Output) -> list[html.SummaryRow]:
    """The summary table's rows of a swarm output (the report's hook)."""
    d, kind = out.doc, out.kind
    H = html.Headline
    if kind == "acceptance-matrix":
        closed = d.get("MINIMAL_CLOSED_LOOP_PASS")
        local = d.get("LOCAL_SCALE_AND_BUDGET_PASS")
        rows = [html.SummaryRow(
            out, "swarm-minimal: the closed loop (MINIMAL_CLOSED_LOOP_PASS) and the compliance score",
            [H("minimal_compliance_score", d.get("minimal_compliance_score"), "of 100"),
             H("swarmness_score", d.get("swarmness_score"), "of 100"), H("grade", d.get("grade"))],
            _verdict(closed), None if closed else _short_head(d),
            what="acceptance matrix", items=() if closed else _closed_loop_items(d))]
        if "LOCAL_SCALE_AND_BUDGET_PASS" in d:
            rows.append(html.SummaryRow(
                out, "swarm-minimal: local scale and budget (LOCAL_SCALE_AND_BUDGET_PASS: L01, L02)", [],
                _verdict(local), None if local else f"LOCAL_SCALE_AND_BUDGET_PASS = false: {_local_failures(d)}",
                what="acceptance matrix"))
        return rows
    if kind == "scenario":
        checks = d.get("checks") or []
        passed = sum(1 for c in checks if c.get("passed") or c.get("verdict") == "PASS")
        failures = "; ".join(f"{k}: {v}" for k, v in (d.get("failures") or {}).items())
        reason = d.get("verdict_reason") or failures or d.get("reason") or None
        return [html.SummaryRow(out, f"scenario {d.get('scenario')} ({d.get('mode')})",
                                [H("checks PASS", f"{passed}/{len(checks)}")], str(d.get("verdict")), reason,
                                what="scenario")]
    if kind == "model-io":  # S08's audit: S08's one verdict (scenario_verdict), as the matrix gives it
        from .accept.evidence import scenario_verdict
        from .accept.runner import s08_result
        from .gateway import ModelIOReport

        verdict, reason = scenario_verdict(s08_result(ModelIOReport.model_validate(d)))
        ok = verdict == "PASS"
        return [html.SummaryRow(out, f"model IO report of {d.get('endpoint')} ({d.get('mode')})",
                                [H("calls ok", f"{d.get('calls_ok')}/{d.get('calls_recorded')}"),
                                 H("tokens in/out", f"{d.get('tokens_in')}/{d.get('tokens_out')}")],
                                _verdict(ok), reason or None, what="model-io")]
    if kind == "run":
        ok = d.get("audit_verdict") == "PASS" and d.get("converged") and not d.get("failed_tasks")
        reason = None if ok else (f"audit {d.get('audit_verdict')} ({d.get('audit_violations')} violation(s)), "
                                  f"converged {d.get('converged')}, failed tasks {d.get('failed_tasks')}")
        return [html.SummaryRow(out, f"run {d.get('run_id')}: {d.get('agent_count')} agents, {d.get('task_count')} tasks",
                                [H("completed", f"{d.get('completed_tasks')}/{d.get('task_count')}"),
                                 H("converged", d.get("converged"))], _verdict(ok), reason, what="run")]
    if kind == "audit":
        violations = d.get("violations") or []
        reason = None if d.get("verdict") == "PASS" else (
            f"{d.get('violation_count')} violation(s)" + (f", first: {violations[0].get('reason')}" if violations else ""))
        return [html.SummaryRow(out, f"ledger audit of run {d.get('run_id')}",
                                [H("events", d.get("events")), H("violations", d.get("violation_count"))],
                                str(d.get("verdict")), reason, what="audit")]
    if kind == "L01":
        verdict = str(d.get("L01_verdict", _verdict(d.get("L01_PASS"))))
        return [html.SummaryRow(out, f"L01 stress: {d.get('total_agents')} agents, {d.get('total_tasks')} tasks",
                                [H("tasks_per_second", d.get("tasks_per_second")),
                                 H("completed", f"{d.get('completed_tasks')}/{d.get('total_tasks')}")],
                                verdict, _l01_reason(d, verdict), what="L01")]
    ok = d.get("L02_PASS")
    reason = None if ok else (f"max_tokens_in_a_minute {d.get('max_tokens_in_a_minute')} against target_tpm "
                              f"{d.get('target_tpm')}, budget_utilization {d.get('budget_utilization')}, "
                              f"failed tasks {d.get('failed_tasks')}")
    return [html.SummaryRow(out, f"L02 budget: target_tpm {d.get('target_tpm')}",
                            [H("max_tokens_in_a_minute", d.get("max_tokens_in_a_minute")),
                             H("budget_utilization", d.get("budget_utilization"))], _verdict(ok), reason, what="L02")]


def _l01_reason(d: dict[str, Any], verdict: str) -> str | None:
    """Why an L01 run is not PASS: reduced (its checks hold at a smaller size than the seed's) or the failed checks."""
    from .stress import SEED_AGENTS, SEED_TASKS

    if verdict == "PASS":
        return None
    if verdict == "reduced":
        return (f"the checks pass at {d.get('total_agents')} agents x {d.get('total_tasks')} tasks, below the seed's "
                f"{SEED_AGENTS} x {SEED_TASKS}: a reduced run is never L01_PASS")
    return (f"completed {d.get('completed_tasks')} of {d.get('total_tasks')}, failed {d.get('failed_tasks')}, "
            f"duplicate claims {len(d.get('duplicate_claims') or [])}, audit {d.get('audit_verdict')}, "
            f"crashed workers {d.get('crashed_workers')}")


# ---- FAIL reasons ----------------------------------------------------------------------------------
def _check_reason(check: dict[str, Any], failures: dict[str, str]) -> str | None:
    """A check's reason: its own ``reason``, else its scenario's ``failures`` entry, else an evidence ``reason``."""
    name = str(check.get("id", "")).split(".", 1)[-1]
    evidence = check.get("evidence") if isinstance(check.get("evidence"), dict) else {}
    return (check.get("reason") or failures.get(name) or failures.get(str(check.get("id")))
            or evidence.get("reason") or None)


def _checks_table(checks: list[dict[str, Any]], failures: dict[str, str]) -> str:
    rows = [[c.get("id"), c.get("mode"), html.fail_reason(c.get("verdict"), _check_reason(c, failures)),
             c.get("condition", "")] for c in checks]
    failed = sum(1 for c in checks if c.get("verdict") != "PASS")
    return (html.heading(f"Every check ({len(checks)}; {failed} not PASS), with the reason for every FAIL")
            + html.table(["check", "mode", "verdict and reason", "condition"], rows))


# ---- acceptance matrix -------------------------------------------------------------------------------
def _matrix(out: Output) -> str:
    d = out.doc
    scenarios: dict[str, Any] = d["scenarios"]
    failures = {f"{s}.{k}": v for s, sc in scenarios.items() for k, v in (sc.get("failures") or {}).items()}
    blocks: list[str] = []
    if "minimal_compliance_score" in d:
        blocks.append(html.big_number(
            d["minimal_compliance_score"], "minimal_compliance_score (of 100)",
            f"grade {d.get('grade')}; swarmness_score {html.number(d.get('swarmness_score'))}; "
            f"raw {html.number(d.get('raw_minimal_compliance_score'))} before the caps",
            "info" if d.get("MINIMAL_CLOSED_LOOP_PASS") else "warn"))
    why = {"MINIMAL_CLOSED_LOOP_PASS": _closed_loop_failures, "LOCAL_SCALE_AND_BUDGET_PASS": _local_failures}
    for key in ("MINIMAL_CLOSED_LOOP_PASS", "LOCAL_SCALE_AND_BUDGET_PASS"):
        if key in d:
            blocks.append(html.banner(f"{key} = {str(d[key]).lower()}" + ("" if d[key] else f": {why[key](d)}"),
                                      "info" if d[key] else "fail"))
    for line in d.get("not_live") or []:
        blocks.append(html.banner(f"not live: {line}", "warn"))
    blocks.append(html.figure(
        plot.to_svg(_matrix_figure(d["checks"], scenarios)), "Acceptance matrix.",
        "One row per scenario or closed-loop item (with its mode: live, replay, local or not_run, and the "
        "scenario's verdict); one cell per check, numbered in the order of the table below: a tick on green is "
        "PASS, a cross on red is FAIL. S07 and S08 are FAIL unless they ran live, whatever their checks. The "
        "reason for every FAIL is in the table.", [out]))
    rows = []
    for name, sc in scenarios.items():
        reason = sc.get("verdict_reason") or "; ".join(f"{k}: {v}" for k, v in (sc.get("failures") or {}).items()) or "; ".join(
            f"{c['id'].split('.', 1)[-1]}: {_check_reason(c, failures) or 'no reason recorded'}"
            for c in d["checks"] if str(c.get("id", "")).split(".")[0] == name and c.get("verdict") != "PASS")
        if sc.get("reason") and sc.get("mode") != "not_run" and not sc.get("verdict_reason"):
            reason = f"{reason} ({sc.get('mode')}: {sc['reason']})" if reason else f"{sc.get('mode')}: {sc['reason']}"
        own = [c for c in d["checks"] if str(c.get("id", "")).split(".")[0] == name]  # as the matrix figure counts
        rows.append([name, sc.get("mode"), html.fail_reason(sc.get("verdict"), reason or sc.get("reason")),
                     f"{sum(c.get('verdict') == 'PASS' for c in own)}/{len(own)}"])
    blocks.append(html.heading("Scenarios") + html.table(["scenario", "mode", "verdict and reason", "checks PASS"],
                                                         rows))
    reasons = d.get("compliance_input_reasons") or {}
    blocks.append(html.heading("Closed loop (MINIMAL_CLOSED_LOOP_PASS needs every item)") + html.table(
        ["item", "verdict and reason"],
        [[k, html.fail_reason(v, _closed_loop_reason(k, d["checks"], failures, reasons) if v != "PASS" else None)]
         for k, v in (d.get("closed_loop") or {}).items()]))
    if d.get("compliance_inputs"):
        blocks.append(html.figure(
            plot.to_svg(_compliance_figure(d)), "Compliance inputs and score (seed section 12).",
            "Each input F01-F06, S07, S08, S09, L01, L02 is 1 (passed, live where the seed requires it) or 0; "
            "the score weighs them and caps apply when a scenario or a local item failed. The reason for each "
            "input is in the table.", [out]))
        blocks.append(html.table(["input", "value", "reason"],
                                 [[k, v, reasons.get(k, "")] for k, v in d["compliance_inputs"].items()],
                                 keys=["", "", ""]))
        blocks.append(html.table(["cap", "failed items", "cap value", "lowered the score"],
                                 [[c.get("name"), c.get("failed_items"), c.get("cap"), c.get("lowered_score")]
                                  for c in d.get("caps_applied") or []], caption="caps applied"))
    blocks.extend(_consensus_blocks(d, out))
    blocks.extend(_scale_blocks(d["checks"], out))
    blocks.append(_checks_table(d["checks"], failures))
    blocks.append(html.numbers(out))
    return html.article(_title(out), blocks, sources=[out])


def _closed_loop_reason(item: str, checks: list[dict[str, Any]], failures: dict[str, str],
                        reasons: dict[str, str]) -> str | None:
    """The reasons of the failed checks of a closed-loop item (``A02_...``), or the compliance reason (``S07_...``)."""
    own = [f"{c['id'].split('.', 1)[-1]}: {_check_reason(c, failures) or 'no reason recorded'}" for c in checks
           if str(c.get("id", "")).split(".")[0] == item and c.get("verdict") != "PASS"]
    if own:
        return "; ".join(own)
    return reasons.get(item.split("_")[0])


@plot.styled
def _matrix_figure(checks: list[dict[str, Any]], scenarios: dict[str, Any]):
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in checks:
        groups.setdefault(str(c.get("id", "")).split(".")[0], []).append(c)
    names = list(groups)
    width = max(len(v) for v in groups.values())
    fig = plot.new_figure(9, 0.8 + 0.3 * len(names))
    ax = fig.add_subplot()
    ax.grid(False)
    number = 0
    for i, name in enumerate(names):
        for j, c in enumerate(groups[name]):
            number += 1
            ok = c.get("verdict") == "PASS"
            ax.add_patch(plot.Rectangle((j + 0.05, i - 0.4), 0.9, 0.8, color=plot.GOOD if ok else plot.BAD))
            ax.text(j + 0.5, i, f"{'✓' if ok else '✗'}{number}", ha="center", va="center", fontsize=6.5,
                    color="white", fontweight="bold")
    labels, counts = [], []
    for name in names:
        mode = groups[name][0].get("mode", "")
        passed = sum(c.get("verdict") == "PASS" for c in groups[name])
        verdict = f" {scenarios[name].get('verdict')}" if name in scenarios else ""
        labels.append(f"{name[:40]} ({mode}) {passed}/{len(groups[name])}{verdict}")
        counts.append(f"{passed}/{len(groups[name])}")
    ax.set_yticks(range(len(names)), labels, fontsize=7)
    for name, count, tick in zip(names, counts, ax.get_yticklabels(), strict=True):
        if name in scenarios:  # the scenarios table below gives the same count
            plot.data_label(tick, row=name, col="checks PASS", value=count)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlim(0, width)
    ax.set_xticks([])
    for side in ("bottom", "left"):
        ax.spines[side].set_visible(False)
    return fig


@plot.styled
def _compliance_figure(d: dict[str, Any]):
    inputs = d["compliance_inputs"]
    fig = plot.new_figure(9, 2.4)
    ax, text = fig.subplots(1, 2, width_ratios=[2.2, 1])
    keys = list(inputs)
    ax.bar(range(len(keys)), [1] * len(keys), color=[plot.GOOD if inputs[k] else plot.BAD for k in keys],
           hatch=None)
    for i, k in enumerate(keys):
        plot.data_label(ax.text(i, 0.5, "1" if inputs[k] else "0", ha="center", va="center", color="white",
                                fontweight="bold"), row=k, col="value")
    ax.set_xticks(range(len(keys)), keys, fontsize=7)
    ax.set_yticks([])
    ax.set_ylim(0, 1)
    ax.grid(False)
    ax.set_title("inputs (green 1, red 0)")
    text.axis("off")
    lines = [f"{k}: {d[k]}" for k in ("swarmness_score", "raw_minimal_compliance_score", "minimal_compliance_score",
                                     "grade") if k in d]
    text.text(0, 0.9, "\n".join(lines), va="top", fontsize=9)
    return fig


# ---- consensus -------------------------------------------------------------------------------------
def _a_round(r: Any) -> bool:
    """A record the consensus figure can draw: ``leader_share`` a number, ``margin`` and ``round`` numbers or
    absent (the rounds are found in free-form check evidence, which no format checks)."""
    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    return (isinstance(r, dict) and number(r.get("leader_share"))
            and all(number(r[k]) for k in ("margin", "round") if r.get(k) is not None))


def _rounds_lists(value: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every object with a ``rounds`` list of ``leader_share``/``margin`` records, by JSON path."""
    found = []
    if isinstance(value, dict):
        rounds = value.get("rounds")
        if isinstance(rounds, list) and rounds and all(map(_a_round, rounds)):
            found.append((path, value))
        for k, v in value.items():
            if k not in ("rounds", "provenance"):
                found.extend(_rounds_lists(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            label = v.get("id") if isinstance(v, dict) and isinstance(v.get("id"), str) else f"[{i}]"
            found.extend(_rounds_lists(v, f"{path}.{label}" if path else label))
    return found


def _consensus_blocks(d: dict[str, Any], out: Output) -> list[str]:
    runs: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    found = _rounds_lists(d)
    found.sort(key=lambda item: not item[0].startswith("consensus."))  # the matrix's own record first
    for path, run in found:
        key = repr([(r.get("leader_share"), r.get("margin")) for r in run["rounds"]])
        if key in seen:  # the same consensus reported under two checks (e.g. S09 and A05)
            continue
        seen.add(key)
        runs[path] = run
    if not runs:
        return []
    blocks = [html.figure(
        plot.to_svg(_consensus_figure(runs)), "Consensus: leader share and margin per round.",
        "One column per consensus run. Top: the leader's share of the positive scores per round against "
        "threshold; bottom: the leader's margin over the second candidate against min_margin (dashed lines, "
        "when the output records them). A filled marker is a converged round (share >= threshold and margin "
        ">= min_margin).", [out])]
    missing = [_consensus_name(p) for p, r in runs.items() if "threshold" not in r or "min_margin" not in r]
    if missing:
        blocks.append(html.not_drawn("threshold / min_margin lines for " + ", ".join(missing),
                                     "these consensus records carry no threshold or min_margin"))
    rows = [[_consensus_name(p), r.get("round"), r.get("leader"), r.get("leader_share"), run.get("threshold"), r.get("margin"),
             run.get("min_margin"), _converged_cell(run, k)] for p, run in runs.items() for k, r in enumerate(run["rounds"])]
    blocks.append(html.table(["consensus", "round", "leader", "leader_share", "threshold", "margin", "min_margin",
                              "converged"], rows))
    return blocks


def _converged_cell(run: dict[str, Any], k: int) -> Any:
    """A round's ``converged``: a round before the last that has not converged yet is 'not yet' (a run
    meant to converge later, e.g. with ``min_rounds``), not a failure; only the last round's false is."""
    rounds = run["rounds"]
    value = rounds[k].get("converged")
    if value is False and k < len(rounds) - 1:
        return html.Raw(f'<span class="note">not yet (round {k + 1} of {len(rounds)})</span>')
    if value is False:
        return html.Raw('<span class="mark fail">false</span> <span class="reason">the last round did not '
                        "converge</span>")
    return value


def _consensus_name(path: str) -> str:
    """``checks.S07.multi_round_....evidence`` -> ``S07.multi_round_...``; ``consensus.S09`` -> ``S09``."""
    head, _, rest = path.partition(".")
    name = rest if head in ("checks", "consensus") and rest else path
    return name.removesuffix(".evidence")


@plot.styled
def _consensus_figure(runs: dict[str, dict[str, Any]]):
    fig = plot.new_figure(9, 3.6)
    axes = fig.subplots(2, len(runs), squeeze=False, sharex="col")
    for j, (path, run) in enumerate(runs.items()):
        rounds = run["rounds"]
        xs = [r.get("round", i + 1) for i, r in enumerate(rounds)]
        for ax, key, limit in ((axes[0, j], "leader_share", "threshold"), (axes[1, j], "margin", "min_margin")):
            ys = [r.get(key) for r in rounds]
            ax.plot(xs, ys, color=plot.ACCENT, linewidth=1)
            for x, y, r in zip(xs, ys, rounds, strict=True):
                ax.plot([x], [y], "o", color=plot.ACCENT, markerfacecolor=plot.ACCENT if r.get("converged") else "white")
            if isinstance(run.get(limit), int | float):
                ax.axhline(run[limit], color=plot.BAD, linestyle="--", linewidth=1)
                ax.text(xs[0], run[limit], f" {limit} {run[limit]:g}", color=plot.BAD, fontsize=7, va="bottom")
            ax.set_ylabel(key, fontsize=7)
            ax.set_ylim(bottom=min(0, *(y for y in ys if y is not None)))
        axes[0, j].set_title(_consensus_name(path), fontsize=7)
        axes[1, j].set_xticks(xs)
        axes[1, j].set_xlabel("round")
    return fig


# ---- L01 / L02 ---------------------------------------------------------------------------------------
def _windows(d: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
    """Minute windows: ``windows`` (reserved and actual tokens), else ``tokens_by_minute``, else the busiest."""
    if isinstance(d.get("windows"), list) and d["windows"]:
        return [(str(w.get("minute")), {k: w[k] for k in ("reserved_tokens", "actual_tokens") if k in w})
                for w in d["windows"]]
    if isinstance(d.get("tokens_by_minute"), dict) and d["tokens_by_minute"]:
        return [(str(m), {"tokens": t}) for m, t in d["tokens_by_minute"].items()]
    if isinstance(d.get("max_tokens_in_a_minute"), int | float):
        return [("busiest", {"max_tokens_in_a_minute": d["max_tokens_in_a_minute"]})]
    return []


def _l02_figure_block(d: dict[str, Any], sources: Sequence[Output]) -> list[str]:
    windows = _windows(d)
    if not windows:
        return [html.not_drawn("L02 tokens per minute window", "the output carries no windows or tokens_by_minute")]
    blocks = [html.figure(
        plot.to_svg(_l02_figure(windows, d.get("target_tpm"))), "L02: tokens per minute window against the target.",
        "Each group is one discrete minute window of the budget ledger; the bars are the tokens it holds (reserved "
        "before the model calls and, where recorded, actual after reconciliation); the dashed line is target_tpm, "
        "which no window may exceed.", sources)]
    if windows[0][0] == "busiest":
        blocks.append(html.not_drawn("every minute window", "this output records only max_tokens_in_a_minute; "
                                     "tokens_by_minute or windows would show each window"))
    return blocks


@plot.styled
def _l02_figure(windows: list[tuple[str, dict[str, float]]], target: Any):
    fig = plot.new_figure(9, 2.6)
    ax = fig.add_subplot()
    series = list(dict.fromkeys(k for _, w in windows for k in w))
    h = 0.8 / len(series)
    top = max([v for _, w in windows for v in w.values()] + ([target] if isinstance(target, int | float) else []))
    for j, s in enumerate(series):
        xs = [i - 0.4 + h * (j + 0.5) for i in range(len(windows))]
        vals = [w.get(s, 0) for _, w in windows]
        over = [isinstance(target, int | float) and v > target for v in vals]
        ax.bar(xs, vals, width=h * 0.9, color=[plot.BAD if o else plot.PALETTE[j] for o in over], label=s)
        for x, v, o in zip(xs, vals, over, strict=True):
            ax.text(x, v, f"{v:g}" + (" over" if o else ""), ha="center", va="bottom", fontsize=7,
                    color=plot.BAD if o else "black")
    if isinstance(target, int | float):
        ax.axhline(target, color="black", linestyle="--", linewidth=1)
        ax.text(1.01, target, f"target_tpm\n{target:g}", ha="left", va="center", fontsize=7,
                transform=ax.get_yaxis_transform())
    ax.set_xticks(range(len(windows)), [m for m, _ in windows])
    ax.set_xlim(-0.5 - max(0, 3 - len(windows)) / 2, len(windows) - 0.5 + max(0, 3 - len(windows)) / 2)
    ax.set_xlabel("minute window")
    ax.set_ylabel("tokens")
    ax.set_ylim(0, top * 1.2)
    ax.legend(fontsize=7, loc="upper left")
    return fig


def _l01_figure_block(d: dict[str, Any], sources: Sequence[Output]) -> list[str]:
    per_second = d.get("completions_per_second")
    if isinstance(per_second, list) and per_second:
        return [html.figure(plot.to_svg(_l01_series_figure(per_second, d.get("tasks_per_second"), d.get("run_time_s"))),
                            "L01: throughput over the run.",
                            "Tasks completed per second in each second of the run (from the ledger); the dashed line "
                            "is the run's mean tasks_per_second (completed tasks / run_time_s). A last second the run "
                            "did not fill (a run of 0.5 s has one such second) is drawn as narrow as the part of it "
                            "that ran, at its rate (its count / that part), and labelled with its count; otherwise "
                            "its count would sit far below the mean.", sources)]
    if isinstance(d.get("tasks_per_second"), int | float):
        return [html.figure(plot.to_svg(_l01_bar_figure(d)), "L01: throughput and where the time went.",
                            "Left: tasks completed per second of run time. Right: the phases of the run (setup, run, "
                            "check) in seconds.", sources),
                html.not_drawn("throughput over time", "the output records only the mean tasks_per_second; "
                               "completions_per_second would show it second by second")]
    return [html.not_drawn("L01 throughput", "the output records no tasks_per_second")]


@plot.styled
def _l01_series_figure(per_second: list[float], mean: Any, run_time: Any = None):
    fig = plot.new_figure(9, 2.6)
    ax = fig.add_subplot()
    n = len(per_second)
    widths = [1.0] * n
    if isinstance(run_time, int | float) and n - 1 < run_time < n:
        widths[-1] = run_time - (n - 1)  # the last second, only partly run
    rates = [c / w for c, w in zip(per_second, widths, strict=True)]
    ax.bar(range(n), rates, width=widths, color=plot.ACCENT, align="edge")
    if widths[-1] < 1.0:
        ax.text(n - 1 + widths[-1] / 2, rates[-1] / 2, f"{per_second[-1]:g} tasks\nin {widths[-1]:.3g} s",
                ha="center", va="center", fontsize=7, color="white", fontweight="bold")
    if isinstance(mean, int | float):
        ax.axhline(mean, color="black", linestyle="--", linewidth=1)
        ax.text(1.01, mean, f"mean\n{mean:g}/s", ha="left", va="center", fontsize=7, transform=ax.get_yaxis_transform())
    ax.set_xlim(0, sum(widths) or 1)
    ax.set_ylim(0, max([*rates, mean if isinstance(mean, int | float) else 0]) * 1.15 or 1)
    ax.set_xlabel("second of the run")
    ax.set_ylabel("tasks completed per second")
    return fig


@plot.styled
def _l01_bar_figure(d: dict[str, Any]):
    fig = plot.new_figure(9, 2.0)
    left, right = fig.subplots(1, 2)
    left.barh([0], [d["tasks_per_second"]], color=plot.ACCENT, height=0.5)
    left.text(d["tasks_per_second"], 0, f" {d['tasks_per_second']:g} tasks/s", va="center", fontsize=8)
    left.set_yticks([0], [f"{d.get('completed_tasks', '?')} of {d.get('total_tasks', '?')} tasks"])
    left.set_xlim(0, d["tasks_per_second"] * 1.5 or 1)
    phases = [(k, d[k]) for k in ("setup_time_s", "run_time_s", "check_time_s") if isinstance(d.get(k), int | float)]
    start = 0.0
    for j, (k, v) in enumerate(phases):
        right.barh([0], [v], left=start, color=plot.PALETTE[j + 1], height=0.5, label=f"{k} {v:g}")
        start += v
    right.set_yticks([])
    right.set_xlabel("seconds")
    if phases:
        right.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.35), ncols=3)
    return fig


def _scale_blocks(checks: list[dict[str, Any]], out: Output) -> list[str]:
    """L01 and L02 as the matrix reports them (their evidence, or why they did not run)."""
    blocks: list[str] = []
    for name in ("L01", "L02"):
        mine = [c for c in checks if str(c.get("id", "")).split(".")[0] == name]
        if not mine:
            continue
        evidence = {k: v for c in mine for k, v in (c.get("evidence") or {}).items()}
        if all(c.get("mode") == "not_run" for c in mine):
            blocks.append(html.banner(f"{name} did not run: {_check_reason(mine[0], {}) or 'no reason recorded'}",
                                      "fail"))
        elif name == "L01":
            blocks.extend(_l01_figure_block(evidence, [out]))
        else:
            blocks.extend(_l02_figure_block(evidence, [out]))
    return blocks


# ---- other kinds -------------------------------------------------------------------------------------
def _scenario(out: Output) -> str:
    d = out.doc
    failures = d.get("failures") if isinstance(d.get("failures"), dict) else {}
    blocks = [html.banner(f"verdict {d.get('verdict')} ({d.get('mode', '')})" + (f": {d['reason']}" if d.get("reason")
                                                                                   else ""),
                          "fail" if d.get("verdict") != "PASS" else "info")]
    checks = [{"id": c.get("name", c.get("id")), **c} for c in d["checks"]]
    blocks.extend(_consensus_blocks(d, out))
    blocks.extend(_scale_blocks([{**c, "id": f"{d.get('scenario', '')}.{c['id']}"} for c in checks], out)
                  if d.get("scenario") in ("L01", "L02") else [])
    blocks.append(_checks_table(checks, failures))
    blocks.append(html.numbers(out))
    return html.article(_title(out), blocks, sources=[out])


def _model_io(out: Output) -> str:
    d = out.doc
    blocks = []
    models = d.get("models") or []
    if models:
        blocks.append(html.figure(plot.to_svg(_model_io_figure(models)), "Model calls and tokens per model.",
                                  "Left: calls per model, ok and failed. Right: tokens in (prompt) and out "
                                  "(completion) per model, as the gateway reported them.", [out]))
    for f in d.get("failures") or []:
        blocks.append(html.banner(f"failed call: {html.fmt(f)}", "fail"))
    blocks.append(html.table(["check", "verdict and evidence"],
                             [[c.get("name"), html.fail_reason("PASS" if c.get("passed") else "FAIL", c.get("evidence"))]
                              for c in d.get("checks") or []]))
    blocks.append(html.numbers(out))
    return html.article(_title(out), blocks, sources=[out])


@plot.styled
def _model_io_figure(models: list[dict[str, Any]]):
    fig = plot.new_figure(9, 1.5 + 0.35 * len(models))
    calls, tokens = fig.subplots(1, 2, sharey=True)
    names = [str(m.get("model")) for m in models]
    ys = range(len(models))
    ok = [m.get("ok", 0) for m in models]
    failed = [m.get("failed", 0) for m in models]
    calls.barh(ys, ok, color=plot.GOOD, label="ok")
    calls.barh(ys, failed, left=ok, color=plot.BAD, hatch="//", label="failed")
    calls.set_yticks(list(ys), names)
    calls.invert_yaxis()
    calls.set_xlabel("calls")
    calls.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25 - 0.3 / max(1, len(models))), ncols=2)
    t_in = [m.get("tokens_in", 0) for m in models]
    t_out = [m.get("tokens_out", 0) for m in models]
    tokens.barh(ys, t_in, color=plot.ACCENT, label="tokens_in")
    tokens.barh(ys, t_out, left=t_in, color=plot.WARN, label="tokens_out")
    tokens.set_xlabel("tokens")
    tokens.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25 - 0.3 / max(1, len(models))), ncols=2)
    return fig


def _run(out: Output) -> str:
    d = out.doc
    blocks = []
    verdict = d.get("audit_verdict")
    if verdict is not None:
        blocks.append(html.banner(f"ledger audit {verdict}; converged {d.get('converged')}; completed "
                                  f"{d.get('completed_tasks')} of {d.get('task_count')} tasks, failed "
                                  f"{d.get('failed_tasks')}", "info" if verdict == "PASS" else "fail"))
    blocks.append(html.numbers(out))
    return html.article(_title(out), blocks, sources=[out])


def _audit(out: Output) -> str:
    d = out.doc
    blocks = [html.banner(f"verdict {d.get('verdict')}", "info" if d.get("verdict") == "PASS" else "fail")]
    series = _pheromone_series(d)
    if series:
        by_seq = isinstance(d.get("pheromone_points"), dict)
        blocks.append(html.figure(
            plot.to_svg(_pheromone_figure(series, by_seq)), "Pheromone P_t over time, from the ledger.",
            "One line per task: its P_t from the initial value at creation through every change (+task.score after "
            "a completion, -1.0 after a failure). " + ("x is the ledger seq of the event that set the value."
                                                       if by_seq else "x is the number of changes so far."),
            [out]))
        if not by_seq:
            blocks.append(html.not_drawn("P_t against ledger time", "the audit records pheromone_history (values "
                                         "only); pheromone_points (value, ledger seq, cause) would place each "
                                         "change in time"))
    else:
        blocks.append(html.not_drawn("pheromone P_t over time", "this audit was written without --history "
                                     "(pheromone_history is null); run `benchscore swarm audit RUN --history "
                                     "--output FILE`"))
    if d.get("violations"):
        blocks.append(html.heading("Violations") + html.table(
            ["task", "seq", "attempt", "agent", "reason"],
            [[v.get("task_id"), v.get("seq"), v.get("attempt"), v.get("agent"), html.fail_reason("FAIL", v.get("reason"))]
             for v in d["violations"]]))
    blocks.append(html.numbers(out))
    return html.article(_title(out), blocks, sources=[out])


def _pheromone_series(d: dict[str, Any]) -> dict[str, tuple[list[float], list[float]]]:
    points = d.get("pheromone_points")
    if isinstance(points, dict) and points:
        return {t: ([p["seq"] for p in ps], [p["P_t"] for p in ps]) for t, ps in points.items()}
    history = d.get("pheromone_history")
    if isinstance(history, dict) and history:
        return {t: (list(range(len(vs))), vs) for t, vs in history.items()}
    return {}


@plot.styled
def _pheromone_figure(series: dict[str, tuple[list[float], list[float]]], by_seq: bool):
    fig = plot.new_figure(9, 3.0)
    ax = fig.add_subplot()
    many = len(series) > 12
    for k, (task, (xs, ys)) in enumerate(series.items()):
        ax.plot(xs, ys, drawstyle="steps-post" if by_seq else "default", marker="" if many else
                plot.MARKERS[k % len(plot.MARKERS)], markersize=4, linewidth=0.8 if many else 1.2,
                color=plot.PALETTE[k % 7], alpha=0.6 if many else 1.0, label=None if many else f"task {task}")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.xaxis.set_major_locator(plot.MaxNLocator(integer=True))
    ax.set_xlabel("ledger seq" if by_seq else "change number (0 = initial P_t)")
    ax.set_ylabel("P_t")
    if not many:
        ax.legend(fontsize=7, ncols=2, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def _l01(out: Output) -> str:
    d = out.doc
    ok = d.get("L01_PASS")
    verdict = str(d.get("L01_verdict", "PASS" if ok else "FAIL"))
    reason = _l01_reason(d, verdict)
    blocks = [html.banner(f"L01 {verdict}: {d.get('completed_tasks')} of {d.get('total_tasks')} tasks, "
                          f"{d.get('total_agents')} agents, {d.get('worker_processes')} worker processes"
                          + (f"; {reason}" if reason else ""),
                          "info" if verdict == "PASS" else "warn" if verdict == "reduced" else "fail")]
    blocks.extend(_l01_figure_block(d, [out]))
    blocks.append(html.numbers(out))
    return html.article(_title(out), blocks, sources=[out])


def _l02(out: Output) -> str:
    d = out.doc
    ok = d.get("L02_PASS")
    blocks = [html.banner(f"L02 {'PASS' if ok else 'FAIL'}: max_tokens_in_a_minute {d.get('max_tokens_in_a_minute')} "
                          f"of target_tpm {d.get('target_tpm')}, budget_utilization {d.get('budget_utilization')}",
                          "info" if ok else "fail")]
    blocks.extend(_l02_figure_block(d, [out]))
    blocks.append(html.numbers(out))
    return html.article(_title(out), blocks, sources=[out])
