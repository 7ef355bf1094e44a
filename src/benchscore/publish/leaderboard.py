"""``benchscore leaderboard RESULTS... --output-dir SITE``: a leaderboard a benchmark can publish.

The table is compare's leaderboard (:func:`benchscore.stats.compare.compare`: rank intervals and
group labels from the pairs Holm separates, each result's own 95 % interval) with, per result, its
standard error (:func:`benchscore.stats.intervals.standard_error`), its scored / errored / unscored
counts and whether ``benchscore verify`` reproduced it (contract outputs), and compare's verdicts
between neighbouring rows. This module computes no statistic of its own: it arranges what compare and
``stats`` computed and writes it three ways (:func:`write_site`, all or nothing):

- ``index.html``: one self-contained page (inline CSS, an inline SVG forest plot that scales to the
  page, no script, no network): the forest plot of the top of the board (the first :data:`PLOT_TOP`
  results and any result tied with the last of them), the table of every result; and, up to
  :data:`LARGE_BOARD` results, ``pair-M-K.html`` per adjacent pair K of metric M (the items that
  separate them); past it, ``result-M-NAME.html`` per result (its verdicts against its
  :data:`NEIGHBOURS` neighbours on each side);
- ``leaderboard.json``: the same table (:func:`formats`, validated on write);
- ``every_eval_ever/<model>.json``: one Every Eval Ever aggregate record (schema 0.3.0, the current
  upstream release, validated on write) per result, ``score_details.uncertainty`` holding the interval,
  standard error, method and sample count, ``source_metadata.additional_details`` the leaderboard that
  wrote it and its sources' sha256 (``benchscore verify`` re-runs that leaderboard and compares it).

Where an interval, a standard error or a list is null, the reason is written in its place, never a
number. There is no bare 1..N rank: the rank interval is the rank.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchscore.common import html as H
from benchscore.common.errors import BadInput
from benchscore.stats.compare import VERDICT_WORDS, Entry, Metric, counts_text, fragility_text, groups_text
from benchscore.stats.intervals import NoInterval, cluster_codes, standard_error

FORMAT = "benchscore-leaderboard"
#: the Every Eval Ever schema the records follow: the current upstream release (sources/data/every_eval_ever)
EEE_VERSION = "0.3.0"
#: ``source_metadata.source_name`` of every record a leaderboard writes
EEE_SOURCE = "benchscore leaderboard"
#: the method name of the standard error written beside each number
SE_METHOD = "cr2_cluster_robust"
#: the forest plot draws the first this many rows (and every row tied with the last of them)
PLOT_TOP = 50
#: up to this many results a board has a page per adjacent pair; past it, a page per result
LARGE_BOARD = 100
#: on a large board, each result's page gives its verdicts against this many rows above and below it
NEIGHBOURS = 10


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
        label: str
        value: float
        ci95: list[float] | None = Field(min_length=2, max_length=2, description="the result's own 95 % interval")
        ci_method: str | None = None
        ci_reason: str | None = Field(None, description="why there is no interval (never a number in its place)")
        standard_error: float | None
        se_reason: str | None = None
        rank_range: list[int] = Field(min_length=2, max_length=2,
                                      description="the 95 % rank interval (simultaneous): the rank")
        groups: list[str] | None = Field(description=(
            "the labels of the result's groups: two results share a label exactly when they are not separated "
            "(a .. z up to 26 groups, two letters each past 26); null past 676 groups (groups_reason)"))
        groups_reason: str | None = None
        indistinguishable_from: list[str] | None = Field(description=(
            "the results it is not separated from; null on a board of more than 100 results "
            "(indistinguishable_reason): its rank interval and its page say it"))
        indistinguishable_reason: str | None = None
        n_indistinguishable: int = Field(ge=0, description="how many results it is not separated from")
        fragile_separations: list[str] | None = Field(None, description=(
            "the results it is separated from by a fragile verdict only (one unit, or under 10 % of the units): "
            "compare's, counted in the rank interval and groups; each pair's page says what it rests on"))
        counts: dict[str, Any] | None = Field(description="scored / errored / unscored sample x epochs and the "
                                                          "errors policy (results of other tools)")
        counts_reason: str | None = None
        reproduced: bool | None = Field(description="true only when benchscore verify reproduced the output; "
                                                    "null: nothing to re-run (results of another tool)")
        reproduced_reason: str
        eee_record: str = Field(description="the Every Eval Ever aggregate record of this result (path in the site)")
        page: str | None = Field(description="this result's page (its verdicts against its neighbours) on a board of "
                                             "more than 100 results; null: the board has a page per adjacent pair")

    class PairVerdict(Format):
        a: str = Field(description="the upper row")
        b: str
        verdict: Literal["differs", "not_separated", "cannot_separate_at_this_n"]
        verdict_reason: str
        difference: float = Field(description="a - b")
        ci95: list[float] | None
        ci_level: float
        ci_reason: str | None = None
        p_value: float
        p_holm: float | None = None
        test: str
        n_items: int
        n_units: int
        fragility: dict[str, Any] | None = Field(None, description=(
            "differs: the fewest units whose removal changes the verdict, as compare gives it "
            "(benchscore-compare's fragility)"))

    class AdjacentPair(PairVerdict):
        page: str
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
        plotted: int = Field(ge=0, description="the forest plot's rows: the first 50 and every row tied with the 50th")
        pages: Literal["adjacent_pair", "result"] = Field(
            description="adjacent_pair: a page per adjacent pair (adjacent_pairs); result: a board of more than 100 "
                        "results has a page per result with its verdicts against its neighbours (neighbour_pairs)")
        adjacent_pairs: list[AdjacentPair]
        neighbour_pairs: list[PairVerdict] = Field(
            description="a board of more than 100 results: every pair of rows at most 10 places apart, upper first")
        rank_sets: dict[str, Any] | None = Field(None, description=(
            "a board ranked by the max-t rank sets (compare's rank_sets of this metric: draws, critical values "
            "and their Monte-Carlo error); absent where every pair's exact test and Holm made the ranks"))

    class LeaderboardOutput(Format):
        """Output of ``benchscore leaderboard``: compare's leaderboard of each metric, with counts,
        standard errors, the reproduced mark and the verdicts between neighbouring rows (docs/results.md)."""

        format: Literal["benchscore-leaderboard"]
        kind: str
        same: dict[str, Any]
        results: list[str]
        alpha: float
        level: float
        metrics: list[Board]
        not_compared: dict[str, str]
        intersection: dict[str, Any] | None
        judge: dict[str, Any] | None = Field(None, description="--judge-calibration: values corrected for a grader's "
                                             "errors, the grader's agreement and the pairs on corrected values")
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


def _standard_error(m: Metric, items: Sequence[str]) -> tuple[float | None, str | None]:
    """The standard error of ``m`` over ``items`` (all its items, or with ``--intersection`` the items
    every result has)."""
    if m.strata is not None or m.weights is not None:
        return None, "a weighted sum of strata: its interval combines each stratum's own, no single standard error"
    try:
        num, den = _units(m, items)
        return standard_error(num, den) * m.scale, None
    except NoInterval as exc:
        return None, str(exc)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.") or "result"


def record_names(labels: Sequence[str]) -> dict[str, str]:
    """A file name per label (unique, safe in a URL; a label that is a file name loses its ``.json``, which the
    record's own name adds back: ``e1.json`` is ``e1.json``, never ``e1.json.json``)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for label in labels:
        base, k = _slug(label.removesuffix(".json")), 1
        name = base
        while name in taken:
            k += 1
            name = f"{base}-{k}"
        out[label] = name
        taken.add(name)
    return out


def _separated_by(metric: dict[str, Any], alpha: float) -> str:
    """What separated the pairs a board's rank intervals come from, in words (with the max-t critical value and
    its Monte-Carlo error when the rank sets made them)."""
    sets = metric.get("rank_sets")
    if not sets:
        return f"from the pairs Holm separates at alpha {alpha:g}; groups come from the same pairs"
    if sets.get("critical_value") is None:
        return f"from the max-t rank sets, which separate no pair here: {H.esc(sets.get('reason') or '')}"
    se = sets["critical_value_mc_standard_error"]
    return (f"from the max-t bootstrap over every pair with stepdown ({sets['draws']:,} multiplier draws; a pair is "
            f"separated when |T| exceeds {sets['critical_value']:.4g}, Monte-Carlo standard error {se:.2g}; "
            f"{sets.get('pairs_within_mc_error') or 0} pairs lie within that error)")


def plotted_rows(values: Sequence[float], top: int = PLOT_TOP) -> int:
    """How many of the rows (values highest first) the forest plot draws: the first ``top`` and every
    row after them with the same value as the last of them (a tie is never cut in two)."""
    n = len(values)
    if n <= top:
        return n
    k = top
    while k < n and values[k] == values[top - 1]:
        k += 1
    return k


def _pair_verdict(row: dict[str, Any], a: str, b: str, flipped: bool) -> dict[str, Any]:
    """Compare's comparison ``row`` of one pair, from the upper row ``a``'s side."""
    sign = -1.0 if flipped else 1.0
    ci = row["ci95"]
    return {"a": a, "b": b, "verdict": row["verdict"], "verdict_reason": row["verdict_reason"],
            "difference": sign * row["difference"],
            "ci95": (sorted([sign * ci[0], sign * ci[1]]) if ci else None), "ci_level": row["ci_level"],
            **({"ci_reason": row["ci_reason"]} if row.get("ci_reason") else {}),
            "p_value": row["p_value"], **({"p_holm": row["p_holm"]} if "p_holm" in row else {}),
            "test": row["test"], "n_items": row["n_items"], "n_units": row["n_units"],
            **({"fragility": row["fragility"]} if row.get("fragility") else {})}


def build(doc: dict[str, Any], entries: Sequence[Entry],
          reproduced: Mapping[str, tuple[bool | None, str]]) -> dict[str, Any]:
    """The leaderboard document (without provenance) from compare's document ``doc`` (built with
    ``standings=True``), its entries and, per label, ``(reproduced, why)``. Only the pairs of rows it
    shows are read from ``doc["comparisons"]``: adjacent ones (up to :data:`LARGE_BOARD` results), or
    those at most :data:`NEIGHBOURS` places apart."""
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
        large = len(board) > LARGE_BOARD
        rows, pairs, neighbours = [], [], []
        first = pair_of[(board[0]["label"], board[1]["label"], name)][0]
        left_out = (dropped.get(name) or {}).get("dropped") or {}
        for r in board:
            m = metric_of[(r["label"], name)]
            gone = set(left_out.get(r["label"], ()))
            se, se_reason = _standard_error(m, [i for i in m.items if i not in gone] if gone else list(m.items))
            done, why = reproduced[r["label"]]
            rows.append({
                "label": r["label"], "value": r["value"], "ci95": r["ci95"],
                "ci_method": (r.get("ci_method") or m.ci_method or "the output's own") if r["ci95"] else
                r.get("ci_method", m.ci_method),
                **({"ci_reason": r.get("ci_reason") or "the output gives no interval"} if not r["ci95"] else {}),
                "standard_error": se, **({"se_reason": se_reason} if se_reason else {}),
                "rank_range": r["rank_range"], "groups": r["groups"],
                **({"groups_reason": r["groups_reason"]} if r.get("groups_reason") else {}),
                "indistinguishable_from": None if large else r["indistinguishable_from"],
                **({"indistinguishable_reason": f"a board of {len(board)} results (more than {LARGE_BOARD}) lists "
                                                "none: the rank interval says where it can stand, its page gives its "
                                                "verdicts against its neighbours"} if large else {}),
                "n_indistinguishable": len(r["indistinguishable_from"]),
                **({"fragile_separations": r["fragile_separations"]} if r.get("fragile_separations") else {}),
                "counts": r.get("counts"),
                **({} if r.get("counts") else {"counts_reason": "a contract output: its items are the contract's; "
                                                                "errors are counted as the contract says"}),
                "reproduced": done, "reproduced_reason": why,
                "eee_record": f"every_eval_ever/{names[r['label']]}.json",
                "page": f"result-{k}-{names[r['label']]}.html" if large else None,
            })
        for j in range(len(board) - 1):
            for d in range(1, (NEIGHBOURS if large else 1) + 1):
                if j + d >= len(board):
                    break
                a, b = board[j]["label"], board[j + d]["label"]
                row, flipped = pair_of[(a, b, name)]
                verdict = _pair_verdict(row, a, b, flipped)
                if large:
                    neighbours.append(verdict)
                    continue
                pairs.append({**verdict, "page": f"pair-{k}-{j + 1}.html", "items_that_differ_most": [
                    {**x, "a": x["b"], "b": x["a"], "difference": None if x["difference"] is None else -x["difference"]}
                    if flipped else x for x in row["items_that_differ_most"]]})
        ms = [metric_of[(r["label"], name)] for r in board]
        seen = [m.scale * n / d for m in ms for n, d in m.items.values() if d]
        bounds = list(ms[0].bounds)
        boards.append({"name": name, "bounds": bounds, "observed": [min(seen, default=0.0), max(seen, default=0.0)],
                       "n_items": first["n_items"], "n_units": first["n_units"], "rows": rows,
                       "plotted": plotted_rows([r["value"] for r in board]),
                       "pages": "result" if large else "adjacent_pair",
                       "adjacent_pairs": pairs, "neighbour_pairs": neighbours,
                       **({"rank_sets": sets} if (sets := (doc.get("rank_sets") or {}).get(name)) else {})})
    return {"format": FORMAT, "kind": doc["kind"], "same": doc["same"], "results": doc["results"],
            "alpha": doc["alpha"], "level": doc["level"], "metrics": boards,
            "not_compared": doc["not_compared"], "intersection": doc["intersection"],
            **({"judge": doc["judge"]} if doc.get("judge") else {})}


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
            details = {"rank_range": f"{row['rank_range'][0]}-{row['rank_range'][1]}",
                       "groups": groups_text(row["groups"]),
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
table.board { width: 100%; }
table.board td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.board td.interval { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.board td.null { color: #8a4b00; }
table.board td.label { overflow-wrap: anywhere; min-width: 9em; }
table.board td.label.short { white-space: nowrap; }
table.board td.groups { overflow-wrap: anywhere; min-width: 3em; }
svg.forest { display: block; width: 100%; height: auto; }
svg.forest text { font-family: "DejaVu Sans", Verdana, sans-serif; font-size: 11px; }
svg.forest text.axis-title { font-size: 12px; }
.mark { color: #1a7f37; font-weight: bold; white-space: nowrap; }
"""

#: advance widths of DejaVu Sans (the face the plot asks for first; the widest common sans-serif), per
#: printable ASCII character from the space on, in thousandths of the font size; any other character
#: counts as a whole em. Labels are measured with them so that they stay inside the figure.
_WIDTHS = (318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636,
           636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775,
           752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337,
           390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635,
           411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838)
#: a label longer than this many characters is drawn shortened (with an ellipsis; the table has it whole)
_LABEL_CHARS = 40
_GROUPS_CHARS = 24
#: a name of at most this many characters is never broken in a table
_SHORT_LABEL = 24
_FONT = 11.0


def text_width(text: str, size: float = _FONT) -> float:
    """The width ``text`` takes at font ``size`` (px), from the advance widths of DejaVu Sans
    (:data:`_WIDTHS`; a character outside printable ASCII counts as a whole em), 5 % over."""
    units = sum(_WIDTHS[ord(c) - 32] if 32 <= ord(c) < 127 else 1000 for c in text)
    return 1.05 * size * units / 1000.0


def _shorten(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "\u2026"


def round_ticks(low: float, high: float, bounds: Sequence[float | None] = (None, None),
                count: int = 5) -> tuple[float, float, list[float]]:
    """An axis for values in ``[low, high]``: ``(start, end, ticks)`` with ticks at round steps
    (1, 2 or 5 times a power of ten, about ``count`` of them), the axis from the last round step at or
    below ``low`` to the first at or above ``high``, and never past the metric's ``bounds`` (a [0, 1]
    metric's axis stays inside [0, 1]); equal ``low`` and ``high`` get a step around them."""
    lo_b, hi_b = bounds
    if not high - low > 1e-9 * max(1.0, abs(low), abs(high)):  # one value (or all within rounding)
        half = max(abs(low) * 0.05, 1e-3)
        low, high = low - half, high + half
        low = low if lo_b is None else max(low, lo_b)
        high = high if hi_b is None else min(high, hi_b)
    raw = (high - low) / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw * (1 - 1e-9))
    decimals = max(0, -math.floor(math.log10(step)) + 1)
    below, above = math.floor(low / step), math.ceil(high / step)
    if (below + 1) * step <= low + 1e-12 * max(1.0, abs(low)):  # low on a step, up to float noise of low itself
        below += 1
    if (above - 1) * step >= high - 1e-12 * max(1.0, abs(high)):
        above -= 1
    start, end = round(below * step, decimals), round(above * step, decimals)
    if lo_b is not None:
        start = max(start, lo_b)
    if hi_b is not None:
        end = min(end, hi_b)
    first = math.ceil(start / step - 1e-9)
    ticks = []
    for j in range(first, math.floor(end / step + 1e-9) + 1):
        ticks.append(round(j * step, decimals) + 0.0)
    return start, end, ticks


def tick_text(v: float, step: float) -> str:
    """A tick's label: as many decimals as its step has (0.15, 0.2; 1e-05 steps keep theirs), no trailing zeros."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    text = f"{v:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def _num(v: Any) -> str:
    return "-" if v is None else f"{v:.4g}"


def _ci(row: dict[str, Any]) -> str:
    return f"[{_num(row['ci95'][0])}, {_num(row['ci95'][1])}]" if row["ci95"] else f"none: {row['ci_reason']}"


def _groups_note(groups: list[str] | None) -> str:
    """A row's groups beside the forest plot: all of them, or the first few and how many more (the
    table lists every one)."""
    if not groups:
        return ""
    shown: list[str] = []
    for g in groups:
        if len(", ".join([*shown, g])) > _GROUPS_CHARS:
            break
        shown.append(g)
    more = len(groups) - len(shown)
    return "  groups " + ", ".join(shown) + (f", \u2026 (+{more})" if more else "")


def _rank(row: dict[str, Any]) -> str:
    lo, hi = row["rank_range"]
    return f"{lo}-{hi}"


def forest_svg(metric: dict[str, Any]) -> str:
    """The top of the board (its ``plotted`` first rows) as an inline SVG forest plot: each row's value
    (dot) and 95 % interval (bar), its rank interval and groups on the right, on round ticks inside the
    metric's bounds with an axis title naming the metric. It scales to its container (a viewBox, no
    width in pixels); every label is measured (:func:`text_width`) so that it stays inside the figure.
    A row without an interval is drawn as its point alone, and says so."""
    rows = metric["rows"][:metric.get("plotted", len(metric["rows"]))]
    xs = [x for r in rows for x in ([r["value"]] + (r["ci95"] or []))]
    start, end, ticks = round_ticks(min(xs), max(xs), metric["bounds"])
    labels = [_shorten(r["label"], _LABEL_CHARS) for r in rows]
    notes = [f"rank {_rank(r)}{_groups_note(r['groups'])}" + ("" if r["ci95"] else "  (no interval)") for r in rows]
    pad = 8.0
    left = pad + max(text_width(x) for x in labels) + 10.0
    right = 10.0 + max(text_width(x) for x in notes) + pad
    width = max(440.0, 960.0 - left - right)
    step, top = 22.0, 18.0
    axis_y = top + step * (len(rows) - 0.5)
    title = f"{metric['name']}: value and 95 % interval"
    height = axis_y + 46.0
    total = left + width + right
    span = (end - start) or 1.0

    def x(v: float) -> float:
        return left + (min(max(v, start), end) - start) / span * width

    parts = [f'<svg class="forest" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total:.0f} {height:.0f}" '
             f'preserveAspectRatio="xMinYMin meet" role="img" '
             f'aria-label="{H.esc(metric["name"])}: values and 95 % intervals of the first {len(rows)} results">']
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top - 10:.0f}" y2="{axis_y:.1f}" stroke="#ddd"/>'
                     f'<text class="tick" x="{x(t):.1f}" y="{axis_y + 15:.1f}" text-anchor="middle">'
                     f'{tick_text(t, ticks[1] - ticks[0])}</text>')
    parts.append(f'<line x1="{x(start):.1f}" x2="{x(end):.1f}" y1="{axis_y:.1f}" y2="{axis_y:.1f}" stroke="#555"/>'
                 f'<text class="axis-title" x="{left + width / 2:.1f}" y="{axis_y + 36:.1f}" text-anchor="middle">'
                 f'{H.esc(title)}</text>')
    for i, (r, label, note) in enumerate(zip(rows, labels, notes, strict=True)):
        y = top + step * i
        ci = r["ci95"]
        g = [f'<g class="row" data-label="{H.esc(r["label"])}" data-value="{r["value"]!r}" '
             f'data-ci95="{H.esc(ci if ci else "")}">',
             f'<text class="label" x="{left - 10:.1f}" y="{y + 4:.1f}" text-anchor="end">'
             + (f"<title>{H.esc(r['label'])}</title>" if label != r["label"] else "") + f"{H.esc(label)}</text>"]
        if ci:
            g.append(f'<line x1="{x(ci[0]):.1f}" x2="{x(ci[1]):.1f}" y1="{y}" y2="{y}" stroke="black"/>'
                     f'<line x1="{x(ci[0]):.1f}" x2="{x(ci[0]):.1f}" y1="{y - 4}" y2="{y + 4}" stroke="black"/>'
                     f'<line x1="{x(ci[1]):.1f}" x2="{x(ci[1]):.1f}" y1="{y - 4}" y2="{y + 4}" stroke="black"/>')
        g.append(f'<circle cx="{x(r["value"]):.1f}" cy="{y}" r="4" fill="#1f5fbf"/>')
        g.append(f'<text class="note" x="{left + width + 10:.1f}" y="{y + 4:.1f}">{H.esc(note)}</text></g>')
        parts.append("".join(g))
    parts.append("</svg>")
    return "".join(parts)


#: the style of the pair and result pages (there may be thousands): the report's look, only what they use
_LEAN_CSS = """
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
  color: #1d1d1f; background: #fff; margin: 0; }
header, main, footer { max-width: 1100px; margin: 0 auto; padding: 0 1.2rem; }
header { padding-top: 1rem; border-bottom: 2px solid #1d1d1f; }
h1 { font-size: 1.6rem; margin: .3rem 0; overflow-wrap: anywhere; }
h2 { font-size: 1.35rem; margin: 2rem 0 .5rem; padding: .3rem .5rem; background: #f0f0f0;
  border-left: 6px solid #0072B2; }
a { color: #0b57a4; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9em; }
table { border-collapse: collapse; margin: .3rem 0 .8rem; font-size: .85rem; max-width: 100%; }
th, td { border: 1px solid #d0d0d0; padding: .15rem .45rem; text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
footer { margin-top: 3rem; padding: 1rem 1.2rem 2rem; color: #555; font-size: .8rem; border-top: 1px solid #d0d0d0; }
"""


def _doc(title: str, body: str, *, lean: bool = False) -> str:
    page = H._document(title, body, "benchscore leaderboard")
    if lean:
        page = page.replace(H.CSS, _LEAN_CSS, 1)
    return page.replace("</style>", _CSS + "</style>", 1)


def _reproduced_cell(row: dict[str, Any]) -> str:
    if row["reproduced"]:
        return f'<span class="mark" title="{H.esc(row["reproduced_reason"])}">&#10003; reproduced</span>'
    return f'<span title="{H.esc(row["reproduced_reason"])}">-</span>'


def _counts_cell(row: dict[str, Any]) -> str:
    return H.esc(counts_text(row["counts"])) if row["counts"] else "-"


def _se_cell(r: dict[str, Any]) -> str:
    return (f'<td class="num" data-key="standard_error">{_num(r["standard_error"])}</td>'
            if r["standard_error"] is not None else
            f'<td class="null" data-key="standard_error">{H.esc("none: " + r["se_reason"])}</td>')


def _groups_cell(r: dict[str, Any]) -> str:
    return (f'<td class="groups" data-key="groups">{H.esc(groups_text(r["groups"]))}</td>' if r["groups"] else
            f'<td class="null" data-key="groups" title="{H.esc(r.get("groups_reason") or "")}">-</td>')


def _label_class(label: str) -> str:
    """A short name stays on one line; a long one may break (at its parts first)."""
    return "label short" if len(label) <= _SHORT_LABEL else "label"


def _label_html(label: str) -> str:
    """A name in a table cell: a long one with break opportunities after its ``/``, ``_`` and ``.``
    (Chromium breaks at them even where a short one is kept on one line, so a short one gets none)."""
    return H.esc(label) if len(label) <= _SHORT_LABEL else H.prose(label)


def _row_cells(r: dict[str, Any], label_html: str) -> str:
    """The cells every table of rows shares: rank interval, result, value, interval, standard error, groups."""
    return (f'<td class="num" data-key="rank_range">{_rank(r)}</td><td class="{_label_class(r["label"])}">'
            f'{label_html}</td>'
            f'<td class="num" data-key="value">{_num(r["value"])}</td>'
            f'<td class="{"interval" if r["ci95"] else "null"}" data-key="ci95">{H.esc(_ci(r))}</td>'
            f"{_se_cell(r)}{_groups_cell(r)}")


_ROW_HEAD = ("<th>rank interval</th><th>result</th><th>value</th><th>95 % interval</th><th>standard error</th>"
             "<th>groups</th>")


def render(board: dict[str, Any]) -> dict[str, str]:
    """The site's pages: ``index.html`` and one page per adjacent pair, or per result on a large board."""
    pages: dict[str, str] = {}
    sections = []
    for metric in board["metrics"]:
        rows = metric["rows"]
        large = metric["pages"] == "result"
        place = {r["label"]: i for i, r in enumerate(rows)}
        by_pair = {(p["a"], p["b"]): p for p in metric["neighbour_pairs"]}
        nxt = ({p["a"]: p for p in metric["neighbour_pairs"] if place[p["b"]] == place[p["a"]] + 1}
               if large else {p["a"]: p for p in metric["adjacent_pairs"]})
        contract = any(r["reproduced"] is not None for r in rows)  # results of other tools: nothing to re-run
        head = (f"<tr>{_ROW_HEAD}<th>scored / errored / unscored</th>{'<th>reproduced</th>' if contract else ''}"
                "<th>vs next</th></tr>")
        body = []
        for r in rows:
            p = nxt.get(r["label"])
            link = ""
            if p:
                link = f'<a href="{H.esc(r["page"] if large else p["page"])}">{H.esc(VERDICT_WORDS[p["verdict"]])}</a>'
            label = f'<a href="{H.esc(r["page"])}">{_label_html(r["label"])}</a>' if large else _label_html(r["label"])
            body.append(f'<tr data-label="{H.esc(r["label"])}">{_row_cells(r, label)}'
                        f'<td data-key="counts">{_counts_cell(r)}</td>'
                        + (f'<td data-key="reproduced">{_reproduced_cell(r)}</td>' if contract else "")
                        + f'<td data-key="next">{link}</td></tr>')
        n, shown = len(rows), metric["plotted"]
        top = (f"the first {shown} of {n} results (the first {PLOT_TOP}"
               + (f" and {shown - PLOT_TOP} tied with the {PLOT_TOP}th" if shown > PLOT_TOP else "")
               + "); the table lists every result" if shown < n else f"all {n} results")
        groups_note = (f" Groups: {H.esc(rows[0]['groups_reason'])}." if rows and rows[0].get("groups_reason")
                       else " Results sharing a group label are not separated.")
        pages_note = (f" Each result's name opens its page: its verdicts against the {NEIGHBOURS} results above and "
                      "below it." if large else " The last column opens the page of a row and the next one: the "
                      "items that separate them.")
        sections.append(
            f'<section><h2>{H.esc(metric["name"])}</h2>'
            f'<p>{metric["n_items"]} items in {metric["n_units"]} independent units. The rank interval (95 %, '
            f'simultaneous over the results) is the rank: the places the result can hold, '
            f'{_separated_by(metric, board["alpha"])}.{groups_note}'
            + (" A reproduced mark means <code>benchscore verify</code> re-ran that output from its recorded command "
               "and inputs and got every value back." if contract else "") + f"{pages_note}</p>"
            f'<figure>{forest_svg(metric)}<figcaption>{H.esc(metric["name"])}: {H.esc(top)}: each result\'s value '
            "(dot) and its own 95 % interval (bar), with its rank interval and groups.</figcaption></figure>"
            f'<table class="board">{head}{"".join(body)}</table></section>')
        if large:
            for i, r in enumerate(rows):
                pages[r["page"]] = _result_page(metric, i, by_pair)
        else:
            for p in metric["adjacent_pairs"]:
                pages[p["page"]] = _pair_page(board, metric, p)
    notes = "".join(f"<li>{H.esc(k)}: {H.esc(v)}</li>" for k, v in board["not_compared"].items())
    header = (f"<header><h1>Leaderboard: {H.esc(board['kind'])}</h1><p>{len(board['results'])} results; "
              f"the same {H.esc(', '.join(board['same']))}. Data: <a href=\"leaderboard.json\">leaderboard.json</a>, "
              "Every Eval Ever records under <code>every_eval_ever/</code>.</p></header>")
    extra = f"<section><h2>Not compared</h2><ul>{notes}</ul></section>" if notes else ""
    extra += _judge_section(board.get("judge"))
    pages["index.html"] = _doc(f"Leaderboard: {board['kind']}",
                               f"{header}<main>{''.join(sections)}{extra}</main>{H._footer()}")
    return pages


def _judge_section(judge: dict[str, Any] | None) -> str:
    """The graders measured (``--judge-calibration``): per metric, each result's value corrected for its grader's
    errors with the grader's agreement, and the pairs on corrected values."""
    if not judge:
        return ""

    def ci(v: dict[str, Any]) -> str:
        return (f"[{_num(v['ci95'][0])}, {_num(v['ci95'][1])}]" if v.get("ci95") else
                f"none: {v.get('ci_reason') or v.get('verdict_reason') or '-'}")

    parts = [f"<section><h2>The grader, measured against known values ({H.esc(judge['calibration'])})</h2>"
             f"<p>{H.esc(judge['method'])}.</p>"]
    for name, m in judge["metrics"].items():
        rows = []
        for label, r in m["results"].items():
            a = r.get("agreement")
            grader = ("-" if a is None else
                      f"kappa {_num(a['kappa']['value'])} {ci(a['kappa'])}; sensitivity {_num(a['sensitivity']['value'])}, "
                      f"specificity {_num(a['specificity']['value'])}; "
                      + ("measured" if a["measured"] else f"not decided by a measured grader ({a['measured_reason']})"))
            rows.append(f"<tr><td>{H.esc(label)}</td><td class=\"num\">{_num(r['value'])}</td>"
                        f"<td class=\"num\">{_num(r['corrected'])}</td><td>{H.esc(ci(r))}</td>"
                        f"<td class=\"num\">{r['known']}</td><td>{H.esc(grader if a else r.get('agreement_reason'))}</td></tr>")
        pairs = "".join(f"<tr><td>{H.esc(p['a'])} vs {H.esc(p['b'])}</td><td>{H.esc(VERDICT_WORDS[p['verdict']])}</td>"
                        f"<td class=\"num\">{_num(p['corrected_difference'])}</td><td>{H.esc(ci(p))}</td>"
                        f"<td>{H.esc(p['verdict_reason'])}</td></tr>" for p in m["pairs"])
        parts.append(f"<h3>{H.esc(name)}</h3><table class=\"board\"><tr><th>result</th><th>grader's value</th>"
                     "<th>corrected</th><th>95 % interval</th><th>known</th><th>grader's agreement</th></tr>"
                     f"{''.join(rows)}</table><table class=\"board\"><tr><th>pair</th><th>verdict</th>"
                     f"<th>corrected difference</th><th>interval</th><th>why</th></tr>{pairs}</table>")
    return "".join(parts) + "</section>"


def level_text(level: float) -> str:
    """A confidence level in percent, with as many digits as it takes not to read as 100 % (Holm's
    matching level over many pairs is 1 - alpha / (m - r): 99.99999 %)."""
    for digits in range(4, 16):
        text = f"{100 * level:.{digits}g}"
        if text != "100" or level >= 1.0:
            return f"{text} %"
    return f"{100 * level!r} %"


def _pair_text(p: dict[str, Any]) -> tuple[str, str]:
    ci = (f"[{_num(p['ci95'][0])}, {_num(p['ci95'][1])}] at {level_text(p['ci_level'])}" if p["ci95"]
          else f"none: {p.get('ci_reason')}")
    pval = f"p = {_num(p['p_value'])}" + (f", Holm-adjusted {_num(p['p_holm'])}" if "p_holm" in p else "")
    return ci, pval


def _pair_page(board: dict[str, Any], metric: dict[str, Any], p: dict[str, Any]) -> str:
    ci, pval = _pair_text(p)
    rows = "".join(f'<tr data-item="{H.esc(d["item"])}"><td>{H.esc(d["item"])}</td>'
                   f'<td class="num">{_num(d["a"])}</td><td class="num">{_num(d["b"])}</td>'
                   f'<td class="num">{_num(d["difference"])}</td></tr>' for d in p["items_that_differ_most"])
    body = (f'<header><p><a href="index.html">&larr; leaderboard</a></p><h1>{H.esc(p["a"])} vs {H.esc(p["b"])}</h1>'
            f'<p>{H.esc(metric["name"])}: {H.esc(VERDICT_WORDS[p["verdict"]])} ({H.esc(p["verdict_reason"])}). '
            f'Difference {_num(p["difference"])}, interval {H.esc(ci)}; {H.esc(pval)} ({H.esc(p["test"])}, '
            f'{p["n_units"]} units).' + (f' It {H.esc(fragility_text(p))}.' if p.get("fragility") else "")
            + '</p></header><main><section><h2>The samples that separate them</h2>'
            f'<p>The {len(p["items_that_differ_most"])} items whose values differ most (at most <code>--top</code>; '
            f'largest first), of {p["n_items"]}.</p><table class="board"><tr><th>item</th><th>{H.esc(p["a"])}</th>'
            f'<th>{H.esc(p["b"])}</th><th>difference</th></tr>{rows}</table>'
            + ("" if rows else "<p>No item differs.</p>") + f"</section></main>{H._footer()}")
    return _doc(f"{p['a']} vs {p['b']}", body, lean=True)


def _result_page(metric: dict[str, Any], here: int, by_pair: Mapping[tuple[str, str], dict[str, Any]]) -> str:
    """The page of row ``here`` on a large board: its numbers, then its verdicts against the
    :data:`NEIGHBOURS` rows above and below it (``by_pair``: the neighbour pairs by (upper, lower);
    the difference from its side: this result minus the other)."""
    rows = metric["rows"]
    r = rows[here]
    lines = []
    for other in rows[max(0, here - NEIGHBOURS):here + NEIGHBOURS + 1]:
        if other is r:
            lines.append(f'<tr class="self"><td class="num">{_rank(r)}</td>'
                         f'<td class="{_label_class(r["label"])}"><strong>'
                         f'{_label_html(r["label"])}</strong> (this result)</td><td class="num">{_num(r["value"])}</td>'
                         '<td colspan="4"></td></tr>')
            continue
        p = by_pair.get((r["label"], other["label"]))
        sign = 1.0
        if p is None:
            p, sign = by_pair[(other["label"], r["label"])], -1.0
        ci = sorted([sign * p["ci95"][0], sign * p["ci95"][1]]) if p["ci95"] else None
        interval = (f"[{_num(ci[0])}, {_num(ci[1])}] at {level_text(p['ci_level'])}" if ci
                    else f"none: {p.get('ci_reason')}")
        lines.append(f'<tr data-label="{H.esc(other["label"])}"><td class="num">{_rank(other)}</td>'
                     f'<td class="{_label_class(other["label"])}"><a href="{H.esc(other["page"])}">'
                     f'{_label_html(other["label"])}</a></td>'
                     f'<td class="num">{_num(other["value"])}</td>'
                     f'<td data-key="verdict">{H.esc(VERDICT_WORDS[p["verdict"]])}</td>'
                     f'<td class="num">{_num(sign * p["difference"])}</td><td class="interval">{H.esc(interval)}</td>'
                     f'<td>{H.esc(_pair_text(p)[1])} ({H.esc(p["test"])})</td></tr>')
    facts = (f"{H.esc(metric['name'])} {_num(r['value'])}, 95 % interval {H.esc(_ci(r))}; standard error "
             + (_num(r["standard_error"]) if r["standard_error"] is not None else H.esc("none: " + r["se_reason"]))
             + f"; rank interval {_rank(r)} of {len(rows)}; groups "
             + (H.esc(groups_text(r["groups"])) if r["groups"] else H.esc(f"none ({r.get('groups_reason')})"))
             + f"; not separated from {r['n_indistinguishable']} of the {len(rows) - 1} other results"
             + (f"; {H.esc(counts_text(r['counts']))}" if r["counts"] else "") + "."
             + (f" Reproduced: {H.esc(r['reproduced_reason'])}." if r["reproduced"] is not None else ""))
    body = (f'<header><p><a href="index.html">&larr; leaderboard</a></p><h1>{H.esc(r["label"])}</h1>'
            f"<p>{facts}</p></header><main><section><h2>Against its neighbours</h2>"
            f"<p>Compare's verdict against each of the {NEIGHBOURS} results above and below it on the board "
            "(difference: this result minus the other; the interval from the same test, at the level matching "
            "Holm).</p><table class=\"board\"><tr><th>rank interval</th><th>result</th><th>value</th><th>verdict</th>"
            f"<th>difference</th><th>interval</th><th>p</th></tr>{''.join(lines)}</table></section></main>"
            f"{H._footer()}")
    return _doc(r["label"], body, lean=True)


def print_board(board: dict[str, Any]) -> None:
    """The leaderboard in the terminal, per metric: the top of the board (the forest plot's rows) with
    rank interval, groups (separated: ``a, b``), value, interval, counts and the reproduced mark; how many
    rows the site lists beyond them."""
    from benchscore.common.terminal import fmt, print_line, print_table

    for metric in board["metrics"]:
        rows = metric["rows"][:metric["plotted"]]
        counted = any(r["counts"] for r in rows)
        contract = any(r["reproduced"] is not None for r in rows)
        reason = rows[0].get("groups_reason") if rows else None
        print_table(f"{metric['name']}: rank intervals (95 %, simultaneous) and groups from the pairs Holm separates "
                    f"at alpha {board['alpha']:g}; results sharing a group label are not separated"
                    + (f" ({reason})" if reason else ""),
                    ["rank_range", "groups", "label", "value", "ci95", *(["counts"] if counted else []),
                     *(["reproduced"] if contract else [])],
                    [(_rank(r), groups_text(r["groups"]), r["label"], fmt(r["value"]),
                      f"[{fmt(r['ci95'][0])}, {fmt(r['ci95'][1])}]" if r["ci95"] else f"- ({r['ci_reason']})",
                      *([counts_text(r["counts"])] if counted else []),
                      *(["reproduced" if r["reproduced"] else "no"] if contract else [])) for r in rows])
        if len(metric["rows"]) > len(rows):
            print_line(f"{metric['name']}: {len(metric['rows']) - len(rows)} more results in index.html and "
                       "leaderboard.json")


def write_site(target: Path, board: dict[str, Any], records: Mapping[str, dict[str, Any]],
               pages: Mapping[str, str], check_record: Any = None) -> None:
    """Write the site into ``target``, all or nothing (:func:`benchscore.common.atomic.replaced_directory`:
    on any error the new folder is removed and an earlier one put back): the Every Eval Ever ``records``
    (each checked by ``check_record(record, path)`` before anything is written), ``leaderboard.json`` and
    the ``pages``. The folder is new, so its files are written plainly and flushed to disk together (one
    ``syncfs``, not an fsync per file: 4,000 files of a 2,000-model site took 28 s of fsync here), before
    the manifest that marks the folder complete."""
    from benchscore.common.atomic import dumps_json, replaced_directory
    from benchscore.common.interrupts import checkpoint

    checkpoint("leaderboard:build")
    for name, record in records.items():
        if check_record is not None:
            check_record(record, target / name)
    files = {**{name: dumps_json(record) for name, record in records.items()},
             "leaderboard.json": dumps_json(board), **{name: text.encode("utf-8") for name, text in pages.items()}}
    with replaced_directory(target, owner="benchscore leaderboard") as folder:
        made: set[Path] = set()
        for name, data in files.items():
            path = folder / name
            try:
                if path.parent not in made:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    made.add(path.parent)
                with open(path, "xb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise BadInput(f"cannot write the output: {exc.strerror or exc}", source=target / name) from None
        checkpoint("leaderboard:site")
        _flush(folder, target)


def _flush(folder: Path, target: Path) -> None:
    """Flush everything written under ``folder`` to disk: ``syncfs`` of its file system (Linux), else ``sync``."""
    import ctypes
    import os

    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            syncfs = ctypes.CDLL(None, use_errno=True).syncfs
        except AttributeError:
            os.sync()
            return
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise BadInput(f"cannot write the output: {os.strerror(err)}", source=target)
    finally:
        os.close(fd)


__all__ = ["EEE_SOURCE", "EEE_VERSION", "FORMAT", "LARGE_BOARD", "NEIGHBOURS", "PLOT_TOP", "build", "eee_records",
           "formats", "forest_svg", "output_about", "plotted_rows", "print_board", "record_names", "render",
           "round_ticks", "sources_of", "text_width", "tick_text", "verify_kinds", "write_site"]
