"""``benchscore compare`` outputs in the HTML report: a comparison page.

For each comparison: per pair, every metric's verdict and difference with the interval of the same
test (a forest plot, the grey band the minimum detectable effect) above the table of its numbers and
the reasons in words; the items that differ most as a diff strip (both values per item); with three
or more results, per metric a leaderboard figure (each result's score with its own interval, in order,
with its group labels and rank interval) above the leaderboard table. Only a verdict ``differs`` is drawn
and counted as a supported difference. Like a domain's ``figures`` module it offers ``TITLE``,
``KINDS``, ``kind_of`` and ``render``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchscore.common import html, plot
from benchscore.common.html import Output
from benchscore.stats.compare import VERDICT_WORDS, fragility_text, groups_text

TITLE = "compare: paired differences between outputs"
KINDS = {"compare": "benchscore compare"}


def output_formats() -> dict[str, type]:
    """kind -> its format (the report validates an output before drawing it)."""
    from benchscore.stats.compare import formats

    return {"compare": formats()["benchscore-compare"]}


def kind_of(doc: Any) -> str | None:
    return "compare" if isinstance(doc, dict) and doc.get("format") == "benchscore-compare" else None


def verdict_counts(doc: dict[str, Any]) -> dict[str, int]:
    """How many comparisons (pair x metric) got each verdict: the summary row, the page and the terminal
    count these, never intervals."""
    counts = {v: 0 for v in VERDICT_WORDS}
    for pair in doc.get("comparisons", []):
        for m in pair.get("metrics", []):
            counts[m["verdict"]] += 1
    return counts


def summary_rows(out: Output) -> list[html.SummaryRow]:
    """The summary table's row of a comparison (the report's hook): how many differences its tests separate."""
    doc = out.doc
    counts = verdict_counts(doc)
    total = sum(counts.values())
    skipped = doc.get("not_compared") or {}
    reasons = []
    if counts["cannot_separate_at_this_n"]:
        reasons.append(f"{counts['cannot_separate_at_this_n']} of {total}: {VERDICT_WORDS['cannot_separate_at_this_n']}")
    if skipped:
        reasons.append("not compared: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    statuses = {(row["label"], (row.get("counts") or {}).get("status"))
                for rows in (doc.get("leaderboards") or {}).values() for row in rows}
    statuses |= {(pair[side], (m.get("counts") or {}).get(side, {}).get("status"))
                 for pair in doc.get("comparisons", []) for m in pair.get("metrics", []) for side in ("a", "b")}
    unfinished = sorted({f"{label} ended {status}" for label, status in statuses
                         if status not in (None, "success", "unknown")})
    if unfinished:
        reasons.insert(0, "NOT FINAL: " + ", ".join(unfinished))
    test = "Holm-adjusted tests" if doc.get("leaderboards") else "tests"
    return [html.SummaryRow(
        out, f"{doc.get('kind')}: {', '.join(map(str, doc.get('results', [])))}",
        [html.Headline(f"differences the {test} separate at alpha {doc.get('alpha')}", f"{counts['differs']} of {total}")],
        "not final" if unfinished else "complete", "; ".join(reasons) or None, what="compare")]


def render(outputs: Sequence[Output]) -> list[str]:
    return [_one(o) for o in outputs]


def _ci_text(ci: Any) -> str:
    return html.fmt(ci) if ci else "-"


def _one(out: Output) -> str:
    doc = out.doc
    counts = verdict_counts(doc)
    total = sum(counts.values())
    blocks: list[str] = [html.paragraph(
        f"{doc.get('kind')}: {len(doc.get('results', []))} results compared item by item "
        f"({', '.join(map(str, doc.get('results', [])))}); they share {', '.join(doc.get('same', {}))}. "
        f"The tests separate {counts['differs']} of {total} differences at alpha {doc.get('alpha')}"
        + (" (Holm-adjusted over the pairs)" if doc.get("leaderboards") else "")
        + (f"; {counts['cannot_separate_at_this_n']}: {VERDICT_WORDS['cannot_separate_at_this_n']}, whatever the data"
           if counts["cannot_separate_at_this_n"] else "") + ".")]
    for name, why in (doc.get("not_compared") or {}).items():
        blocks.append(html.banner(f"{name} not compared: {why}", "warn"))
    for name, board in (doc.get("leaderboards") or {}).items():
        blocks.append(html.figure(
            plot.to_svg(_leaderboard(name, board)), f"leaderboard {name}: each result's score and interval.",
            "Results from the highest value down: the dot is the result's number, the black line its own 95 % "
            "interval (from its output), on the right its groups (results sharing a group label are not "
            "separated by the Holm-adjusted tests) and its 95 % rank interval. A result is never drawn "
            "as ranked below one it is not separated from: read the groups and rank intervals, not the order.",
            [out]))
        fragile = any("fragile_separations" in r for r in board)
        blocks.append(html.table(
            ["result", "value", "ci95", "rank_range", "groups", "indistinguishable from", "equal to",
             *(["separated only by a fragile verdict"] if fragile else [])],
            [[r["label"], r["value"], _ci_text(r.get("ci95")) if r.get("ci95") else f"- ({r.get('ci_reason')})",
              f"{r['rank_range'][0]}-{r['rank_range'][1]}", groups_text(r["groups"]),
              ", ".join(r["indistinguishable_from"]) or "-", ", ".join(r["equal_to"]) or "-",
              *([", ".join(r.get("fragile_separations") or []) or "-"] if fragile else [])] for r in board],
            caption=f"leaderboard {name}: rank intervals (95 %, simultaneous) and groups at alpha {doc.get('alpha')} "
                    "(Holm)"))
    for pair in doc.get("comparisons", []):
        metrics = pair.get("metrics", [])
        if not metrics:
            continue
        holm = any("p_holm" in m for m in metrics)
        blocks.append(html.figure(
            plot.to_svg(_forest(metrics)), f"{pair['a']} - {pair['b']}: each difference with its interval.",
            "One row per metric: the dot is the difference a - b of the two results' numbers, the black line "
            "the differences the same test does not reject (its interval, at the level in the table: 95 %, or "
            "the level matching Holm with three or more results), the grey band the minimum detectable effect "
            "at 80 % power. A filled diamond is a difference the test separates (verdict 'differs'); a hollow "
            "circle one it does not ('not separated'), a cross one that no outcome could separate with this many "
            "units ('cannot separate at this n'). The interval excludes 0 exactly when the verdict is 'differs'.",
            [out]))
        cols = ["metric", "verdict", "a", "b", "difference", "ci", "ci_level", "p_value",
                *(["p_holm"] if holm else []), "test", "smallest_attainable_p", "n_items", "n_units",
                "minimum_detectable_effect"]
        blocks.append(html.table(cols, [[m.get("name"), VERDICT_WORDS[m["verdict"]], m.get("a"), m.get("b"),
                                         m.get("difference"), _ci_text(m.get("ci95")), m.get("ci_level"),
                                         m.get("p_value"), *([m.get("p_holm")] if holm else []), m.get("test"),
                                         m.get("smallest_attainable_p"), m.get("n_items"), m.get("n_units"),
                                         m.get("minimum_detectable_effect")] for m in metrics],
                                 caption=f"a = {pair['a']}, b = {pair['b']}"))
        reasons = []
        for m in metrics:
            why = [m["verdict_reason"]]
            if m.get("ci_reason") and m["ci_reason"] not in m["verdict_reason"]:
                why.append(f"no interval: {m['ci_reason']}")
            if m.get("mde_reason") and m["mde_reason"] != m["verdict_reason"]:
                why.append(f"no minimum detectable effect: {m['mde_reason']}")
            if fragility_text(m):
                why.append(fragility_text(m))
            reasons.append(f"{m['name']}: {VERDICT_WORDS[m['verdict']]} ({'; '.join(why)})")
        blocks.append(html.bullet_list(reasons))
        strips = [m for m in metrics if m.get("items_that_differ_most")]
        if strips:
            blocks.append(html.figure(
                plot.to_svg(_strip(strips, pair)), f"{pair['a']} vs {pair['b']}: the items that differ most.",
                "Per metric, the items whose values differ most between the two results (largest first): each "
                "item's value in a (filled) and in b (hollow), joined by a line. These are the per-item "
                "differences a reviewer reads first.", [out]))
    blocks.append(html.numbers(out))
    return html.article(f"{out.label}: {KINDS['compare']}", blocks, sources=[out])


_MARK = {"differs": ("D", plot.ACCENT, plot.ACCENT), "not_separated": ("o", "white", plot.NEUTRAL),
         "cannot_separate_at_this_n": ("X", plot.NEUTRAL, plot.NEUTRAL)}


@plot.styled
def _forest(metrics: list[dict[str, Any]]):
    n = len(metrics)
    fig = plot.new_figure(9, 0.9 + 0.45 * n)
    ax = fig.add_subplot()
    for i, m in enumerate(metrics):
        d = m["difference"]
        mde = m.get("minimum_detectable_effect")
        if mde:
            ax.barh(i, 2 * mde, left=-mde, height=0.6, color="#e6e6e6", zorder=1)
        ci = m.get("ci95")
        if ci:
            ax.plot(ci, [i, i], color="black", linewidth=1.4, zorder=3)
            for x in ci:
                ax.plot([x, x], [i - 0.15, i + 0.15], color="black", linewidth=1.0, zorder=3)
        marker, face, edge = _MARK[m["verdict"]]
        ax.scatter([d], [i], s=36, marker=marker, facecolors=face, edgecolors=edge, zorder=4, linewidths=1.2)
        p = m.get("p_holm", m.get("p_value"))
        plot.data_label(ax.text(1.01, i, f"{VERDICT_WORDS[m['verdict']]}  p={p:.3g}" + ("" if ci else "  (no interval)"),
                                transform=ax.get_yaxis_transform(), va="center", fontsize=7),
                        row=m["name"], col="verdict", value=VERDICT_WORDS[m["verdict"]])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(n), [m["name"] for m in metrics])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("difference a - b (in each metric's own unit)")
    return fig


@plot.styled
def _leaderboard(name: str, board: list[dict[str, Any]]):
    n = len(board)
    fig = plot.new_figure(9, 1.0 + 0.4 * n)
    ax = fig.add_subplot()
    for i, r in enumerate(board):
        ci = r.get("ci95")
        if ci:
            plot.error_bar(ax, i, r["value"], ci)
        ax.scatter([r["value"]], [i], s=30, color=plot.ACCENT, zorder=5)
        groups = groups_text(r["groups"])
        plot.data_label(ax.text(1.01, i, f"rank {r['rank_range'][0]}-{r['rank_range'][1]}  groups {groups}",
                                transform=ax.get_yaxis_transform(), va="center", fontsize=7),
                        row=r["label"], col="groups", value=groups)
    ax.set_yticks(range(n), [r["label"] for r in board])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel(f"{name} (each result's own 95 % interval)")
    return fig


@plot.styled
def _strip(metrics: list[dict[str, Any]], pair: dict[str, Any]):
    fig = plot.new_figure(9, 1.0 + 1.6 * len(metrics))
    axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
    for ax, m in zip(axes, metrics, strict=True):
        items = m["items_that_differ_most"]
        for i, r in enumerate(items):
            a, b = r.get("a"), r.get("b")
            if a is not None and b is not None:
                ax.plot([a, b], [i, i], color=plot.NEUTRAL, linewidth=1.0, zorder=1)
            if a is not None:
                ax.scatter([a], [i], s=22, color=plot.ACCENT, zorder=2, label="a" if i == 0 else None)
            if b is not None:
                ax.scatter([b], [i], s=22, facecolors="white", edgecolors=plot.PALETTE[5], zorder=2,
                           label="b" if i == 0 else None)
        ax.set_yticks(range(len(items)), [str(r["item"])[:48] for r in items], fontsize=6.5)
        ax.set_ylim(len(items) - 0.5, -0.5)
        ax.set_title(f"{m['name']}: a = {pair['a']}, b = {pair['b']}", fontsize=8)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig
