"""``benchscore compare`` outputs in the HTML report: a comparison page.

For each comparison: per pair, every metric's difference with its 95 % interval and its minimum
detectable effect (a forest plot), the items that differ most as a diff strip (both values per
item), the leaderboard of tie groups (three or more results), and the table of every number.
Like a domain's ``figures`` module it offers ``TITLE``, ``KINDS``, ``kind_of`` and ``render``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import html, plot
from .html import Output

TITLE = "compare: paired differences between outputs"
KINDS = {"compare": "benchscore compare"}


def output_formats() -> dict[str, type]:
    """kind -> its format (the report validates an output before drawing it)."""
    from .compare import formats

    return {"compare": formats()["benchscore-compare"]}


def kind_of(doc: Any) -> str | None:
    return "compare" if isinstance(doc, dict) and doc.get("format") == "benchscore-compare" else None


def summary_rows(out: Output) -> list[html.SummaryRow]:
    """The summary table's row of a comparison (the report's hook): how many differences its intervals support."""
    doc = out.doc
    metrics = [m for pair in doc.get("comparisons", []) for m in pair.get("metrics", [])]
    supported = sum(1 for m in metrics if m.get("ci95") and (m["ci95"][0] > 0 or m["ci95"][1] < 0))
    skipped = doc.get("not_compared") or {}
    return [html.SummaryRow(
        out, f"{doc.get('kind')}: {', '.join(map(str, doc.get('results', [])))}",
        [html.Headline("differences whose 95 % interval excludes 0", f"{supported} of {len(metrics)}")],
        "complete", ("not compared: " + "; ".join(f"{k}: {v}" for k, v in skipped.items())) if skipped else None,
        what="compare")]


def render(outputs: Sequence[Output]) -> list[str]:
    return [_one(o) for o in outputs]


def _one(out: Output) -> str:
    doc = out.doc
    blocks: list[str] = [html.paragraph(
        f"{doc.get('kind')}: {len(doc.get('results', []))} results compared item by item "
        f"({', '.join(map(str, doc.get('results', [])))}); they share {', '.join(doc.get('same', {}))}.")]
    for name, why in (doc.get("not_compared") or {}).items():
        blocks.append(html.banner(f"{name} not compared: {why}", "warn"))
    for pair in doc.get("comparisons", []):
        metrics = pair.get("metrics", [])
        if not metrics:
            continue
        blocks.append(html.figure(
            plot.to_svg(_forest(metrics)), f"{pair['a']} - {pair['b']}: each difference with its 95 % interval.",
            "One row per metric: the dot is the difference a - b of the two results' numbers, the black line its "
            "95 % interval (paired wild bootstrap over independent units: rxn condition tables, mira cases, tcsexam "
            "tasks), the grey band the minimum detectable effect at 80 % power (a true difference inside it "
            "would usually go unseen with this many units). An interval that does not cross 0 is a difference "
            "the data support; the p-value and its test are in the table.", [out]))
        strips = [m for m in metrics if m.get("items_that_differ_most")]
        if strips:
            blocks.append(html.figure(
                plot.to_svg(_strip(strips, pair)), f"{pair['a']} vs {pair['b']}: the items that differ most.",
                "Per metric, the items whose values differ most between the two results (largest first): each "
                "item's value in a (filled) and in b (hollow), joined by a line. These are the per-item "
                "differences a reviewer reads first.", [out]))
        cols = ["metric", "a", "b", "difference", "ci95", "p_value", *(["p_holm"] if "p_holm" in metrics[0] else []),
                "test", "n_items", "n_units", "minimum_detectable_effect"]
        blocks.append(html.table(cols, [[m.get("name"), m.get("a"), m.get("b"), m.get("difference"),
                                         html.fmt(m.get("ci95")) if m.get("ci95") else m.get("ci_reason"),
                                         m.get("p_value"), *([m.get("p_holm")] if "p_holm" in m else []),
                                         m.get("test"), m.get("n_items"), m.get("n_units"),
                                         m.get("minimum_detectable_effect")] for m in metrics],
                                 caption=f"a = {pair['a']}, b = {pair['b']}"))
    for name, board in (doc.get("leaderboards") or {}).items():
        blocks.append(html.table(["group", "rank", "rank range", "result", "value", "indistinguishable from"],
                                 [[r["group"], r["rank"], f"{r['rank_range'][0]}-{r['rank_range'][1]}", r["label"],
                                   r["value"], ", ".join(r["indistinguishable_from"]) or "-"] for r in board],
                                 caption=f"leaderboard {name}: tie groups at alpha {doc.get('alpha')} (Holm)"))
    blocks.append(html.numbers(out))
    return html.article(f"{out.label}: {KINDS['compare']}", blocks, sources=[out])


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
        separated = bool(ci) and (ci[0] > 0 or ci[1] < 0)
        ax.scatter([d], [i], s=36, color=plot.ACCENT if separated else plot.NEUTRAL, zorder=4,
                   marker="D" if separated else "o")
        p = m.get("p_holm", m.get("p_value"))
        ax.text(1.01, i, f"{d:+.4g}  p={p:.3g}" + ("" if ci else "  (no interval)"), transform=ax.get_yaxis_transform(),
                va="center", fontsize=7)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(n), [m["name"] for m in metrics])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("difference a - b (in each metric's own unit)")
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
