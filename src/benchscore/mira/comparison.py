"""mira's hook for ``benchscore compare``: the items (cases) of a score and their values.

Cases are paired by case id; each is its own unit (its repetitions stay together). Compared, over
the automated_scored cases: Task Success and Reliability (pooled over each case's used repetitions:
numerator and repetitions per case) and Pass@1, Stable@3, Complete@3 (one 0/1 outcome per case,
so McNemar's test applies). A public projection (``mira project``) is compared the same way from
the fields it publishes (each case's used repetitions, their status and official Task Success, its
Pass@1 / Stable@3 / Complete@3), so a leaderboard can publish it instead of the score.
"""

from __future__ import annotations

from typing import Any

from benchscore.common.compare import Entry, Metric


def entries(doc: Any, label: str) -> list[Entry] | None:
    """The one result of a ``mira score`` output or of its public projection, or None for anything else."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return None
    if str(doc["provenance"].get("metric_id", "")).endswith("/public") and "cases" in doc and "intervals" in doc:
        return _public(doc, label)
    if not str(doc["provenance"].get("metric_id", "")).endswith("/score") or "cases" not in doc \
            or "repetitions" not in doc:
        return None
    reps = {r["id"]: r for r in doc["repetitions"]}
    cases = [c for c in doc["cases"] if c["scoring_class"] == "automated_scored" and c["status"] == "formal"]
    overall = doc["overall"]
    why = f"the score is {doc.get('status')}" if doc.get("status") != "complete" else None

    def pooled(field: str) -> dict[str, tuple[float, float]]:
        out = {}
        for c in cases:
            used = [reps[i] for i in c["repetitions_used"]]
            num = sum(1 for r in used if r["status"] == "pass") if field == "pass" else sum(r[field] for r in used)
            out[c["case_id"]] = (float(num), float(len(used)))
        return out

    def ci(name: str) -> dict[str, Any]:
        return {"ci95": overall[name].get("ci95"), "ci_reason": overall[name].get("ci_reason")}

    metrics = [Metric("task_success", overall["task_success"]["value"], pooled("official_task_success"),
                      bounds=(0.0, 1.0), **ci("task_success")),
               Metric("reliability", overall["reliability"]["value"], pooled("pass"), scale=100.0,
                      bounds=(0.0, 100.0), **ci("reliability"))]
    for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
        per_case = {c["case_id"]: (1.0 if c["metrics"][name]["value"] else 0.0, 1.0) for c in cases
                    if c["metrics"][name]["value"] is not None}
        metrics.append(Metric(name, overall[name]["value"], per_case, binary=True, scale=100.0,
                              bounds=(0.0, 100.0), **ci(name)))
    for m in metrics:
        if m.value is None:
            m.null_reason = why or "undefined in a case"
    same = {"metric id": doc["provenance"]["metric_id"], "contract sha256": doc.get("contract_sha256")}
    return [Entry(label, "mira score", same, metrics)]


def _public(doc: dict[str, Any], label: str) -> list[Entry]:
    """The one result of a public projection (the same metrics as a score, from the published fields)."""
    cases = [c for c in doc["cases"] if c["scoring_class"] == "automated_scored" and c["status"] == "formal"]
    overall = doc["overall"]
    own = (doc.get("intervals") or {}).get("overall") or {}
    why = f"the score is {doc.get('status')}" if doc.get("status") != "complete" else None

    def pooled(field: str) -> dict[str, tuple[float, float]]:
        out = {}
        for c in cases:
            used = [r for r in c["repetitions"] if r["used"]]
            num = sum(1 for r in used if r["status"] == "pass") if field == "pass" else sum(r[field] for r in used)
            out[c["case_id"]] = (float(num), float(len(used)))
        return out

    def ci(name: str) -> dict[str, Any]:
        return {"ci95": (own.get(name) or {}).get("ci95"), "ci_reason": (own.get(name) or {}).get("ci_reason"),
                "ci_method": (own.get(name) or {}).get("ci_method")}

    metrics = [Metric("task_success", overall["task_success"], pooled("official_task_success"),
                      bounds=(0.0, 1.0), **ci("task_success")),
               Metric("reliability", overall["reliability"], pooled("pass"), scale=100.0,
                      bounds=(0.0, 100.0), **ci("reliability"))]
    for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
        per_case = {c["case_id"]: (1.0 if c["results"][name] else 0.0, 1.0) for c in cases
                    if c["results"][name] is not None}
        metrics.append(Metric(name, overall[name], per_case, binary=True, scale=100.0,
                              bounds=(0.0, 100.0), **ci(name)))
    for m in metrics:
        if m.value is None:
            m.null_reason = why or "undefined in a case"
    same = {"metric id": doc["provenance"]["metric_id"], "contract sha256": doc.get("contract_sha256")}
    return [Entry(label, "mira public projection", same, metrics)]
