"""tcsexam's hook for ``benchscore compare``: the items of a ``tcsexam score`` output (tasks, per
model) and of a ``solver-score`` output (scored instances).

A ``tcsexam score`` file holds one result per model (``FILE:MODEL``). Tasks are paired by
``track/item``, each its own unit, weighted as the index weighs them: the index is compared as
``sum over tracks of weight x mean of the track's task means`` (tracks are strata of weight
30/30/30/10), each track mean as the mean of its tasks. A Solver task's ``relative_score`` is
compared over its scored instances.
"""

from __future__ import annotations

from typing import Any

from benchscore.stats.compare import Entry, Metric

from .formulas import METRIC_ID, SOLVER_METRIC_ID, TRACKS, UNBOUNDED_TRACKS, WEIGHTS

#: tracks scored 0/1 per attempt (McNemar applies when every task holds one attempt)
BINARY_TRACKS = frozenset({"theorem", "conjecture"})


def _index_entries(doc: dict[str, Any], label: str) -> list[Entry]:
    prov = doc["provenance"]
    same = {"metric id": METRIC_ID, "suite": doc.get("suite"),
            "suite sha256": prov.get("inputs", {}).get("suite", {}).get("sha256"),
            "solver reference": doc.get("solver_reference_id"), "solver protocol": doc.get("solver_protocol")}
    out = []
    for model, res in doc["models"].items():
        tasks = {f"{t}/{i}": v for t in TRACKS for i, v in res["task_means"][t].items()}
        strata = {f"{t}/{i}": t for t in TRACKS for i in res["task_means"][t]}
        complete = {k: (float(v), 1.0) for k, v in tasks.items() if v is not None}
        why = f"the result of {model} is {res['status']}"
        own = res.get("intervals") or {}

        def ci(rec: Any, value: Any, floor: bool = True) -> dict[str, Any]:
            """The number's own interval; a null one beside a number is a floor compare obeys (issue 38):
            the index's (a composite) and an unbounded track's (too few tasks for its tail)."""
            rec = rec if isinstance(rec, dict) else {}
            null = floor and value is not None and rec.get("ci95") is None and rec.get("ci_reason")
            return {"ci95": rec.get("ci95"), "ci_reason": rec.get("ci_reason"),
                    "floor_reason": rec.get("ci_reason") if null else None}

        metrics = [Metric("index", res["index"], complete, strata=strata, weights=dict(WEIGHTS),
                          null_reason=why, bounds=(0.0, None), components=[f"track_means.{t}" for t in TRACKS],
                          **ci(own.get("index"), res["index"]))]
        for t in TRACKS:
            mine = {k: v for k, v in complete.items() if strata[k] == t}
            metrics.append(Metric(f"track_means.{t}", res["track_means"][t], mine, binary=t in BINARY_TRACKS,
                                  null_reason=f"a {t} task of {model} has no complete result",
                                  bounds=(0.0, None if t in UNBOUNDED_TRACKS else 1.0),
                                  **ci((own.get("track_means") or {}).get(t), res["track_means"][t],
                                       floor=t in UNBOUNDED_TRACKS)))
        out.append(Entry(f"{label}:{model}", "tcsexam score", same, metrics))
    return out


def entries(doc: Any, label: str) -> list[Entry] | None:
    """The results of a ``tcsexam score`` or ``solver-score`` output, or None for anything else."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return None
    metric_id = doc["provenance"].get("metric_id")
    if metric_id == METRIC_ID and isinstance(doc.get("models"), dict):
        return _index_entries(doc, label)
    if metric_id == SOLVER_METRIC_ID and isinstance(doc.get("instances"), dict):
        same = {"metric id": SOLVER_METRIC_ID, "task": doc.get("task"), "reference sha256": doc.get("reference_sha256")}
        items = {name: (float(v["score"]), 1.0) for name, v in doc["instances"].items()}
        rec = (doc.get("intervals") or {}).get("relative_score") or {}
        return [Entry(label, "tcsexam solver-score", same, [Metric(
            "relative_score", doc["relative_score"], items, bounds=(0.0, 1.0), ci95=rec.get("ci95"),
            ci_reason=rec.get("ci_reason"))])]
    return None
