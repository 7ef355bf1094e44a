"""The one place this room touches inspect_ai's log objects: plain facts of a log and of its samples.

Everything inspect_ai-specific that the room reads goes through :func:`log_facts` and
:func:`sample_facts`, built on :mod:`benchscore.common.inspect_logs` (``read_header`` and
``iter_samples``, which read with inspect_ai itself). When that reader changes (a streaming reader
of the ``.eval`` zip), only this module follows it: the rest of the room sees :class:`LogFacts` and
:class:`SampleFacts`, which hold plain values (strings, numbers, dicts).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchscore.common.inspect_logs import iter_samples, read_header


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


@dataclass(slots=True)
class SampleFacts:
    """One sample x epoch: raw score values by scorer, the dataset identity, what happened."""

    sample_id: str
    epoch: int
    scores: dict[str, Any]
    identity: str
    metadata: dict[str, Any]
    error: str | None
    limit: str | None
    retried_errors: tuple[str, ...]


def log_facts(path: Path) -> LogFacts:
    """Read and check the log's header (refusals: see ``benchscore.common.inspect_logs.read_header``)."""
    header = read_header(path)
    log = header.log
    spec = log.eval
    reported: dict[tuple[str, str | None], dict[str, Any]] = {}
    for score in (log.results.scores if log.results else []) or []:
        reported[(score.name, score.reducer)] = {k: m.value for k, m in score.metrics.items()}
    planned = log.results.total_samples if log.results else None
    return LogFacts(
        path=path, sha256=header.sha256, tool_version=header.writer, eval_id=spec.eval_id, run_id=spec.run_id,
        task=spec.task, model=spec.model, task_args=dict(spec.task_args or {}), epochs=header.epochs,
        reducers=list(spec.config.epochs_reducer) if spec.config.epochs_reducer else None,
        status=log.status, error=log.error.message if log.error else None, reported=reported,
        planned_sample_epochs=planned)


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
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


def sample_facts(path: Path) -> Iterator[SampleFacts]:
    """Every sample x epoch of the log, as plain facts."""
    for s in iter_samples(path):
        scores = {name: score.value for name, score in (s.scores or {}).items()}
        yield SampleFacts(
            sample_id=str(s.id), epoch=int(s.epoch), scores=scores,
            identity=identity(s.input, s.target, s.choices), metadata=dict(s.metadata or {}),
            error=s.error.message if s.error else None, limit=s.limit.type if s.limit else None,
            retried_errors=tuple(e.message for e in (s.error_retries or [])))


__all__ = ["LogFacts", "SampleFacts", "identity", "log_facts", "sample_facts"]
