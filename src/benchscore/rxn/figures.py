"""rxn in the HTML report: per dataset (question type) avg_relative_score, exact match or hit rate, the
counts of invalid/missing/unhit predictions, and the distribution of per-sample relative scores.

Reads the outputs of ``rxn eval-mc`` and ``rxn eval-fib`` (kind ``eval``) as plain dicts; only
:mod:`benchscore.common` and matplotlib are used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchscore.common import html, plot
from benchscore.common.html import Output

from .chance import below_chance

TITLE = "rxn: reaction-condition testset V6"
KINDS = {"eval": "rxn eval-mc / rxn eval-fib"}


def output_formats() -> dict[str, type]:
    """kind -> the format each output is validated against before it is drawn (the report's hook)."""
    from .formats import EvaluationResult

    return {"eval": EvaluationResult}

PER_SAMPLE_KEY = "relative_score"


def kind_of(doc: Any) -> str | None:
    """``eval`` for ``rxn-testsetV6-*`` outputs that carry ``per_dataset`` metrics (a question set does not)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return None
    metric = str(doc["provenance"].get("metric_id", ""))
    if metric.startswith("rxn-testsetV6-") and isinstance(doc.get("per_dataset"), dict) and "overall" in doc:
        return "eval"
    return None


def _file_labels(outputs: Sequence[Output]) -> list[str]:
    """Each output's file as given, without the folders they all share (two evaluations of the same
    question type and dataset are told apart by their file)."""
    parts = [o.label.split("/") for o in outputs]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    return ["/".join(p[common:]) for p in parts]


def _rows(outputs: Sequence[Output]) -> list[tuple[str, dict[str, Any]]]:
    """(label, metrics) per dataset of every output, then each output's overall; a label names the file."""
    rows = []
    for o, name in zip(outputs, _file_labels(outputs), strict=True):
        task = o.doc.get("task", "?")
        for ds, metrics in o.doc["per_dataset"].items():
            rows.append((f"{name}: {task} / {ds}", metrics))
        if len(o.doc["per_dataset"]) > 1:
            rows.append((f"{name}: {task} / overall", o.doc["overall"]))
    return rows


def summary_rows(out: Output) -> list[html.SummaryRow]:
    """The summary table's row of an rxn evaluation (the report's hook)."""
    d = out.doc
    overall = d.get("overall") or {}
    ci = ((d.get("intervals") or {}).get("overall") or {}) if isinstance(d.get("intervals"), dict) else {}
    chance = ((d.get("chance") or {}).get("overall") or {}) if isinstance(d.get("chance"), dict) else {}
    heads = []
    for k in ("avg_relative_score", "exact_match_accuracy", "hit_rate"):
        if k in overall:
            heads.append(html.Headline(k, overall[k], "", ci.get(k)))
            if chance.get(k) is not None:  # what a uniform random answer scores: what the headline is compared with
                heads.append(html.Headline(f"{k} by chance", chance[k]))
    inputs = (d.get("provenance") or {}).get("inputs") or {}
    prediction = (inputs.get("prediction") or {}).get("name") if isinstance(inputs.get("prediction"), dict) else None
    bad = {k: overall.get(k) for k in ("num_invalid", "num_missing", "num_unhit") if overall.get(k)}
    note = ", ".join(f"{k} {v}" for k, v in bad.items()) + " (scored 0 or left out as the metric says)" if bad else None
    logs = [e for e in (d.get("provenance") or {}).get("from_inspect") or () if isinstance(e, dict)]
    retried = [e for e in logs if isinstance(e.get("retried_samples"), int) and e["retried_samples"]]
    if retried:  # the answers of samples inspect_ai retried: their last attempt's (said beside the numbers)
        from .from_inspect import retried_text

        note = "; ".join(f"inspect_ai log {e.get('log')}: {retried_text(e)}" for e in retried) + (
            f"; {note}" if note else "")
    if _below(d):  # complete, and worse than answering at random: said first
        note = (f"BELOW CHANCE: {', '.join(_below(d))} (the 95 % interval lies below what a uniform random answer "
                "scores)") + (f"; {note}" if note else "")
    unfinished = [e for e in logs if e.get("status", "success") != "success"]
    status = "complete"
    if unfinished:  # an inspect_ai run that did not finish: its answers are scored, the result is not final
        status = "incomplete"
        note = "; ".join(f"inspect_ai log {e.get('log')} ended with status {e.get('status')}"
                         + (f": {' '.join(str(e['error']).split())[:300]}" if e.get("error") else "")
                         for e in unfinished) + (f"; {note}" if note else "")
    return [html.SummaryRow(
        out, f"{d.get('task')}: dataset(s) {', '.join(d['per_dataset'])}"
             + (f", predictions {prediction}" if prediction else "") + f", {overall.get('num_samples')} samples",
        heads, status, note, what="eval")]


def _intervals(outputs: Sequence[Output]) -> list[dict[str, Any]]:
    """The 95 % intervals of each row of :func:`_rows`, in the same order (empty when none)."""
    out = []
    for o in outputs:
        ci = o.doc.get("intervals") if isinstance(o.doc.get("intervals"), dict) else {}
        for ds in o.doc["per_dataset"]:
            out.append((ci.get("per_dataset") or {}).get(ds) or {})
        if len(o.doc["per_dataset"]) > 1:
            out.append(ci.get("overall") or {})
    return out


def _chances(outputs: Sequence[Output]) -> list[dict[str, Any]]:
    """The chance levels of each row of :func:`_rows`, in the same order (empty when the output has none)."""
    out = []
    for o in outputs:
        chance = o.doc.get("chance") if isinstance(o.doc.get("chance"), dict) else {}
        for ds in o.doc["per_dataset"]:
            out.append((chance.get("per_dataset") or {}).get(ds) or {})
        if len(o.doc["per_dataset"]) > 1:
            out.append(chance.get("overall") or {})
    return out


def _below(d: dict[str, Any]) -> list[str]:
    """The overall metrics the output flags below chance (``below_chance.overall``)."""
    flagged = d.get("below_chance") if isinstance(d.get("below_chance"), dict) else {}
    return [str(m) for m in flagged.get("overall") or ()]


def _rates(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items() if not k.startswith("num_") and isinstance(v, int | float)
            and not isinstance(v, bool)}


def _counts(metrics: dict[str, Any]) -> dict[str, int]:
    return {k: int(v) for k, v in metrics.items() if k.startswith("num_") and isinstance(v, int)
            and not isinstance(v, bool)}


def _samples(value: Any, path: str = "") -> list[tuple[str, list[dict[str, Any]]]]:
    """Every list of per-sample records carrying a numeric ``relative_score``, by JSON path."""
    found = []
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        if any(isinstance(x.get(PER_SAMPLE_KEY), int | float) for x in value):
            found.append((path, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            if k != "provenance":
                found.extend(_samples(v, f"{path}.{k}" if path else k))
    return found


def _chance_line(out: Output) -> str:
    """The headline beside its chance level: what a uniform random answer scores (``chance.overall``)."""
    chance = (out.doc.get("chance") or {}).get("overall") if isinstance(out.doc.get("chance"), dict) else None
    if not chance:
        return ""
    overall = out.doc.get("overall") or {}
    parts = [f"{k} {html.number(overall.get(k))} against {html.number(chance[k])} by chance"
             for k in ("avg_relative_score", "exact_match_accuracy", "hit_rate") if chance.get(k) is not None]
    below = f"BELOW CHANCE ({', '.join(_below(out.doc))}): " if _below(out.doc) else ""
    return f"{below}{out.label}: " + "; ".join(parts) + f" ({chance.get('predictor')}, in expectation)"


def render(outputs: Sequence[Output]) -> list[str]:
    rows = _rows(outputs)
    blocks: list[str] = [html.banner(_chance_line(o), "warn" if _below(o.doc) else "info") for o in outputs
                         if _chance_line(o)]
    blocks += [
        html.figure(plot.to_svg(_rates_figure(rows, _intervals(outputs), _chances(outputs))),
                    "Scores per dataset and question type.",
                    "For each dataset (question type) of each evaluation: avg_relative_score (the main metric: "
                    "the mean relative score, 0 for an invalid or missing answer), exact_match_accuracy "
                    "(multiple choice: the best option was chosen) or hit_rate (fill in the blank: the answer "
                    "matched a table row), and every other rate the output carries. All are 0-1. The black "
                    "error bars are 95 % intervals (clustered by condition table; none where the questions come "
                    "from a single table). The black dashed tick across a bar is its chance level (what a "
                    "uniform random answer scores); a bar whose interval ends left of it is marked BELOW "
                    "CHANCE.", outputs),
        html.figure(plot.to_svg(_counts_figure(rows)), "Sample counts: invalid, missing, unhit.",
                    "The wide grey bar is num_samples (every sample of the evaluation); the narrow bars on it "
                    "are the output's counts (num_invalid: an answer outside the option space; num_missing: "
                    "no answer; num_unhit: a fill-in-the-blank answer matching no table row; num_scored; "
                    "num_without_yield). A red count is a non-zero invalid/missing/unhit count.", outputs),
    ]
    per_sample = [(o, p, s) for o in outputs for p, s in _samples(o.doc)]
    if per_sample:
        blocks.append(html.figure(plot.to_svg(_distribution_figure(per_sample)),
                                  "Distribution of per-sample relative scores.",
                                  "A histogram of every sample's relative score (0-1) as the main metric counts "
                                  "it, per evaluation and sub-dataset, stacked by status: scored, and invalid or "
                                  "missing answers at 0 (they stay in the denominator); unhit fill-in-blank answers "
                                  "have no relative score (they leave it) and are only counted in the title.",
                                  [o for o, _, _ in per_sample]))
    else:
        blocks.append(html.not_drawn(
            "distribution of per-sample relative scores",
            "the eval-mc / eval-fib outputs carry only per-dataset aggregates; a list of per-sample records "
            "with a numeric 'relative_score' (and its status: scored / unhit / invalid / missing) is needed"))
    columns = ["dataset", *dict.fromkeys(k for _, m in rows for k in m)]
    blocks.append(html.table(columns, [[label, *(m.get(c) for c in columns[1:])] for label, m in rows],
                             caption="per dataset"))
    blocks.extend(html.numbers(o) for o in outputs)
    return [html.article(f"evaluations ({len(outputs)} rxn eval outputs)", blocks, sources=outputs)]


@plot.styled
def _rates_figure(rows: list[tuple[str, dict[str, Any]]], intervals: list[dict[str, Any]] | None = None,
                  chances: list[dict[str, Any]] | None = None):
    names = list(dict.fromkeys(k for _, m in rows for k in _rates(m)))
    n = len(rows)
    fig = plot.new_figure(9, 1.0 + 0.25 * max(1, len(names)) * n + 0.3)
    ax = fig.add_subplot()
    h = 0.8 / max(1, len(names))
    labelled: set[str] = set()
    for j, name in enumerate(names):
        for i, (_, m) in enumerate(rows):
            v = _rates(m).get(name)
            if v is None:
                continue
            y = i - 0.4 + h * (j + 0.5)
            ax.barh(y, v, height=h * 0.9, color=plot.metric_colour(name), label=None if name in labelled else name)
            labelled.add(name)
            ci = ((intervals or [{}] * n)[i].get(name) or {}).get("ci95")
            if ci:
                plot.error_bar(ax, y, v, ci)
            level = ((chances or [{}] * n)[i]).get(name)
            low = below_chance(v, level, ci)
            if isinstance(level, int | float) and not isinstance(level, bool):
                ax.plot([level, level], [y - h * 0.5, y + h * 0.5], color="black", linestyle=(0, (2, 1)),
                        linewidth=1.2, zorder=5, label=None if "chance" in labelled else "chance level")
                labelled.add("chance")
            text = f"{html.number(v)}" + (" BELOW CHANCE" if low else "")
            plot.data_label(ax.text(max(v, ci[1] if ci else v, level if low is not None else v) + 0.015, y, text,
                                    va="center", fontsize=7, color=plot.BAD if low else "black",
                                    fontweight="bold" if low else "normal"),
                            row=rows[i][0], col=name, value=html.number(v))
    ax.set_yticks(range(n), [label for label, _ in rows])
    ax.set_ylim(n - 0.5, -0.5)
    plot.value_axis(ax, "x", 0, 1, room=0.12, step=0.2)
    fig.legend(loc="outside lower center", ncols=4, fontsize=7)
    return fig


@plot.styled
def _counts_figure(rows: list[tuple[str, dict[str, Any]]]):
    names = [k for k in dict.fromkeys(k for _, m in rows for k in _counts(m)) if k != "num_samples"]
    n = len(rows)
    fig = plot.new_figure(9, 1.0 + 0.22 * max(1, len(names)) * n + 0.3)
    ax = fig.add_subplot()
    h = 0.8 / max(1, len(names))
    top = max([1] + [c for _, m in rows for c in _counts(m).values()])
    labelled: set[str] = set()
    for i, (_, m) in enumerate(rows):
        c = _counts(m)
        if "num_samples" in c:
            ax.barh(i, c["num_samples"], height=0.9, color=plot.metric_colour("num_samples"), edgecolor="black",
                    linewidth=0.8, label=None if "num_samples" in labelled else "num_samples")
            labelled.add("num_samples")
        for j, name in enumerate(names):
            if name not in c:
                continue
            y = i - 0.4 + h * (j + 0.5)
            bad = name in ("num_invalid", "num_missing", "num_unhit") and c[name] > 0
            ax.barh(y, c[name], height=h * 0.8, color=plot.metric_colour(name), edgecolor="black", linewidth=0.4,
                    label=None if name in labelled else name)
            labelled.add(name)
            plot.data_label(ax.text(c[name] + top * 0.01, y, f"{name[4:]} {c[name]}", va="center", fontsize=6.5,
                                    color=plot.BAD if bad else "black", fontweight="bold" if bad else "normal"),
                            row=rows[i][0], col=name, value=str(c[name]))
    ax.set_yticks(range(n), [label for label, _ in rows])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, top * 1.25)
    ax.set_xlabel("samples")
    plot.count_axis(ax, "x")
    fig.legend(loc="outside lower center", ncols=4, fontsize=7)
    return fig


@plot.styled
def _distribution_figure(per_sample: list[tuple[Output, str, list[dict[str, Any]]]]):
    fig = plot.new_figure(9, 1.2 + 1.3 * len(per_sample))
    axes = fig.subplots(len(per_sample), 1, squeeze=False)[:, 0]
    bins = [i / 10 for i in range(11)]
    files = dict(zip([o.anchor for o in {o.anchor: o for o, _, _ in per_sample}.values()],
                     _file_labels(list({o.anchor: o for o, _, _ in per_sample}.values())), strict=True))
    for ax, (o, path, samples) in zip(axes, per_sample, strict=True):
        by_status: dict[str, list[float]] = {}
        for s in samples:
            if isinstance(s.get(PER_SAMPLE_KEY), int | float):
                by_status.setdefault(str(s.get("status", "scored")), []).append(float(s[PER_SAMPLE_KEY]))
        counted = sum(len(v) for v in by_status.values())
        names = sorted(by_status, key=lambda k: (k != "scored", k))
        ax.hist([by_status[k] for k in names], bins=bins, stacked=True, label=names, edgecolor="white",
                color=[plot.ACCENT if k == "scored" else "#d55e00" if k == "invalid" else "#999999" for k in names])
        uncounted = len(samples) - counted
        ax.set_title(f"{files[o.anchor]}: {o.doc.get('task')} {path}: {counted} of {len(samples)} samples"
                     + (f" ({uncounted} without a relative score: unhit)" if uncounted else ""), fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_ylabel("samples")
        plot.count_axis(ax, "y")
        ax.legend(fontsize=7, loc="upper center")
    axes[-1].set_xlabel("relative score")
    return fig
