"""``benchscore leaderboard RESULTS... --output-dir SITE``: a leaderboard a benchmark can publish.

The table is compare's leaderboard (:func:`benchscore.stats.compare.compare`: rank intervals and
letters from the pairs Holm separates, each result's own 95 % interval) with, per result, its
standard error (:func:`benchscore.stats.intervals.standard_error`), its scored / errored / unscored
counts and whether ``benchscore verify`` reproduced it (contract outputs), and, per adjacent pair of
rows, compare's verdict for that pair and the items that differ most. This module computes no
statistic of its own: it arranges what compare and ``stats`` computed and writes it three ways:

- ``index.html``: one self-contained page (inline CSS, inline SVG forest plot, no script, no
  network) and ``pair-M-K.html`` per adjacent pair K of metric M;
- ``leaderboard.json``: the same table (:func:`formats`, validated on write);
- ``every_eval_ever/<model>.json``: one Every Eval Ever aggregate record (schema 0.3.0, the current
  upstream release, validated on write) per result, ``score_details.uncertainty`` holding the interval,
  standard error, method and sample count, ``source_metadata.additional_details`` the leaderboard that
  wrote it and its sources' sha256 (``benchscore verify`` re-runs that leaderboard and compares it).

Where an interval or a standard error is null, the reason is written in its place, never a number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchscore.common import html as H
from benchscore.stats.compare import VERDICT_WORDS, Entry, Metric, counts_text
from benchscore.stats.intervals import NoInterval, cluster_codes, standard_error

FORMAT = "benchscore-leaderboard"
#: the Every Eval Ever schema the records follow: the current upstream release (sources/data/every_eval_ever)
EEE_VERSION = "0.3.0"
#: ``source_metadata.source_name`` of every record a leaderboard writes
EEE_SOURCE = "benchscore leaderboard"
#: the method name of the standard error written beside each number
SE_METHOD = "cr2_cluster_robust"


def formats() -> dict[str, type]:
    """The pydantic model of ``leaderboard.json`` (``benchscore schema benchscore-leaderboard``)."""
    from typing import Literal

    from pydantic import Field

    from benchscore.common.models import Format

    class Differing(Format):
        item: str
        a: float | None
        b: float | None
        difference: float | None
        unit: str | None = None

    class Row(Format):
        position: int = Field(description="1-based place in the table (by value, highest first; ties by label)")
        label: str
        value: float
        ci95: list[float] | None = Field(min_length=2, max_length=2, description="the result's own 95 % interval")
        ci_method: str | None = None
        ci_reason: str | None = Field(None, description="why there is no interval (never a number in its place)")
        standard_error: float | None
        se_reason: str | None = None
        rank_range: list[int] = Field(min_length=2, max_length=2)
        letters: str
        indistinguishable_from: list[str]
        counts: dict[str, Any] | None = Field(description="scored / errored / unscored sample x epochs and the "
                                                          "errors policy (results of other tools)")
        counts_reason: str | None = None
        reproduced: bool | None = Field(description="true only when benchscore verify reproduced the output; "
                                                    "null: nothing to re-run (results of another tool)")
        reproduced_reason: str
        eee_record: str = Field(description="the Every Eval Ever aggregate record of this result (path in the site)")

    class AdjacentPair(Format):
        a: str = Field(description="the upper row")
        b: str
        page: str
        verdict: Literal["differs", "not_separated", "cannot_separate_at_this_n"]
        verdict_reason: str
        difference: float
        ci95: list[float] | None
        ci_level: float
        ci_reason: str | None = None
        p_value: float
        p_holm: float | None = None
        test: str
        n_items: int
        n_units: int
        items_that_differ_most: list[Differing]

    class Board(Format):
        name: str
        bounds: list[float | None] = Field(min_length=2, max_length=2,
                                           description="the smallest and largest value the metric can take (null: none)")
        observed: list[float] = Field(min_length=2, max_length=2,
                                      description="the smallest and largest per-item value in the results")
        n_items: int
        n_units: int
        rows: list[Row]
        adjacent_pairs: list[AdjacentPair]

    class LeaderboardOutput(Format):
        """Output of ``benchscore leaderboard``: compare's leaderboard of each metric, with counts,
        standard errors, the reproduced mark and the adjacent pairs (docs/results.md)."""

        format: Literal["benchscore-leaderboard"]
        kind: str
        same: dict[str, Any]
        results: list[str]
        alpha: float
        level: float
        metrics: list[Board]
        not_compared: dict[str, str]
        intersection: dict[str, Any] | None
        provenance: dict[str, Any]

    return {FORMAT: LeaderboardOutput}


def verify_kinds() -> list[Any]:
    """The kinds a leaderboard writes, for ``benchscore verify``: ``leaderboard.json`` (validated against its
    model) and its Every Eval Ever records (validated against the upstream schema, written by a leaderboard:
    ``source_metadata`` names it; verified by re-running that leaderboard)."""
    from benchscore.common.verify import Kind

    def record_problem(doc: Any) -> str | None:
        from benchscore.sources.every_eval_ever import aggregate_problem

        why = aggregate_problem(doc, EEE_VERSION)
        if why is not None:
            return why
        meta = doc["source_metadata"]
        details = meta.get("additional_details") or {}
        if meta.get("source_name") != EEE_SOURCE:
            return f"source_metadata.source_name: not {EEE_SOURCE!r}"
        for key in ("leaderboard", "leaderboard_sha256"):
            if key not in details:
                return f"source_metadata.additional_details.{key}: missing"
        return None

    def written_with(doc: dict[str, Any]) -> tuple[str, str] | str:
        details = doc["source_metadata"]["additional_details"]
        if details["leaderboard"] != "../leaderboard.json" or not re.fullmatch(r"[0-9a-f]{64}",
                                                                               details["leaderboard_sha256"]):
            return ("source_metadata.additional_details names its leaderboard "
                    f"{details['leaderboard']!r} (sha256 {details['leaderboard_sha256']!r}), not as a leaderboard "
                    "writes it (../leaderboard.json and its sha256)")
        return details["leaderboard"], details["leaderboard_sha256"]

    return [
        Kind("leaderboard", (formats()[FORMAT],), lambda m: m == FORMAT, FORMAT, ("benchscore leaderboard",)),
        Kind("leaderboard's Every Eval Ever record", (), lambda m: True, "none (the leaderboard's)",
             ("benchscore leaderboard",), check=record_problem, written_with=written_with,
             owner=("every_eval_ever", "leaderboard.json")),
    ]


def _units(m: Metric, items: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per independent unit of ``m`` (its clusters; each item otherwise), the sums of num and den."""
    pairs = np.array([m.items[i] for i in items], dtype=float).reshape(-1, 2)
    if m.clusters is None:
        return pairs[:, 0], pairs[:, 1]
    codes, g = cluster_codes(m.clusters[i] for i in items)
    return (np.bincount(codes, weights=pairs[:, 0], minlength=g), np.bincount(codes, weights=pairs[:, 1], minlength=g))


def _standard_error(m: Metric, dropped: bool) -> tuple[float | None, str | None]:
    if dropped:
        return None, "compared on the common items only: the standard error of all its items does not apply"
    if m.strata is not None or m.weights is not None:
        return None, "a weighted sum of strata: its interval combines each stratum's own, no single standard error"
    try:
        num, den = _units(m, list(m.items))
        return standard_error(num, den) * m.scale, None
    except NoInterval as exc:
        return None, str(exc)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "result"


def record_names(labels: Sequence[str]) -> dict[str, str]:
    """A file name per label (unique, safe in a URL)."""
    out: dict[str, str] = {}
    for label in labels:
        base, k = _slug(label), 1
        name = base
        while name in out.values():
            k += 1
            name = f"{base}-{k}"
        out[label] = name
    return out


def build(doc: dict[str, Any], entries: Sequence[Entry],
          reproduced: Mapping[str, tuple[bool | None, str]]) -> dict[str, Any]:
    """The leaderboard document (without provenance) from compare's document ``doc`` (built with
    ``standings=True``), its entries and, per label, ``(reproduced, why)``."""
    metric_of = {(e.label, m.name): m for e in entries for m in e.metrics}
    names = record_names(doc["results"])
    pair_of = {}
    for c in doc["comparisons"]:
        for row in c["metrics"]:
            pair_of[(c["a"], c["b"], row["name"])] = (row, False)
            pair_of[(c["b"], c["a"], row["name"])] = (row, True)
    dropped = doc["intersection"] or {}
    boards = []
    for k, (name, board) in enumerate((doc.get("leaderboards") or {}).items(), 1):
        rows, pairs = [], []
        first = pair_of[(board[0]["label"], board[1]["label"], name)][0]
        for pos, r in enumerate(board, 1):
            m = metric_of[(r["label"], name)]
            se, se_reason = _standard_error(m, name in dropped)
            done, why = reproduced[r["label"]]
            rows.append({
                "position": pos, "label": r["label"], "value": r["value"], "ci95": r["ci95"],
                "ci_method": (m.ci_method or "the output's own") if r["ci95"] else m.ci_method,
                **({"ci_reason": r.get("ci_reason") or "the output gives no interval"} if not r["ci95"] else {}),
                "standard_error": se, **({"se_reason": se_reason} if se_reason else {}),
                "rank_range": r["rank_range"], "letters": r["letters"],
                "indistinguishable_from": r["indistinguishable_from"],
                "counts": r.get("counts"),
                **({} if r.get("counts") else {"counts_reason": "a contract output: its items are the contract's; "
                                                                "errors are counted as the contract says"}),
                "reproduced": done, "reproduced_reason": why,
                "eee_record": f"every_eval_ever/{names[r['label']]}.json",
            })
        for j in range(len(board) - 1):
            a, b = board[j]["label"], board[j + 1]["label"]
            row, flipped = pair_of[(a, b, name)]
            sign = -1.0 if flipped else 1.0
            ci = row["ci95"]
            pairs.append({
                "a": a, "b": b, "page": f"pair-{k}-{j + 1}.html", "verdict": row["verdict"],
                "verdict_reason": row["verdict_reason"], "difference": sign * row["difference"],
                "ci95": (sorted([sign * ci[0], sign * ci[1]]) if ci else None), "ci_level": row["ci_level"],
                **({"ci_reason": row["ci_reason"]} if row.get("ci_reason") else {}),
                "p_value": row["p_value"], **({"p_holm": row["p_holm"]} if "p_holm" in row else {}),
                "test": row["test"], "n_items": row["n_items"], "n_units": row["n_units"],
                "items_that_differ_most": [
                    {**d, "a": d["b"], "b": d["a"], "difference": None if d["difference"] is None else -d["difference"]}
                    if flipped else d for d in row["items_that_differ_most"]],
            })
        ms = [metric_of[(r["label"], name)] for r in board]
        seen = [m.scale * n / d for m in ms for n, d in m.items.values() if d]
        bounds = list(ms[0].bounds)
        boards.append({"name": name, "bounds": bounds, "observed": [min(seen, default=0.0), max(seen, default=0.0)],
                       "n_items": first["n_items"], "n_units": first["n_units"],
                       "rows": rows, "adjacent_pairs": pairs})
    return {"format": FORMAT, "kind": doc["kind"], "same": doc["same"], "results": doc["results"],
            "alpha": doc["alpha"], "level": doc["level"], "metrics": boards,
            "not_compared": doc["not_compared"], "intersection": doc["intersection"]}


# ---- Every Eval Ever ---------------------------------------------------------------------------------

def eee_records(board: dict[str, Any], about: Mapping[str, Mapping[str, Any]],
                leaderboard_sha256: str) -> dict[str, dict[str, Any]]:
    """One Every Eval Ever aggregate record (schema :data:`EEE_VERSION`, the current upstream release) per
    result: file name in the site -> record.

    ``about`` holds, per label, what the result says of itself (:attr:`benchscore.stats.compare.Entry.about`,
    or :func:`output_about` for a contract output): ``created`` (when the evaluation ran, ISO 8601, or None),
    ``library`` (name, version), ``datasets`` (metric -> dataset) and ``sources`` (file name -> sha256).
    ``evaluation_timestamp`` is the evaluation's own time in seconds since 1970, as the upstream converters
    write it (left out, with the reason in ``source_metadata.additional_details``, when the source records
    none); ``retrieved_timestamp`` the leaderboard's. ``source_metadata.additional_details`` names the
    leaderboard that wrote the record (``leaderboard``, its ``leaderboard_sha256``) and each source file's
    sha256 (``sha256:NAME``): ``benchscore verify`` re-runs that leaderboard and compares the record."""
    from benchscore.common.verify import epoch_of

    created = board["provenance"]["created_at"]
    out: dict[str, dict[str, Any]] = {}
    for label in board["results"]:
        facts = about.get(label, {})
        results = []
        path = None
        for metric in board["metrics"]:
            row = next(r for r in metric["rows"] if r["label"] == label)
            path = row["eee_record"]
            uncertainty: dict[str, Any] = {"num_samples": metric["n_items"]}
            details = {"rank_range": f"{row['rank_range'][0]}-{row['rank_range'][1]}", "letters": row["letters"],
                       "independent_units": str(metric["n_units"]), "kind": board["kind"]}
            if row["ci95"]:
                uncertainty["confidence_interval"] = {"lower": row["ci95"][0], "upper": row["ci95"][1],
                                                      "confidence_level": board["level"],
                                                      "method": row["ci_method"] or "the output's own"}
            else:
                details["ci_reason"] = row["ci_reason"]
            if row["standard_error"] is not None:
                uncertainty["standard_error"] = {"value": row["standard_error"], "method": SE_METHOD}
            else:
                details["se_reason"] = row["se_reason"]
            if row["counts"]:  # every count, the excluded and errored samples among them, and the errors policy
                details.update({k: str(v) for k, v in row["counts"].items()})
            details["reproduced"] = {True: "yes", False: "no", None: "not applicable"}[row["reproduced"]]
            dataset = (facts.get("datasets") or {}).get(metric["name"]) or facts.get("dataset") or metric["name"]
            results.append({
                "evaluation_result_id": metric["name"], "evaluation_name": metric["name"],
                "source_data": {"dataset_name": str(dataset), "source_type": "other"},
                "metric_config": _metric_config(board, metric),
                "score_details": {"score": row["value"], "details": details, "uncertainty": uncertainty},
            })
        assert path is not None
        library, version = facts.get("library") or ("unknown", None)
        source = {"leaderboard": "../leaderboard.json", "leaderboard_sha256": leaderboard_sha256,
                  "benchscore_command": board["provenance"].get("command", "benchscore leaderboard"),
                  **{f"sha256:{name}": sha for name, sha in sorted((facts.get("sources") or {}).items())}}
        when = _unix_seconds(facts.get("created"))
        if when is None:
            source["evaluation_timestamp"] = "not recorded by the source: left out"
        record = {
            "schema_version": EEE_VERSION,
            "evaluation_id": f"{board['kind']}/{label}/{epoch_of(created)}",
            **({"evaluation_timestamp": when} if when is not None else {}),
            "retrieved_timestamp": str(epoch_of(created)),
            "source_metadata": {"source_name": EEE_SOURCE, "source_type": "evaluation_run",
                                "source_organization_name": "unknown", "evaluator_relationship": "other",
                                "additional_details": source},
            "eval_library": {"name": str(library), "version": str(version) if version else "unknown"},
            "model_info": {"name": label, "id": label,
                           "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"}},
            "evaluation_results": results,
        }
        out[path] = record
    return out


def _unix_seconds(text: Any) -> str | None:
    """An ISO 8601 time (``2026-06-01T12:00:00+00:00``, ``...Z``) as whole seconds since 1970, as text."""
    from datetime import UTC, datetime

    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return str(int(moment.timestamp()))


def output_about(path: Any, doc: Mapping[str, Any]) -> dict[str, Any]:
    """What a benchscore contract output says of itself, for its Every Eval Ever record: computed by benchscore
    (its version) when its provenance says (``created_at``), of the dataset its metric id names."""
    prov = doc.get("provenance") or {}
    return {"created": prov.get("created_at"), "library": ("benchscore", prov.get("benchscore_version")),
            "dataset": prov.get("metric_id"), "files": [path]}


def sources_of(files: Sequence[Any], provenance: Mapping[str, Any]) -> dict[str, str]:
    """File name -> sha256 of a result's source files: each named as the leaderboard's provenance records it
    (relative to the folder or URL given), else by its own name."""
    from benchscore.common.provenance import sha256_file

    recorded: dict[str, list[str]] = {}

    def walk(value: Any) -> None:
        if isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            if isinstance(value.get("sha256"), str) and isinstance(value.get("name"), str):
                recorded.setdefault(value["sha256"], []).append(value["name"])
            for v in value.get("files") or []:
                walk(v)

    for v in (provenance.get("arguments") or {}).values():
        walk(v)
    out = {}
    for f in files:
        sha, own = sha256_file(f), Path(f).name
        names = recorded.get(sha, [])  # two files of the same bytes: each under its own name
        out[own if own in names or not names else names[0]] = sha
    return out


def _metric_config(board: dict[str, Any], metric: dict[str, Any]) -> dict[str, Any]:
    """The record's metric: continuous, between its bounds (the observed extremes where it has none, and
    it says so)."""
    low, high = metric["bounds"]
    note = {}
    if low is None or high is None:
        note = {"additional_details": {"bounds": "the metric has no bound on this side: min_score / max_score "
                                                 "give the observed per-item extremes"}}
    return {"metric_id": metric["name"], "metric_name": metric["name"], "lower_is_better": False,
            "evaluation_description": f"{board['kind']}: {metric['name']}", "score_type": "continuous",
            "min_score": metric["observed"][0] if low is None else low,
            "max_score": metric["observed"][1] if high is None else high, **note}


# ---- the pages -----------------------------------------------------------------------------------

_CSS = """
table.board td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.board td.null { color: #8a4b00; }
svg.forest text { font: 11px sans-serif; }
.mark { color: #1a7f37; font-weight: bold; }
"""


def _num(v: Any) -> str:
    return "-" if v is None else f"{v:.4g}"


def _ci(row: dict[str, Any]) -> str:
    return f"[{_num(row['ci95'][0])}, {_num(row['ci95'][1])}]" if row["ci95"] else f"none: {row['ci_reason']}"


def forest_svg(metric: dict[str, Any]) -> str:
    """The rows' values and 95 % intervals as an inline SVG forest plot (a row without an interval is
    drawn as its point alone, and says so)."""
    rows = metric["rows"]
    xs = [x for r in rows for x in ([r["value"]] + (r["ci95"] or []))]
    lo, hi = min(xs), max(xs)
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    left, width, step, top = 220, 560, 22, 24
    height = top + step * len(rows) + 30

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    parts = [f'<svg class="forest" xmlns="http://www.w3.org/2000/svg" width="{left + width + 200}" '
             f'height="{height}" role="img" aria-label="{H.esc(metric["name"])}: values and 95 % intervals">']
    for k in range(6):
        v = lo + (hi - lo) * k / 5
        parts.append(f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="{top - 8}" y2="{height - 24}" stroke="#ddd"/>'
                     f'<text x="{x(v):.1f}" y="{height - 10}" text-anchor="middle">{v:.3g}</text>')
    for i, r in enumerate(rows):
        y = top + step * i
        ci = r["ci95"]
        g = [f'<g class="row" data-label="{H.esc(r["label"])}" data-value="{r["value"]!r}" '
             f'data-ci95="{H.esc(ci if ci else "")}">',
             f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{H.esc(r["label"][:34])}</text>']
        if ci:
            g.append(f'<line x1="{x(ci[0]):.1f}" x2="{x(ci[1]):.1f}" y1="{y}" y2="{y}" stroke="black"/>'
                     f'<line x1="{x(ci[0]):.1f}" x2="{x(ci[0]):.1f}" y1="{y - 4}" y2="{y + 4}" stroke="black"/>'
                     f'<line x1="{x(ci[1]):.1f}" x2="{x(ci[1]):.1f}" y1="{y - 4}" y2="{y + 4}" stroke="black"/>')
        g.append(f'<circle cx="{x(r["value"]):.1f}" cy="{y}" r="4" fill="#1f5fbf"/>')
        note = f'{r["letters"]}  rank {r["rank_range"][0]}-{r["rank_range"][1]}' + ("" if ci else "  (no interval)")
        g.append(f'<text x="{left + width + 10}" y="{y + 4}">{H.esc(note)}</text></g>')
        parts.append("".join(g))
    parts.append("</svg>")
    return "".join(parts)


def _doc(title: str, body: str) -> str:
    return H._document(title, body).replace("</style>", _CSS + "</style>", 1)


def _reproduced_cell(row: dict[str, Any]) -> str:
    if row["reproduced"]:
        return f'<span class="mark" title="{H.esc(row["reproduced_reason"])}">&#10003; reproduced</span>'
    return f'<span title="{H.esc(row["reproduced_reason"])}">-</span>'


def _counts_cell(row: dict[str, Any]) -> str:
    return H.esc(counts_text(row["counts"])) if row["counts"] else "-"


def render(board: dict[str, Any]) -> dict[str, str]:
    """The site's pages: ``index.html`` and one page per adjacent pair."""
    pages: dict[str, str] = {}
    sections = []
    for metric in board["metrics"]:
        head = ("<tr><th>#</th><th>result</th><th>value</th><th>95 % interval</th><th>standard error</th>"
                "<th>rank interval</th><th>group</th><th>scored / errored / unscored</th><th>reproduced</th>"
                "<th>vs next</th></tr>")
        body = []
        for i, r in enumerate(metric["rows"]):
            nxt = metric["adjacent_pairs"][i] if i < len(metric["adjacent_pairs"]) else None
            link = (f'<a href="{H.esc(nxt["page"])}">{H.esc(VERDICT_WORDS[nxt["verdict"]])}</a>' if nxt else "")
            body.append(
                f'<tr data-label="{H.esc(r["label"])}">'
                f'<td class="num">{r["position"]}</td><td>{H.esc(r["label"])}</td>'
                f'<td class="num" data-key="value">{_num(r["value"])}</td>'
                f'<td class="{"num" if r["ci95"] else "null"}" data-key="ci95">{H.esc(_ci(r))}</td>'
                f'<td class="{"num" if r["standard_error"] is not None else "null"}" data-key="standard_error">'
                f'{H.esc(_num(r["standard_error"]) if r["standard_error"] is not None else "none: " + r["se_reason"])}'
                f'</td><td class="num" data-key="rank_range">{r["rank_range"][0]}-{r["rank_range"][1]}</td>'
                f'<td data-key="letters">{H.esc(r["letters"])}</td><td data-key="counts">{_counts_cell(r)}</td>'
                f'<td data-key="reproduced">{_reproduced_cell(r)}</td><td>{link}</td></tr>')
        sections.append(
            f'<section><h2>{H.esc(metric["name"])}</h2>'
            f'<p>{metric["n_items"]} items in {metric["n_units"]} independent units. Rank intervals (95 %, '
            f'simultaneous) and groups come from the pairs Holm separates at alpha {board["alpha"]:g}: results '
            "sharing a letter are not separated. A reproduced mark means <code>benchscore verify</code> re-ran "
            "that output from its recorded command and inputs and got every value back.</p>"
            f'<figure>{forest_svg(metric)}<figcaption>{H.esc(metric["name"])}: each result\'s value (dot) and '
            "its own 95 % interval (bar).</figcaption></figure>"
            f'<table class="board">{head}{"".join(body)}</table></section>')
        for p in metric["adjacent_pairs"]:
            pages[p["page"]] = _pair_page(board, metric, p)
    notes = "".join(f"<li>{H.esc(k)}: {H.esc(v)}</li>" for k, v in board["not_compared"].items())
    header = (f"<header><h1>Leaderboard: {H.esc(board['kind'])}</h1><p>{len(board['results'])} results; "
              f"the same {H.esc(', '.join(board['same']))}. Data: <a href=\"leaderboard.json\">leaderboard.json</a>, "
              "Every Eval Ever records under <code>every_eval_ever/</code>.</p></header>")
    extra = f"<section><h2>Not compared</h2><ul>{notes}</ul></section>" if notes else ""
    pages["index.html"] = _doc(f"Leaderboard: {board['kind']}",
                               f"{header}<main>{''.join(sections)}{extra}</main>{H._footer()}")
    return pages


def _pair_page(board: dict[str, Any], metric: dict[str, Any], p: dict[str, Any]) -> str:
    ci = (f"[{_num(p['ci95'][0])}, {_num(p['ci95'][1])}] at {100 * p['ci_level']:.4g} %" if p["ci95"]
          else f"none: {p.get('ci_reason')}")
    pval = f"p = {_num(p['p_value'])}" + (f", Holm-adjusted {_num(p['p_holm'])}" if "p_holm" in p else "")
    rows = "".join(f'<tr data-item="{H.esc(d["item"])}"><td>{H.esc(d["item"])}</td>'
                   f'<td class="num">{_num(d["a"])}</td><td class="num">{_num(d["b"])}</td>'
                   f'<td class="num">{_num(d["difference"])}</td></tr>' for d in p["items_that_differ_most"])
    body = (f'<header><p><a href="index.html">&larr; leaderboard</a></p><h1>{H.esc(p["a"])} vs {H.esc(p["b"])}</h1>'
            f'<p>{H.esc(metric["name"])}: {H.esc(VERDICT_WORDS[p["verdict"]])} ({H.esc(p["verdict_reason"])}). '
            f'Difference {_num(p["difference"])}, interval {H.esc(ci)}; {H.esc(pval)} ({H.esc(p["test"])}, '
            f'{p["n_units"]} units).</p></header><main><section><h2>The samples that separate them</h2>'
            f'<p>The {len(p["items_that_differ_most"])} items whose values differ most (at most <code>--top</code>; '
            f'largest first), of {p["n_items"]}.</p><table class="board"><tr><th>item</th><th>{H.esc(p["a"])}</th><th>{H.esc(p["b"])}</th>'
            f'<th>difference</th></tr>{rows}</table>'
            + ("" if rows else "<p>No item differs.</p>") + f"</section></main>{H._footer()}")
    return _doc(f"{p['a']} vs {p['b']}", body)


__all__ = ["EEE_SOURCE", "EEE_VERSION", "FORMAT", "build", "verify_kinds", "eee_records", "output_about",
           "sources_of", "formats", "forest_svg", "record_names", "render"]
