"""mira in the HTML report: per case Task Success, Reliability, Pass@1/Stable@3/Complete@3; every
repetition's time against its case's T_soft/T_hard; statuses; deviations, always shown first.

Reads the outputs of ``mira score`` (kind ``score``) and ``mira project`` (kind ``public``, the
public projection: no per-repetition times) as plain dicts; only :mod:`benchscore.common` and
matplotlib are used. Credentials in a case definition are never copied into the report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benchscore.common import html, plot
from benchscore.common.html import Output

TITLE = "mira: Mira agent benchmark"
KINDS = {"score": "mira score", "public": "mira project"}


def output_formats() -> dict[str, type]:
    """kind -> the format each output is validated against before it is drawn (the report's hook)."""
    from .formats import PublicProjection, ScoreOutput

    return {"score": ScoreOutput, "public": PublicProjection}

AT_METRICS = ("pass_at_1", "stable_at_3", "complete_at_3")
AT_LABELS = {"pass_at_1": "Pass@1", "stable_at_3": "Stable@3", "complete_at_3": "Complete@3"}
#: statuses in the order of the seed's "任务结果状态", with a marker each (never colour alone)
STATUS_STYLE = {
    "pass": ("o", plot.GOOD),
    "late_complete": ("s", plot.WARN),
    "partial": ("D", plot.PALETTE[4]),
    "fail": ("X", plot.BAD),
    "post_cutoff_completion": ("v", plot.PALETTE[3]),
}
OMIT = ("credentials",)
OMIT_NOTE = "Case definitions' credentials are never copied into the report."


def kind_of(doc: Any) -> str | None:
    """``score`` or ``public`` from ``provenance.metric_id`` (``mira:ID@VERSION/score|public``) and the shape."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return None
    metric = str(doc["provenance"].get("metric_id", ""))
    if not metric.startswith("mira:") or not isinstance(doc.get("cases"), list):
        return None
    if metric.endswith("/score") and isinstance(doc.get("repetitions"), list):
        return "score"
    if metric.endswith("/public"):
        return "public"
    return None


def render(outputs: Sequence[Output]) -> list[str]:
    return [_one(out) for out in outputs]


def _value(v: Any) -> Any:
    return v.get("value") if isinstance(v, dict) and "value" in v else v


def _interval(v: Any) -> str:
    """A metric's 95 % interval as text (issue 16): ``[low, high] method``, its reason, or ``-``."""
    if not isinstance(v, dict) or "ci_method" not in v:
        return "-"
    if v.get("ci95") is None:
        return f"none ({v.get('ci_reason')})"
    return f"[{v['ci95'][0]:.4g}, {v['ci95'][1]:.4g}] {v['ci_method']}"


def _cases(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each case as ``{case_id, status, scoring_class, metrics, t_soft, t_hard, reps, excluded, missing}``."""
    reps_by_case: dict[str, list[dict[str, Any]]] = {}
    for r in doc.get("repetitions") or []:
        reps_by_case.setdefault(r.get("case_id"), []).append(r)
    out = []
    for c in doc["cases"]:
        metrics = {k: _value(v) for k, v in (c.get("metrics") or c.get("results") or {}).items()}
        definition = c.get("definition") or {}
        reps = reps_by_case.get(c.get("case_id")) or c.get("repetitions") or []
        excluded = dict(c.get("repetitions_excluded") or {})
        for r in reps:  # the public projection says only that a repetition is not used (``used: false``)
            if r.get("used") is False:
                excluded.setdefault(_rid(c.get("case_id"), r), "not used (the projection records no reason)")
        out.append({
            "case_id": c.get("case_id"), "status": c.get("status"), "scoring_class": c.get("scoring_class"),
            "metrics": metrics, "t_soft": c.get("t_soft_s", definition.get("t_soft_s")), "t_hard": c.get("t_hard_s"),
            "reps": reps, "excluded": excluded, "missing": c.get("missing"),
            "exclusions_recorded": "repetitions_excluded" in c or any("used" in r for r in reps),
        })
    return out


def _rid(case_id: Any, r: dict[str, Any]) -> str:
    return r.get("id") or f"{case_id}#{r.get('repetition')}"


def _counted_as(c: dict[str, Any], r: dict[str, Any]) -> str:
    """What the status figure counts a repetition as: its status, or ``excluded: why`` when the case does not use it."""
    why = c["excluded"].get(_rid(c["case_id"], r))
    return f"excluded: {why}" if why else (r.get("status") or "no status")


def _ts(m: dict[str, Any]) -> list[Any]:
    """The Task Success a case shows: timed, or its untimed one (marked)."""
    if m.get("task_success") is None and m.get("untimed_task_success") is not None:
        return [f"{m['untimed_task_success']:.3f} untimed"]
    return [m.get("task_success")]


def summary_rows(out: Output) -> list[html.SummaryRow]:
    """The summary table's row of a mira score or public projection (the report's hook)."""
    doc = out.doc
    overall = doc.get("overall") or {}
    public_intervals = ((doc.get("intervals") or {}).get("overall") or {}) if out.kind == "public" else {}

    def head(key: str, name: str, unit: str = "") -> html.Headline:
        v = overall.get(key)
        rec = v if isinstance(v, dict) and "ci_method" in v else public_intervals.get(key)
        return html.Headline(name, _value(v), unit, rec)

    missing = "; ".join(f"case {m.get('case_id')}: {m.get('missing')}" for m in doc.get("missing") or [])
    devs = doc.get("deviations") or []
    note = f"{len(devs)} methodology deviation(s) recorded: {', '.join(str(d.get('id')) for d in devs)}" if devs else None
    judge = doc.get("judge") if isinstance(doc.get("judge"), dict) else None
    if judge and judge.get("status") in ("not_calibrated", "not_decided_by_a_measured_judge", "measured"):
        said = "judge not calibrated" if judge["status"] == "not_calibrated" else (
            "judge measured" if judge["status"] == "measured" else "judged criteria not decided by a measured judge")
        note = f"{note}; {said}" if note else said
    status = str(doc.get("status"))
    reason = missing or (f"status {status}" if status != "complete" else None)
    if reason and note:
        reason = f"{reason} ({note})"
    return [html.SummaryRow(
        out, f"contract {doc.get('benchmark_id')}@{doc.get('contract_version')}, {len(doc.get('cases') or [])} cases",
        [head("task_success", "Task Success"), head("reliability", "Reliability", "%"),
         head("pass_at_1", "Pass@1", "%")], status, reason or note,
        what="score" if out.kind == "score" else "public projection")]


def _one(out: Output) -> str:
    doc = out.doc
    cases = _cases(doc)
    blocks: list[str] = []
    if doc.get("status") != "complete":
        blocks.append(html.banner(f"status {doc.get('status')}: overall metrics that need every case are null.",
                                  "warn"))
    for m in doc.get("missing") or []:
        blocks.append(html.banner(f"case {m.get('case_id')} incomplete: {m.get('missing')}", "warn"))
    devs = doc.get("deviations") or []
    if devs:
        items = [html.Raw(f"<strong>{html.esc(d.get('id'))}</strong> (affects {html.esc(html.fmt(d.get('affects')))}): "
                          f"{html.esc(d.get('text'))}") for d in devs]
        blocks.append(html.Raw('<div class="deviation"><h4>Methodology deviations recorded with this result '
                               f"({len(devs)})</h4>{html.bullet_list(items)}</div>"))
    else:
        blocks.append(html.paragraph("Methodology deviations: none recorded with this result."))
    blocks.append(html.figure(
        plot.to_svg(_metrics_figure(cases)), "Per case: Task Success, Reliability, Pass@1 / Stable@3 / Complete@3.",
        "Task Success is the mean of raw_success x timing_credit over the case's used repetitions (0-1; a "
        "diagnostic_untimed case shows its untimed Task Success, marked 'untimed'); Reliability is on-time "
        "passes / valid comparable repetitions x 100. The grid shows yes/no per case, n/a where the metric is "
        "undefined (a case not planning 3 repetitions, or incomplete). A hatched bar or 'incomplete' marks a case "
        "without its planned repetitions.", [out]))
    blocks.append(html.table(["case", "status", "Task Success", "Reliability (%)", *AT_LABELS.values()],
                             [[c["case_id"], c["status"], *_ts(c["metrics"]), c["metrics"].get("reliability"),
                               *(c["metrics"].get(k) for k in AT_METRICS)] for c in cases], caption="per case",
                             keys=["", "status", "", "", "", "", ""]))
    overall = doc.get("overall") or {}
    blocks.append(html.table(["metric", "overall (automated_scored, pooled)", "95 % interval (cases are the unit)"],
                             [(k, _value(v), _interval(v)) for k, v in overall.items()], caption="overall"))
    blocks.extend(_judge_blocks(doc.get("judge")))
    if doc.get("repetitions") is not None:
        timed = [c for c in cases if c["t_soft"] and any(r.get("elapsed_s") is not None for r in c["reps"])]
        if timed:
            blocks.append(html.figure(
                plot.to_svg(_timing_figure(timed)), "Each repetition's time against T_soft and T_hard.",
                "One row per case; x is elapsed time / the case's T_soft, so T_soft is at 1 and T_hard at "
                "T_hard / T_soft. The shading marks on time (up to T_soft), late (up to T_hard) and past T_hard. "
                "Each marker is one repetition, numbered, shaped and coloured by its status; a hollow marker is a "
                "repetition the case does not use (see the table for why); repetitions without a completion time "
                "are listed at the right edge.", [out]))
        untimed = [c["case_id"] for c in cases if not c["t_soft"]]
        if untimed:
            blocks.append(html.paragraph(f"Cases without T_soft (diagnostic_untimed, no timing credit): "
                                         f"{', '.join(map(str, untimed))}; their times are in the table below."))
    else:
        blocks.append(html.not_drawn("repetition times against T_soft/T_hard",
                                     "the public projection carries no elapsed times (draw the mira score output)"))
    blocks.append(html.figure(
        plot.to_svg(_status_figure(cases)), "Repetition statuses per case.",
        "How many of each case's repetitions ended in each status (pass, late_complete, partial, fail, "
        "post_cutoff_completion); repetitions the case does not use are counted apart, by the reason they are "
        "excluded (grey), whatever their status. The table below says what each repetition is counted as.", [out],
        counts=("case", "counted as")))
    blocks.append(_repetition_table(doc, cases))
    blocks.append(html.numbers(out, omit=OMIT, note=OMIT_NOTE))
    return html.article(f"{out.label}: {out.kind} ({KINDS[out.kind]})", blocks, sources=[out])


def _judge_blocks(judge: Any) -> list[Any]:
    """The judge beside the score (issue 36): its status in words, its agreement with known verdicts, and the
    corrected Task Success and Reliability beside the contract's own numbers."""
    if not isinstance(judge, dict):
        return []
    status = judge.get("status")
    model = f" {judge['model']}" if judge.get("model") else ""
    level = "info" if status in ("measured", "no_judge_criteria") else "warn"
    blocks: list[Any] = [html.heading("The judge"), html.banner(f"judge{model}: {judge.get('words')}", level)]
    agreement = judge.get("agreement")
    if isinstance(agreement, dict):
        if agreement.get("always_answers"):
            blocks.append(html.banner(f"this judge always answers {agreement['always_answers']}", "warn"))
        t = agreement.get("table") or {}
        blocks.append(html.table(["known verdict", "judged pass", "judged fail"],
                                 [("pass", t.get("true_pass"), t.get("false_fail")),
                                  ("fail", t.get("false_pass"), t.get("true_fail"))],
                                 caption=f"{agreement.get('known')} known verdicts against the judge's "
                                         f"({agreement.get('judge_failed')} judge_failed apart)"))
        blocks.append(html.table(
            ["statistic", "value", "95 % interval"],
            [*((name, _value(agreement.get(name)), _interval(agreement.get(name)))
               for name in ("sensitivity", "specificity", "kappa")),
             ("percent agreement", agreement.get("percent_agreement"), "-")], caption="agreement with known verdicts"))
    corrected = judge.get("corrected")
    if isinstance(corrected, dict):
        blocks.append(html.table(
            ["metric", "contract's number", "corrected for the judge's errors", "95 % interval", "known", "judge only"],
            [(name, c.get("contract_value"), c.get("value"), _interval(c), c.get("known"), c.get("judge_only"))
             for name, c in corrected.items()],
            caption="corrected beside the contract's numbers (which stay as the contract computes them)"))
    return blocks


def _repetition_table(doc: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    rows = []
    for c in cases:
        for r in c["reps"]:
            rid = _rid(c["case_id"], r)
            why = c["excluded"].get(rid)
            used = f"excluded: {why}" if why else "used" if c["exclusions_recorded"] else "not recorded"
            rows.append([rid, c["case_id"], _counted_as(c, r), r.get("execution_mode"), r.get("comparability"),
                         r.get("status"), r.get("timing_band"),
                         r.get("timing_credit"), r.get("official_task_success"), r.get("elapsed_s"),
                         f"{html.fmt(c['t_soft'])} / {html.fmt(c['t_hard'])}", used,
                         ", ".join(r.get("hard_fail_rules") or []) or "-",
                         "; ".join(f"{g.get('severity')} {g.get('kind')}: {g.get('detail')}"
                                   for g in r.get("governance_violations") or []) or "-",
                         r.get("derivation", "-")])
    return html.heading("Repetitions") + html.table(
        ["repetition", "case", "counted as", "mode", "comparability", "status", "timing_band", "timing_credit",
         "official_task_success", "elapsed_s", "T_soft / T_hard s", "used by the case", "hard-fail rules",
         "governance", "derivation"], rows,
        keys=["", "", "", "", "comparability", "status", "", "", "", "", "", "", "", "", ""],
        below=["hard-fail rules", "governance", "derivation"])


@plot.styled
def _metrics_figure(cases: list[dict[str, Any]]):
    names = [str(c["case_id"]) for c in cases]
    n = len(cases)
    fig = plot.new_figure(9, 1.0 + 0.42 * max(3, n))
    ax_ts, ax_rel, ax_at = fig.subplots(1, 3, sharey=True, width_ratios=[1.2, 1.2, 1.15])
    for i, c in enumerate(cases):
        m = c["metrics"]
        incomplete = c["status"] != "formal"
        hatch = "xx" if incomplete else ""
        (ts_cell,) = _ts(m)
        ts, untimed = m.get("task_success"), False
        if ts is None and m.get("untimed_task_success") is not None:
            ts, untimed = m["untimed_task_success"], True
        if ts is None:
            ax_ts.text(0.02, i, c["status"] or "n/a", va="center", fontsize=8, color=plot.BAD)
        else:
            colour = plot.NEUTRAL if untimed else plot.metric_colour("task_success")
            ax_ts.barh(i, ts, color=colour, hatch=hatch, edgecolor="black", linewidth=0.4, height=0.6)
            plot.data_label(ax_ts.text(ts + 0.02, i, f"{ts:.3f}" + (" untimed" if untimed else ""), va="center",
                                       fontsize=7), row=str(c["case_id"]), col="Task Success",
                            value=ts_cell if isinstance(ts_cell, str) else None)
        rel = m.get("reliability")
        if rel is None:
            ax_rel.text(2, i, "n/a" if not incomplete else str(c["status"]), va="center", fontsize=8,
                        color=plot.BAD if incomplete else "black")
        else:
            ax_rel.barh(i, rel, color=plot.metric_colour("reliability"), hatch=hatch, edgecolor="black",
                        linewidth=0.4, height=0.6)
            plot.data_label(ax_rel.text(rel + 2, i, f"{rel:.1f}", va="center", fontsize=7), row=str(c["case_id"]),
                            col="Reliability (%)")
        for j, key in enumerate(AT_METRICS):
            v = m.get(key)
            text, colour = ("yes", plot.GOOD) if v is True else ("no", plot.BAD) if v is False else ("n/a", "#eeeeee")
            ax_at.add_patch(plot.Rectangle((j - 0.45, i - 0.4), 0.9, 0.8, color=colour))
            plot.data_label(ax_at.text(j, i, text, ha="center", va="center", fontsize=8,
                                       color="white" if v in (True, False) else "black", fontweight="bold"),
                            row=str(c["case_id"]), col=AT_LABELS[key],
                            value="true" if v is True else "false" if v is False else "-")
    ax_ts.set_yticks(range(n), [f"{nm} ({c['status']})" if c["status"] != "formal" else nm
                                for nm, c in zip(names, cases, strict=True)])
    ax_ts.set_ylim(n - 0.5, -0.5)
    plot.value_axis(ax_ts, "x", 0, 1, room=0.32, step=0.25)
    ax_ts.set_title("Task Success (0-1)")
    plot.value_axis(ax_rel, "x", 0, 100, room=30, step=25)
    ax_rel.set_title("Reliability (%)")
    ax_at.set_xlim(-0.5, len(AT_METRICS) - 0.5)
    ax_at.set_xticks(range(len(AT_METRICS)), [AT_LABELS[k].replace("@", "\n@") for k in AT_METRICS], fontsize=8)
    ax_at.xaxis.tick_top()
    ax_at.grid(False)
    for side in ("left", "bottom"):
        ax_at.spines[side].set_visible(False)
    return fig


_MULTIPLE = re.compile(r"([0-9]+(?:\.[0-9]+)?) x T_soft")


def _band_edges(cases: list[dict[str, Any]]) -> list[float]:
    """The multiples of T_soft that the repetitions' timing_band labels name (e.g. 1.25, 1.5)."""
    found = {float(x) for c in cases for r in c["reps"] for x in _MULTIPLE.findall(str(r.get("timing_band") or ""))}
    return sorted(found)


@plot.styled
def _timing_figure(cases: list[dict[str, Any]]):
    n = len(cases)
    ratios = [r["elapsed_s"] / c["t_soft"] for c in cases for r in c["reps"] if r.get("elapsed_s") is not None]
    hard = [c["t_hard"] / c["t_soft"] for c in cases if c["t_hard"]]
    right = max([2.2, *ratios, *(h * 1.1 for h in hard)]) * 1.08
    fig = plot.new_figure(9, 1.2 + 0.55 * n)
    ax = fig.add_subplot()
    ax.grid(False)
    for i, c in enumerate(cases):
        h = c["t_hard"] / c["t_soft"] if c["t_hard"] else None
        ax.barh(i, 1, left=0, height=0.8, color="#d9f0e3", zorder=0)
        if h:
            ax.barh(i, h - 1, left=1, height=0.8, color="#fde8c8", zorder=0)
            ax.barh(i, right - h, left=h, height=0.8, color="#f9d3cc", zorder=0)
            ax.plot([h, h], [i - 0.4, i + 0.4], color=plot.BAD, linewidth=1.2)
            ax.text(h, i - 0.42, f"T_hard {c['t_hard']:g}s", fontsize=6.5, ha="center", va="bottom", color=plot.BAD)
        ax.plot([1, 1], [i - 0.4, i + 0.4], color="black", linewidth=1.2)
        ax.text(1, i - 0.42, f"T_soft {c['t_soft']:g}s", fontsize=6.5, ha="center", va="bottom")
        no_time = []
        for k, r in enumerate(c["reps"]):
            rid = r.get("id") or f"{c['case_id']}#{r.get('repetition')}"
            label = str(r.get("repetition", k + 1))
            if r.get("elapsed_s") is None:
                no_time.append(f"#{label} {r.get('status') or r.get('comparability')}")
                continue
            marker, colour = STATUS_STYLE.get(r.get("status"), ("P", plot.NEUTRAL))
            used = rid not in c["excluded"]
            x = r["elapsed_s"] / c["t_soft"]
            y = i + ((k % 3) - 1) * 0.18
            ax.scatter([x], [y], marker=marker, s=48, zorder=3, edgecolors=colour,
                       facecolors=colour if used else "white", linewidths=1.4)
            ax.text(x, y + 0.1, label, fontsize=6.5, ha="center", va="top", zorder=4)
        if no_time:
            ax.text(right * 0.99, i + 0.25, "no time: " + ", ".join(no_time), fontsize=6.5, ha="right",
                    va="center", color=plot.BAD)
    for e in _band_edges(cases):
        ax.axvline(e, color="black", linewidth=0.5, linestyle=":")
    handles = [plot.Line2D([], [], marker=m, color=col, linestyle="", label=s)
               for s, (m, col) in STATUS_STYLE.items()]
    handles.append(plot.Line2D([], [], marker="o", markerfacecolor="white", color="black",
                                                linestyle="", label="not used by the case"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.4 / n), ncols=6, fontsize=7)
    ax.set_yticks(range(n), [str(c["case_id"]) for c in cases])
    ax.set_ylim(n - 0.5, -0.6)
    ax.set_xlim(0, right)
    ax.set_xlabel("elapsed / T_soft (dotted: the band edges named by the repetitions' timing_band)")
    return fig


@plot.styled
def _status_figure(cases: list[dict[str, Any]]):
    n = len(cases)
    fig = plot.new_figure(9, 1.0 + 0.4 * max(3, n))
    ax = fig.add_subplot()
    reasons = sorted({why for c in cases for why in c["excluded"].values()})
    labels = [*STATUS_STYLE, "no status", *(f"excluded: {w}" for w in reasons)]
    labels += sorted({_counted_as(c, r) for c in cases for r in c["reps"]} - set(labels))  # any other status
    colours = [col for _, col in STATUS_STYLE.values()] + ["#ffffff"] + ["#bbbbbb"] * (len(labels) - len(STATUS_STYLE) - 1)
    hatches = [""] * len(STATUS_STYLE) + ["--"] + ["//", "..", "xx", "++", "oo"] * len(labels)
    left = [0] * n
    for label, colour, hatch in zip(labels, colours, hatches, strict=False):
        counts = [sum(_counted_as(c, r) == label for r in c["reps"]) for c in cases]
        if any(counts):
            ax.barh(range(n), counts, left=left, color=colour, hatch=hatch, edgecolor="#555555", linewidth=0.4,
                    label=label, height=0.6)
            for i, k in enumerate(counts):
                if k:
                    plot.data_label(ax.text(left[i] + k / 2, i, str(k), ha="center", va="center", fontsize=8),
                                    row=str(cases[i]["case_id"]), series=label, count=k)
            left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.set_yticks(range(n), [str(c["case_id"]) for c in cases])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("repetitions")
    ax.set_xlim(0, max([1, *left]) + 0.5)
    ax.xaxis.set_major_locator(plot.MaxNLocator(integer=True))
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
    return fig
