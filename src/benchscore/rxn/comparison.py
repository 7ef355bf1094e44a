"""rxn's hook for ``benchscore compare``: the items (questions) of an evaluation and their values.

Questions are paired by sample id and clustered by the condition table they were built from (the
unit of independence, as for the intervals). Compared: ``avg_relative_score`` and
``exact_match_accuracy`` (multiple choice), ``avg_relative_score`` and ``hit_rate`` (fill in blank),
overall. ``avg_yield_ratio`` is not compared: the per-sample records do not carry a yield ratio.
"""

from __future__ import annotations

import sys
from typing import Any

from benchscore.stats.compare import Entry, Metric


def entries(doc: Any, label: str) -> list[Entry] | None:
    """The one result of an ``rxn eval-mc`` / ``eval-fib`` output, or None for anything else."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return None
    metric_id = str(doc["provenance"].get("metric_id", ""))
    if not metric_id.startswith("rxn-testsetV6-") or "per_sample" not in doc or "overall" not in doc:
        return None
    task = doc.get("task")
    records = [r for rs in doc["per_sample"].values() for r in rs]
    tables = {r["id"]: r.get("table_id") or r["id"] for r in records}
    roles = [v["sha256"] for k, v in doc["provenance"].get("inputs", {}).items() if k.startswith("dataset/")]
    if len(roles) == len(doc["per_sample"]):  # the datasets in the order given: the order of per_sample
        # one (interned) string per dataset: two results' sources then compare by identity, at C speed
        sources = {r["id"]: source for sha, rs in zip(roles, doc["per_sample"].values(), strict=True)
                   for source in (sys.intern(f"dataset sha256 {sha}"),) for r in rs}
        same: dict[str, Any] = {"metric id": metric_id}
    else:  # two datasets of one file name: compare whole evaluations only
        sources = None
        same = {"metric id": metric_id, "datasets (sha256)": sorted(roles)}
    overall = doc["overall"]
    own = ((doc.get("intervals") or {}).get("overall") or {}) if isinstance(doc.get("intervals"), dict) else {}

    def ci(name: str) -> dict[str, Any]:
        rec = own.get(name) or {}
        return {"ci95": rec.get("ci95"), "ci_reason": rec.get("ci_reason")}

    rel: dict[str, tuple[float, float]] = {}
    for r in records:
        rel[r["id"]] = (0.0, 0.0) if r["relative_score"] is None else (float(r["relative_score"]), 1.0)
    metrics = [Metric("avg_relative_score", overall.get("avg_relative_score"), rel, clusters=tables, sources=sources,
                      bounds=(0.0, 1.0), **ci("avg_relative_score"))]
    if task == "multiple_choice":
        hits = {r["id"]: (1.0 if r.get("exact_match") else 0.0, 1.0) for r in records}
        metrics.append(Metric("exact_match_accuracy", overall.get("exact_match_accuracy"), hits, binary=True,
                              clusters=tables, sources=sources, bounds=(0.0, 1.0), **ci("exact_match_accuracy")))
    else:
        hits = {r["id"]: (1.0 if r["status"] == "scored" else 0.0, 1.0) for r in records}
        metrics.append(Metric("hit_rate", overall.get("hit_rate"), hits, binary=True, clusters=tables,
                              sources=sources, bounds=(0.0, 1.0), **ci("hit_rate")))
    for m in metrics:
        if m.value is None:
            m.null_reason = "no sample to average"
    return [Entry(label, f"rxn eval ({task})", same, metrics)]
