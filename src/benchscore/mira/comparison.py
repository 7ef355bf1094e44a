"""mira's hook for ``benchscore compare``: the items (cases) of a score and their values.

Cases are paired by case id; each is its own unit (its repetitions stay together). Compared, over
the automated_scored cases: Task Success and Reliability (pooled over each case's used repetitions:
numerator and repetitions per case) and Pass@1, Stable@3, Complete@3 (one 0/1 outcome per case,
so McNemar's test applies). A public projection (``mira project``) is compared the same way from
the fields it publishes (each case's used repetitions, their status and official Task Success, its
Pass@1 / Stable@3 / Complete@3), so a leaderboard can publish it instead of the score.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchscore.stats.compare import Entry, Metric


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
    overall = doc["overall"]
    return _entry(doc, label, "mira score", used=lambda c: [reps[i] for i in c["repetitions_used"]],
                  overall_value=lambda name: overall[name]["value"],
                  case_value=lambda c, name: c["metrics"][name]["value"],
                  interval=lambda name: {k: overall[name].get(k) for k in ("ci95", "ci_reason")})


def _public(doc: dict[str, Any], label: str) -> list[Entry]:
    """The one result of a public projection (the same metrics as a score, from the published fields)."""
    overall = doc["overall"]
    own = (doc.get("intervals") or {}).get("overall") or {}
    return _entry(doc, label, "mira public projection", used=lambda c: [r for r in c["repetitions"] if r["used"]],
                  overall_value=lambda name: overall[name], case_value=lambda c, name: c["results"][name],
                  interval=lambda name: {k: (own.get(name) or {}).get(k) for k in ("ci95", "ci_reason", "ci_method")})


def _entry(doc: dict[str, Any], label: str, kind: str, *, used: Callable[[dict[str, Any]], list[dict[str, Any]]],
           overall_value: Callable[[str], Any], case_value: Callable[[dict[str, Any], str], Any],
           interval: Callable[[str], dict[str, Any]]) -> list[Entry]:
    """The one result of a score or a projection: the automated_scored formal cases, Task Success and
    Reliability pooled over each case's ``used`` repetitions, Pass@1 / Stable@3 / Complete@3 one 0/1
    outcome per case; how each kind holds these values is what the callables read."""
    cases = [c for c in doc["cases"] if c["scoring_class"] == "automated_scored" and c["status"] == "formal"]
    why = f"the score is {doc.get('status')}" if doc.get("status") != "complete" else None

    def pooled(field: str) -> dict[str, tuple[float, float]]:
        out = {}
        for c in cases:
            reps = used(c)
            num = sum(1 for r in reps if r["status"] == "pass") if field == "pass" else sum(r[field] for r in reps)
            out[c["case_id"]] = (float(num), float(len(reps)))
        return out

    metrics = [Metric("task_success", overall_value("task_success"), pooled("official_task_success"),
                      bounds=(0.0, 1.0), **interval("task_success")),
               Metric("reliability", overall_value("reliability"), pooled("pass"), scale=100.0,
                      bounds=(0.0, 100.0), **interval("reliability"))]
    for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
        per_case = {c["case_id"]: (1.0 if case_value(c, name) else 0.0, 1.0) for c in cases
                    if case_value(c, name) is not None}
        metrics.append(Metric(name, overall_value(name), per_case, binary=True, scale=100.0,
                              bounds=(0.0, 100.0), **interval(name)))
    for m in metrics:
        if m.value is None:
            m.null_reason = why or "undefined in a case"
    same = {"metric id": doc["provenance"]["metric_id"], "contract sha256": doc.get("contract_sha256")}
    return [Entry(label, kind, same, metrics)]
