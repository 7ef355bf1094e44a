"""The one place this room touches inspect_ai logs: plain facts of a log and of its samples.

Everything inspect_ai-specific that the room reads goes through :func:`log_facts` and
:func:`sample_facts`, built on benchscore's own streaming reader :mod:`benchscore.sources.inspect_logs`
(``open_logs``: the checked header; ``InspectLog.samples()``: one record per sample x epoch, read
one at a time). The rest of the room sees :class:`LogFacts` and :class:`SampleFacts`, which hold
plain values (strings, numbers, dicts).
"""

from __future__ import annotations

import hashlib
import re
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
    return facts_of(header, path)


def facts_of(header: Any, path: Path) -> LogFacts:
    """The facts of a log's checked header (``LogHeader``) read from ``path``."""
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


def _facts(s: Any) -> SampleFacts:
    """The facts of one sample read whole (a ``SampleRecord``)."""
    edits = tuple(e for name, sc in s.scores.items() if sc.history for e in edits_of(name, sc))
    return SampleFacts(
        sample_id=str(s.id), epoch=int(s.epoch), scores={name: sc.value for name, sc in s.scores.items()},
        identity=identity(s.input, s.target, s.choices), metadata=dict(s.metadata or {}),
        error=s.error.message if s.error else None, limit=s.limit,
        retried_errors=tuple(r.error.message for r in s.retries), edits=edits)


#: read the per-sample summaries of an ``.eval`` log where they hold every fact (False: every sample whole)
USE_SUMMARIES = True


def sample_facts(path: Path, *, summaries: bool | None = None, header: Any = None) -> Iterator[SampleFacts]:
    """Every sample x epoch of the log, as plain facts, read one at a time, in the order the log stores them.

    From an ``.eval`` log with per-sample summaries (``summaries``: default :data:`USE_SUMMARIES`), each
    sample's facts come from its summary where the summary holds all of them (:func:`summary_facts`), else
    from the sample read whole; every sample member is still read and CRC-checked (the edit check needs its
    bytes), but parsed only when its summary falls short. Both ways give the same facts. ``header``: the log's
    header when it is read already (:func:`facts_of`), so the log is not opened and hashed again."""
    from benchscore.sources.inspect_logs import _loads, iter_samples, sample_record
    from benchscore.sources.inspect_summaries import (
        members,
        read_summaries,
        sample_bytes,
        sample_member,
        sample_members,
    )

    use = USE_SUMMARIES if summaries is None else summaries
    if header is None:
        with open_logs([path]) as logs:
            yield from sample_facts(path, summaries=use, header=logs[0].header)
        return
    if not use or header.format != "eval":
        for s in iter_samples(header):
            yield _facts(s)
        return
    source = header.location.url
    with open(header.path, "rb") as fp:
        index = members(header, fp)
        found = read_summaries(header, fp, index)
        by_member: dict[str, dict[str, Any]] = {}
        for summary in found or ():
            sid, epoch = summary.get("id"), summary.get("epoch")
            if type(sid) in (str, int) and type(epoch) is int:
                by_member[sample_member(sid, epoch)] = summary
        for name, info in sample_members(index):
            data = sample_bytes(header, fp, info)
            summary = by_member.get(name)
            facts = summary_facts(summary, data) if summary is not None else None
            yield facts if facts is not None else _facts(sample_record(_loads(data, name, source), source, data))


_CUT = "...\n(content truncated)"  # inspect_ai's truncate_text
_REPLACED = re.compile(r"^\([A-Z][a-z_]*\)$")  # thin_input: non-text content replaced by "(Image)" and the like
_ATTACHMENT = "attachment://"


def _cut(text: Any) -> bool:
    """Whether a text of a summary may not be the sample's own (cut, or an attachment's reference)."""
    return type(text) is not str or text.endswith(_CUT) or text.startswith(_ATTACHMENT)


def _thinned_input(value: Any) -> bool:
    if type(value) is str:
        return _cut(value)
    if type(value) is not list:
        return True
    for m in value:
        if type(m) is not dict:
            return True
        content = m.get("content")
        if type(content) is str:
            if _cut(content):
                return True
        elif type(content) is list:
            for c in content:
                if type(c) is not dict or c.get("type") != "text" or _cut(c.get("text")) or _REPLACED.match(c["text"]):
                    return True
        else:
            return True
    return False


def _edited(data: bytes) -> bool:
    """Whether a sample's JSON bytes hold a ``"history"`` key that is not ``"history":[]`` (a score's edits; or
    another key so named, which costs a whole read only). One pass over the bytes."""
    at = data.find(b'"history')  # a needle ending in a rare byte: the fastest search
    while at >= 0:
        if data[at + 8:at + 10] == b'":' and data[at + 10:at + 12] != b"[]":
            return True
        at = data.find(b'"history', at + 8)
    return False


def summary_facts(summary: dict[str, Any], data: bytes) -> SampleFacts | None:
    """The facts of one sample from its summary (``data``: the sample member's JSON bytes), or None where the
    summary does not hold all of them and the sample must be read whole:

    - the sample was retried (``retries`` > 0): the retried errors' messages are only in the sample;
    - a score was edited after the run: the summary keeps no edit history, so the sample's bytes are searched
      for a ``"history"`` key that is not ``"history":[]`` (:func:`_edited`);
    - the input or target may be thinned (a text cut at 5,120 characters, an image replaced, an attachment's
      reference): the identity hash needs them whole;
    - the metadata holds a text (the summary shortens texts and replaces values over 1 KB): taken only when
      the sample's bytes hold the same ``"metadata":{...}`` exactly;
    - any field not of the type inspect_ai writes.
    The error (its message) and the limit (its type) are the sample's own in the summary."""
    if summary.get("retries"):
        return None
    if _edited(data):
        return None
    given, target, choices = summary.get("input"), summary.get("target"), summary.get("choices")
    if _thinned_input(given) or (_cut(target) if type(target) is not list else any(_cut(t) for t in target)):
        return None
    if choices is not None and (type(choices) is not list or not all(type(c) is str for c in choices)):
        return None
    meta = summary.get("metadata")
    meta = {} if meta is None else meta
    if type(meta) is not dict:
        return None
    if any(type(v) is str for v in meta.values()) and b'"metadata":' + orjson.dumps(meta) not in data:
        return None
    scores = summary.get("scores") or {}
    if type(scores) is not dict or not all(type(v) is dict and "value" in v for v in scores.values()):
        return None
    error, limit = summary.get("error"), summary.get("limit")
    if (error is not None and type(error) is not str) or (limit is not None and type(limit) is not str):
        return None
    return SampleFacts(sample_id=str(summary["id"]), epoch=int(summary["epoch"]),
                       scores={name: sc["value"] for name, sc in scores.items()},
                       identity=identity(given, target, choices), metadata=dict(meta), error=error, limit=limit,
                       retried_errors=())


__all__ = ["USE_SUMMARIES", "LogFacts", "SampleFacts", "edits_of", "facts_of", "identity", "log_facts", "sample_facts",
           "summary_facts"]
