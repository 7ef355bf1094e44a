"""tcsexam in the HTML report: the index and track means per model, per-task scores, the z-scores of
solver instances against the fixed reference.

Reads the outputs of ``tcsexam score`` (kind ``index``) and ``tcsexam solver-score`` (kind
``solver-score``) as plain dicts; only :mod:`benchscore.common` and matplotlib are used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchscore.common import html, plot
from benchscore.common.html import Output

TITLE = "tcsexam: TCSExam composite index and solver scores"
#: kind -> the command that writes it
KINDS = {"index": "tcsexam score", "solver-score": "tcsexam solver-score"}


def output_formats() -> dict[str, type]:
    """kind -> the format each output is validated against before it is drawn (the report's hook)."""
    from .formats import IndexOutput, SolverScoreOutput

    return {"index": IndexOutput, "solver-score": SolverScoreOutput}

TRACKS = ("theorem", "solver", "construction", "conjecture")
#: z beyond +/- this is drawn at the edge with a count (Phi(6) = 1 - 1e-9)
Z_SHOWN = 6.0


def kind_of(doc: Any) -> str | None:
    """``index`` or ``solver-score`` from ``provenance.metric_id`` and the shape; None otherwise."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return None
    metric = str(doc["provenance"].get("metric_id", ""))
    if metric.startswith("tcsexam-index") and isinstance(doc.get("models"), dict):
        return "index"
    if metric == "fixed_reference_relative" and isinstance(doc.get("instances"), dict) and "relative_score" in doc:
        return "solver-score"
    return None


def render(outputs: Sequence[Output]) -> list[str]:
    blocks: list[str] = []
    for out in outputs:
        if out.kind == "index":
            blocks.append(_index(out))
    solver = [o for o in outputs if o.kind == "solver-score"]
    if solver:
        blocks.append(_solver_scores(solver))
    return blocks


def summary_rows(out: Output) -> list[html.SummaryRow]:
    """The summary table's rows (the report's hook): one per model of an index, one per solver-score output."""
    d = out.doc
    if out.kind == "index":
        rows = []
        for m, r in d["models"].items():
            problems = [str(p) for p in r.get("problems") or []]
            reason = (problems[0] + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else "")
                      if problems else None)
            if r.get("status") != "complete" and not reason:
                reason = f"the cohort is {d.get('status')}"
            rows.append(html.SummaryRow(
                out, f"model {m}, suite {d.get('suite')}",
                [html.Headline("index", r.get("index"), "", (r.get("intervals") or {}).get("index"))],
                str(r.get("status")), reason, what="index"))
        return rows
    bad = sum(1 for i in d["instances"].values() if i.get("status") != "ok")
    note = f"{bad} of {len(d['instances'])} instance(s) not ok (they score 0)" if bad else None
    return [html.SummaryRow(
        out, f"task {d.get('task')} ({d.get('direction')}), reference {d.get('reference_id')}",
        [html.Headline("relative_score", d.get("relative_score"), "", (d.get("intervals") or {}).get("relative_score"))],
        "complete", note, what="solver-score")]


# ---- index ---------------------------------------------------------------------------------------
_STATUS_HATCH = {"complete": "", "provisional": "//", "incomplete": "xx"}


def _index(out: Output) -> str:
    doc = out.doc
    models: dict[str, Any] = doc["models"]
    blocks: list[str] = []
    status = doc.get("status")
    if status != "complete":
        blocks.append(html.banner(f"cohort status: {status}. A model's index is null unless complete or "
                                  "provisional; provisional rests on attempts adopted provisionally.", "warn"))
    blocks.append(html.figure(plot.to_svg(_index_figure(models)), "Index and track means per model.",
                              "Left: the index 30P + 30S + 30C + 10O (0-100) of each model; a hatched bar is "
                              "provisional (//) or incomplete (xx), and a model without an index says so. "
                              "Right: the four track means (P theorem, S solver, C construction, O conjecture) "
                              "that the index weighs; a missing track mean is marked 'none'. Black error bars: "
                              "95 % intervals (bootstrap over tasks within tracks; none for a track of one task).",
                              [out]))
    blocks.append(html.table(["model", "status", "index", *TRACKS],
                             [[m, r.get("status"), r.get("index"), *(r.get("track_means", {}).get(t) for t in TRACKS)]
                              for m, r in models.items()], caption="index and track means"))
    if any(r.get("task_means") for r in models.values()):
        blocks.append(html.figure(plot.to_svg(_task_figure(models)), "Per-task relative scores.",
                                  "Each task's mean score per model, by track (the track mean is the mean of "
                                  "these). A white cell hatched in vermillion (red) and marked 'missing' is a planned "
                                  "task without a valid result; it is listed under 'missing and excluded' below.",
                                  [out]))
    blocks.append(_missing(models))
    blocks.append(html.numbers(out))
    return html.article(f"{out.label}: index (tcsexam score)", blocks, sources=[out])


def _missing(models: dict[str, Any]) -> str:
    rows = []
    for m, r in models.items():
        for track, tasks in (r.get("task_means") or {}).items():
            for task, value in tasks.items():
                if value is None:
                    rows.append([m, "missing task", f"{track}/{task}", "no valid adopted result"])
        for p in r.get("problems") or []:
            rows.append([m, "problem", "", p])
        for e in r.get("excluded_attempts") or []:
            where = f"{e.get('track')}/{e.get('item')} attempt {e.get('attempt')} (line {e.get('line')})"
            rows.append([m, "excluded attempt", where, e.get("reason") or "excluded without a recorded reason"])
    if not rows:
        return html.paragraph("No missing task, problem or excluded attempt.")
    return html.heading("Missing and excluded") + html.table(["model", "what", "where", "reason"], rows)


def _ci(result: dict[str, Any], *keys: str) -> list[float] | None:
    """The ``ci95`` of ``result["intervals"][keys...]`` (issue 16), or None."""
    node: Any = result.get("intervals")
    for k in keys:
        node = node.get(k) if isinstance(node, dict) else None
    return node.get("ci95") if isinstance(node, dict) else None


@plot.styled
def _index_figure(models: dict[str, Any]):
    names = list(models)
    n = len(names)
    fig = plot.new_figure(9, 1.3 + 0.55 * max(2, n))
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.5], sharey=True)
    for i, m in enumerate(names):
        r = models[m]
        st = r.get("status", "")
        if r.get("index") is None:
            left.text(2, i, f"no index ({st})", va="center", fontsize=8, color=plot.BAD, fontweight="bold")
            continue
        left.barh(i, r["index"], height=0.6, color=plot.ACCENT if st == "complete" else plot.WARN,
                  hatch=_STATUS_HATCH.get(st, "xx"), edgecolor="black", linewidth=0.5)
        ci = _ci(r, "index")
        if ci:
            plot.error_bar(left, i, r["index"], ci)
        plot.data_label(plot.label_beside(left, max(r["index"], ci[1] if ci else 0), i,
                                          html.number(r["index"]) + ("" if st == "complete" else f" ({st})"),
                                          fontsize=8), row=m, col="index", value=html.number(r["index"]))
    left.set_yticks(range(n), [f"{m}\n({models[m].get('status')})" for m in names])
    left.set_ylim(n - 0.5, -0.5)
    plot.value_axis(left, "x", 0, 100, room=28, step=25)
    left.set_xlabel("index (0-100)")
    left.set_title("index")
    h = 0.8 / len(TRACKS)
    top = 1.0
    for j, t in enumerate(TRACKS):
        for i, m in enumerate(names):
            v = (models[m].get("track_means") or {}).get(t)
            pos = i - 0.4 + h * (j + 0.5)
            if v is None:
                right.text(0.01, pos, f"{t}: none", va="center", fontsize=7, color=plot.BAD, fontweight="bold")
                continue
            right.barh(pos, v, height=h * 0.9, color=plot.metric_colour(t),
                       hatch=_STATUS_HATCH.get(models[m].get("status", ""), "xx"), edgecolor="white", linewidth=0.3)
            ci = _ci(models[m], "track_means", t)
            if ci:
                plot.error_bar(right, pos, v, ci)
            plot.data_label(plot.label_beside(right, max(v, ci[1] if ci else v), pos, html.number(v), fontsize=6.5),
                            row=m, col=t)
            top = max(top, v, ci[1] if ci else v)
    plot.value_axis(right, "x", 0, top, room=top * 0.16)
    right.set_xlabel("track mean")
    right.set_title("track means")
    # the swatches are the tracks' own colours, never a model's bar (whose hatching marks its status)
    drawn = [t for t in TRACKS if any((models[m].get("track_means") or {}).get(t) is not None for m in names)]
    handles = [plot.Rectangle((0, 0), 1, 1, facecolor=plot.metric_colour(t), label=t) for t in drawn]
    if handles:
        fig.legend(handles=handles, loc="outside lower right", ncols=4, fontsize=7)
    return fig


@plot.styled
def _task_figure(models: dict[str, Any]):
    names = list(models)
    columns: list[tuple[str, str]] = []
    for r in models.values():
        for track, tasks in (r.get("task_means") or {}).items():
            for task in tasks:
                if (track, task) not in columns:
                    columns.append((track, task))
    fig = plot.new_figure(9, 1.9 + 0.45 * len(names))
    ax = fig.add_subplot()
    ax.grid(False)
    values = [[(models[m].get("task_means") or {}).get(tr, {}).get(tk) for tr, tk in columns] for m in names]
    top = max([1.0] + [v for row in values for v in row if v is not None])
    grid = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=plot.colormaps["viridis"].with_extremes(bad="white"),
                      vmin=0, vmax=top, aspect="auto")
    fig.colorbar(image, ax=ax, shrink=0.8, pad=0.01, label="task mean")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            if v is None:
                ax.add_patch(plot.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="xxx", edgecolor=plot.BAD,
                                            linewidth=0))
                ax.text(j, i, "missing", ha="center", va="center", fontsize=6, rotation=90, color=plot.BAD,
                        fontweight="bold", bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
            else:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="black" if v > 0.55 * top else "white")
    ax.set_yticks(range(len(names)), names)
    ax.set_xticks(range(len(columns)), [tk for _, tk in columns], rotation=60, ha="right", fontsize=7)
    for j, (tr, _) in enumerate(columns):
        if j == 0 or columns[j - 1][0] != tr:
            if j:
                ax.axvline(j - 0.5, color="white", linewidth=3)
            ax.text(j - 0.45, -0.6, tr, fontsize=8, fontweight="bold", va="bottom")
    return fig


# ---- solver scores -------------------------------------------------------------------------------
def _solver_scores(outputs: Sequence[Output]) -> str:
    ordered = sorted(outputs, key=lambda o: (str(o.doc.get("task")), o.label))
    blocks: list[str] = [html.figure(
        plot.to_svg(_solver_figure(ordered)), "Per-instance z against the fixed reference, and relative scores.",
        "One row per solver-score output (grouped by task). Left: each dot is an instance, z = (A - mu) / scale "
        "for a maximised objective and (mu - A) / scale for a minimised one, with mu and scale from the "
        "reference's runs; the grey box spans the middle half of the row's z and the black tick is its median. "
        f"A triangle at an edge counts the instances beyond z = +/-{Z_SHOWN:g} (a solve task's reference can have a "
        "tiny scale, so z is huge); a red x at the far left counts instances without a value (status not ok), "
        "which score 0. Right: the "
        "output's relative_score, the mean of the per-instance scores Phi(z), with its 95 % interval over the "
        "scored instances (black).", ordered)]
    rows = []
    for o in ordered:
        d = o.doc
        bad = {k: v.get("status") for k, v in d["instances"].items() if v.get("status") != "ok"}
        rows.append([o.label, d.get("task"), d.get("direction"), d.get("relative_score"),
                     d.get("scored_instance_count"), len(d["instances"]),
                     ", ".join(f"{k} ({s})" for k, s in bad.items()) or "-",
                     ", ".join(d.get("unscored_instances") or []) or "-", d.get("reference_id")])
    blocks.append(html.table(["output", "task", "direction", "relative_score", "scored", "instances",
                              "instances not ok (status)", "unscored_instances", "reference_id"], rows,
                             caption="solver-score outputs"))
    blocks.extend(html.numbers(o, folded=len(ordered) > 3) for o in ordered)  # the table above summarises them
    return html.article(f"solver scores ({len(outputs)} tcsexam solver-score outputs)", blocks, sources=ordered)


def _short_labels(labels: Sequence[str]) -> list[str]:
    """Labels without the folders they all share."""
    parts = [label.split("/") for label in labels]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    return ["/".join(p[common:]) for p in parts]


@plot.styled
def _solver_figure(outputs: Sequence[Output]):
    n = len(outputs)
    fig = plot.new_figure(10, 1.6 + 0.34 * n)
    left, right = fig.subplots(1, 2, sharey=True, width_ratios=[2.6, 1])
    zs = [[float(i["z"]) for i in o.doc["instances"].values() if i.get("z") is not None] for o in outputs]
    lo, hi = -Z_SHOWN - 1.2, Z_SHOWN + 0.9
    for r, (o, row) in enumerate(zip(outputs, zs, strict=True)):
        if row:
            q1, med, q3 = np.clip(np.percentile(row, [25, 50, 75]), -Z_SHOWN, Z_SHOWN)
            left.barh(r, q3 - q1, left=q1, height=0.6, color="#e6e6e6", edgecolor=plot.NEUTRAL, linewidth=0.5)
            left.plot([med, med], [r - 0.3, r + 0.3], color="black", linewidth=1.2)
            inside = [z for z in row if abs(z) <= Z_SHOWN]
            left.scatter(inside, [r + ((k * 7) % 9 - 4) * 0.04 for k in range(len(inside))], s=10,
                         color=plot.ACCENT, zorder=3)
            for sign, marker in ((1, ">"), (-1, "<")):
                beyond = sum(1 for z in row if sign * z > Z_SHOWN)
                if beyond:
                    x = sign * (Z_SHOWN + 0.3)
                    left.scatter([x], [r], marker=marker, color=plot.ACCENT, s=22, zorder=3)
                    left.text(x + sign * 0.25, r, str(beyond), fontsize=7, va="center",
                              ha="left" if sign > 0 else "right")
        missing = sum(1 for i in o.doc["instances"].values() if i.get("z") is None)
        if missing:
            left.scatter([lo + 0.2], [r], marker="x", color=plot.BAD, s=22, zorder=3)
            left.text(lo + 0.45, r, f"{missing}", fontsize=7, color=plot.BAD, va="center")
        right.barh(r, o.doc["relative_score"], color=plot.PALETTE[sorted({x.doc.get('task') for x in outputs})
                                                                  .index(o.doc.get("task")) % 7], height=0.6)
        ci = _ci(o.doc, "relative_score")
        if ci:
            plot.error_bar(right, r, o.doc["relative_score"], ci)
        plot.data_label(plot.label_beside(right, max(o.doc["relative_score"], ci[1] if ci else 0), r,
                                          html.number(o.doc["relative_score"]), fontsize=8),
                        row=o.label, col="relative_score")
    for z in (-1, 0, 1):
        left.axvline(z, color="black", linewidth=0.8 if z == 0 else 0.5, linestyle="-" if z == 0 else ":")
    tasks = [o.doc.get("task") for o in outputs]
    for r in range(1, n):
        if tasks[r] != tasks[r - 1]:
            left.axhline(r - 0.5, color="black", linewidth=0.6)
            right.axhline(r - 0.5, color="black", linewidth=0.6)
    left.set_yticks(range(n), [f"{t}: {s}" for t, s in zip(tasks, _short_labels([o.label for o in outputs]),
                                                              strict=True)], fontsize=8.5)
    left.set_ylim(n - 0.5, -0.5)
    left.set_xlim(lo, hi)
    left.set_xticks(range(-int(Z_SHOWN), int(Z_SHOWN) + 1, 2))
    left.tick_params(axis="x", labelsize=8.5)
    left.set_xlabel("z = instance result against the reference's mu, in units of its scale", fontsize=9)
    plot.value_axis(right, "x", 0, 1, room=0.22, step=0.5)
    right.tick_params(axis="x", labelsize=8.5)
    right.set_xlabel("relative_score (0-1)", fontsize=9)
    handles = [plot.Line2D([], [], marker="o", color=plot.ACCENT, linestyle="", markersize=4, label="an instance's z"),
               plot.Rectangle((0, 0), 1, 1, facecolor="#e6e6e6", edgecolor=plot.NEUTRAL, label="middle half"),
               plot.Line2D([], [], color="black", linewidth=1.2, label="median"),
               plot.Line2D([], [], marker=">", color=plot.ACCENT, linestyle="", label=f"count beyond +/-{Z_SHOWN:g}"),
               plot.Line2D([], [], marker="x", color=plot.BAD, linestyle="", label="count without a value")]
    fig.legend(handles=handles, loc="outside lower center", ncols=5, fontsize=8.5)
    return fig
