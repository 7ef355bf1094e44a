"""What ``mira score`` makes of repetitions converted from inspect_ai logs (their ``source``; docs/inspect.md).

Two things, both read from the records alone (no inspect_ai, no log): the distinct logs the
repetitions came from, for the score's ``provenance.sources`` (with how each log's run ended), and
the methodology deviations the conversion recorded: a deterministic result decided by a score edited
by hand after the run (``mira from-inspect --accept-score-edits``) is not the scorer's result, so the
score says so in ``deviations``, which the public projection carries unchanged (seed 003: "官网不会把偏差抹掉").
"""

from __future__ import annotations

from typing import Any

SOURCE_KEYS = ("tool", "log", "log_sha256", "eval_id", "run_id", "task", "model", "inspect_ai_version",
               "mapping_sha256", "log_status", "log_error")
#: the id of the deviation written for accepted score edits
SCORE_EDITS_DEVIATION = "inspect-score-edits"


def sources(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The distinct logs the repetitions were converted from (``mira from-inspect``), for the provenance."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rec in records:
        src = rec.get("source")
        if src is not None:
            key = tuple(src.get(k) for k in SOURCE_KEYS)
            entry = seen.get(key)
            if entry is None:
                entry = seen[key] = {k: src.get(k) for k in SOURCE_KEYS} | {"repetitions": 0}
            entry["repetitions"] += 1
    return {"sources": list(seen.values())} if seen else None


def score_edit_deviations(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One methodology deviation naming every repetition whose deterministic results came from a score edited
    after the run (``source.score_edits``), with who edited which score; empty when there is none."""
    affected: list[str] = []
    edits: dict[tuple[str, str, str], int] = {}
    for rec in records:
        src = rec.get("source") or {}
        if src.get("score_edits"):
            affected.append(f"{rec['case_id']}#{rec['repetition']}")
            for e in src["score_edits"]:
                who = (str(e.get("scorer")), str(e.get("author")), str(e.get("reason") or "no reason given"))
                edits[who] = edits.get(who, 0) + 1
    if not affected:
        return []
    listed = "; ".join(f"score {s} edited by {a} ({r}) in {n} repetition(s)" for (s, a, r), n in sorted(edits.items()))
    text = (f"{len(affected)} repetition(s) have deterministic results decided by inspect_ai scores edited by hand "
            f"after the run (inspect_ai edit_score), taken as edited with mira from-inspect --accept-score-edits: "
            f"{listed}. An edited score is not the scorer's result.")
    return [{"id": SCORE_EDITS_DEVIATION, "text": text, "affects": affected}]


__all__ = ["SCORE_EDITS_DEVIATION", "SOURCE_KEYS", "score_edit_deviations", "sources"]
