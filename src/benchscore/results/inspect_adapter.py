"""The one place this room touches inspect_ai logs: plain facts of a log and of its samples.

Everything inspect_ai-specific that the room reads goes through :func:`log_facts` and
:func:`sample_facts`, built on benchscore's own streaming reader :mod:`benchscore.sources.inspect_logs`
(``open_logs``: the checked header; ``InspectLog.samples()``: one record per sample x epoch, read
one at a time). The rest of the room sees :class:`LogFacts` and :class:`SampleFacts`, which hold
plain values (strings, numbers, dicts).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchscore.sources.inspect_logs import open_logs

from .formats import ScoreEdit


@dataclass
class LogFacts:
    """What one log says about its run: identity, task, model, settings, status, reported metrics."""

    path: Path
    sha256: str
    tool_version: str | None
    eval_id: str
    run_id: str
    task: str
    model: str
    task_args: dict[str, Any]
    epochs: int
    reducers: list[str] | None
    status: str
    error: str | None
    #: (scorer name, reducer or None) -> {metric name: value} as inspect_ai reported them
    reported: dict[tuple[str, str | None], dict[str, Any]] = field(default_factory=dict)
    #: sample x epochs the run planned (``results.total_samples``), when the log has results
    planned_sample_epochs: int | None = None
    #: the sample ids the run planned (``eval.dataset.sample_ids``), when the log records them
    sample_ids: list[str] | None = None
    #: when the evaluation was created (``eval.created``) and the dataset it names (``eval.dataset.name``)
    created: str | None = None
    dataset_name: str | None = None


@dataclass(slots=True)
class SampleFacts:
    """One sample x epoch: raw score values by scorer, the dataset identity, what happened (its error, the
    limit it hit, the errors of the attempts inspect_ai retried, the scores edited after the run)."""

    sample_id: str
    epoch: int
    scores: dict[str, Any]
    identity: str
    metadata: dict[str, Any]
    error: str | None
    limit: str | None
    retried_errors: tuple[str, ...]
    edits: tuple[ScoreEdit, ...] = ()


def log_facts(path: Path) -> LogFacts:
    """Read and check the log's header (refusals: see ``benchscore.sources.inspect_logs.read_header``)."""
    with open_logs([path]) as logs:
        if len(logs) != 1:
            raise ValueError(f"{path} is not one log")  # the room gives files one at a time
        header = logs[0].header
    results = header.results or {}
    reported: dict[tuple[str, str | None], dict[str, Any]] = {}
    scores = results.get("scores") or []
    if type(scores) is not list or any(type(s) is not dict or type(s.get("metrics") or {}) is not dict for s in scores):
        from benchscore.common.errors import BadInput, shown

        raise BadInput(f"expected a list of scores, each with its metrics as an object, got {shown(scores)}",
                       source=path, field="results.scores")
    for score in scores:
        reported[(score.get("name"), score.get("reducer"))] = {
            k: (m.get("value") if isinstance(m, dict) else m) for k, m in (score.get("metrics") or {}).items()}
    return LogFacts(
        path=path, sha256=header.sha256, tool_version=header.inspect_version, eval_id=header.eval_id,
        run_id=header.run_id, task=header.task, model=header.model, task_args=dict(header.task_args or {}),
        epochs=header.epochs, reducers=list(header.epochs_reducer) if header.epochs_reducer else None,
        status=header.status, error=header.error.message if header.error else None, reported=reported,
        planned_sample_epochs=results.get("total_samples"),
        sample_ids=[str(i) for i in header.sample_ids] if header.sample_ids is not None else None,
        created=header.created, dataset_name=header.dataset_name)


def _message(m: Any) -> dict[str, Any]:
    """A chat message as its role and content (never its id, which differs between runs)."""
    d = m if isinstance(m, dict) else m.model_dump(mode="json", exclude_none=True)
    content = d.get("content")
    if isinstance(content, list):
        content = [{"type": "text", "text": c.get("text")} if c.get("type") == "text" else
                   {k: v for k, v in c.items() if k not in ("id", "internal")} for c in content]
    return {"role": d.get("role"), "content": content}


def identity(sample_input: Any, target: Any, choices: Any) -> str:
    """sha256 of the sample's input, target and choices (canonical JSON): inspect_ai records no dataset
    hash, so this is what says two results of one sample id are results of one dataset sample."""
    text = sample_input if isinstance(sample_input, str) else [_message(m) for m in sample_input or []]
    doc = {"input": text, "target": target, "choices": list(choices) if choices else None}
    try:
        data = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer past 64 bits: the stdlib writes it (the same way for every log that holds it)
        import json

        data = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=repr).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def edits_of(scorer: str, score: Any) -> tuple[ScoreEdit, ...]:
    """The edits made after the run of one score (``inspect_ai.log.edit_score``; the history's first entry,
    without provenance, is the scorer's own value): who, why, when, the scorer's value and the value now."""
    return tuple(ScoreEdit(scorer, e.author, e.reason, e.timestamp, score.original, score.value) for e in score.edits)


def sample_facts(path: Path) -> Iterator[SampleFacts]:
    """Every sample x epoch of the log, as plain facts, read one at a time."""
    with open_logs([path]) as logs:
        for s in logs[0].samples():
            edits = tuple(e for name, sc in s.scores.items() if sc.history for e in edits_of(name, sc))
            yield SampleFacts(
                sample_id=str(s.id), epoch=int(s.epoch), scores={name: sc.value for name, sc in s.scores.items()},
                identity=identity(s.input, s.target, s.choices), metadata=dict(s.metadata or {}),
                error=s.error.message if s.error else None, limit=s.limit,
                retried_errors=tuple(r.error.message for r in s.retries), edits=edits)


__all__ = ["LogFacts", "SampleFacts", "edits_of", "identity", "log_facts", "sample_facts"]
