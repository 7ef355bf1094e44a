"""The reaction-condition testset V6 as inspect_ai tasks (docs/inspect.md).

Run a dataset of a build with any model inspect_ai reaches::

    inspect eval src/benchscore/rxn/inspect.py@rxn_mc -T dataset=DS.json --model openai-api/local/smollm2-135m-instruct
    inspect eval src/benchscore/rxn/inspect.py@rxn_fib -T dataset=DS.json --model ...

Each question is asked with its own prompt: the dataset's template (``prompt_<question_type>.txt``
beside it, or ``-T prompt=T.txt``, else the built-in one), filled by ``benchscore.rxn.prompts.render``
exactly as ``rxn predict`` does, one user message, temperature 0 and 128 completion tokens by default
(``--temperature``, ``--max-tokens`` override them). The scorer ``rxn_relative_score`` reads the
answer by the rules of ``rxn predict`` (``benchscore.rxn.predict.read_answer``) and scores it by the
V6 evaluators (``benchscore.rxn.metrics``): its value is the relative score as ``avg_relative_score``
counts it (0 for an invalid answer; an unhit fill-in-blank answer is 0 here and leaves the metric's
denominator), its metadata the prediction, how it was read (``answered`` / ``unparseable``), the
status (``scored``, ``unhit``, ``invalid``) and exact match. The metrics are the V6 metrics of the
whole dataset, computed by the same functions as ``rxn eval-mc`` / ``eval-fib``: a question without
a score (its sample errored, or ``--limit`` left it out) is *missing* and stays in the denominator,
so the log never reports 80 answered of 100 as 80 of 80. A metric without a value (no question has a
yield) is NaN. Run with one epoch (the default): the V6 metrics score one answer per question.

This file is loaded by inspect_ai by its path; it imports inspect_ai at the top, so only inspect_ai
and the tests import it (``benchscore`` itself never does).
"""

from __future__ import annotations

import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from benchscore.common.errors import BadInput
from benchscore.common.provenance import sha256_bytes
from benchscore.common.readers import loads_json, read_bytes, read_json_bytes, validate
from benchscore.rxn import metrics as V6
from benchscore.rxn.formats import FibDataset, McDataset
from benchscore.rxn.from_inspect import METADATA_KEY, TASK_FORMATS
from benchscore.rxn.predict import prompt_template, read_answer, render_prompts

MC_METRICS = ("avg_relative_score", "exact_match_accuracy", "avg_yield_ratio", "num_invalid", "num_missing",
              "num_without_yield", "num_samples")
FIB_METRICS = ("avg_relative_score", "hit_rate", "num_scored", "num_unhit", "num_invalid", "num_missing",
               "best_hit_rate_among_scored", "num_samples")


@lru_cache(maxsize=8)
def _load(path: str, sha256: str) -> tuple[str, list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any]]:
    """(format, samples, samples by id, fill-in-blank index) of a dataset file whose bytes have ``sha256``."""
    raw = read_json_bytes(path)
    if sha256_bytes(raw) != sha256:
        raise BadInput("the dataset changed since the task was created", source=path)
    data = loads_json(raw, path)
    kind = data.get("format") if isinstance(data, dict) else None
    if kind not in ("rxn-multiple-choice", "rxn-fill-in-blank"):
        raise BadInput("expected a dataset of a build (format rxn-multiple-choice or rxn-fill-in-blank)",
                       source=path, field="format")
    validate(McDataset if kind == "rxn-multiple-choice" else FibDataset, data, source=path)
    samples = data["samples"]
    by_id = {s["id"]: s for s in samples}
    if len(by_id) != len(samples):
        raise BadInput("a sample id appears twice", source=path, field="id")
    index = V6.index_fill_in_blank(samples) if kind == "rxn-fill-in-blank" else {}
    return kind, samples, by_id, index


def v6_metrics(dataset: str, sha256: str, scores: list[SampleScore]) -> dict[str, Any]:
    """The V6 metrics of the whole dataset from the predictions in the scores' metadata (absent = missing)."""
    kind, samples, _, index = _load(dataset, sha256)
    predictions = {str(s.sample_id): s.score.metadata["prediction"] for s in scores
                   if s.score.metadata and "prediction" in s.score.metadata}
    if kind == "rxn-multiple-choice":
        return V6.score_multiple_choice(samples, predictions)
    return V6.score_fill_in_blank(index, predictions)


def _v6_metric(key: str) -> Any:
    def factory(dataset: str, sha256: str) -> Metric:
        def compute(scores: list[SampleScore]) -> float | int:
            value = v6_metrics(dataset, sha256, scores)[key]
            return math.nan if value is None else value

        return compute

    factory.__name__ = key
    factory.__doc__ = f"The V6 ``{key}`` of the whole dataset (benchscore.rxn.metrics), as `rxn eval-*` reports it."
    return metric(name=key)(factory)


_METRICS = {key: _v6_metric(key) for key in dict.fromkeys(MC_METRICS + FIB_METRICS)}


@scorer(metrics=[])
def rxn_relative_score(dataset: str, sha256: str):
    """The V6 relative score of the answer (the value), with the prediction, how it was read, the status
    and exact match (the metadata)."""

    async def score(state: TaskState, target: Target) -> Score:
        kind, _, by_id, index = _load(dataset, sha256)
        sample = by_id[str(state.sample_id)]
        text = state.output.completion
        parsed, prediction = read_answer(sample, text)
        meta: dict[str, Any] = {"prediction": prediction, "parse": parsed}
        if kind == "rxn-multiple-choice":
            status, rel, hit, _ = V6.multiple_choice_outcome(sample, prediction)
            meta |= {"status": status, "relative_score": rel, "exact_match": hit}
        else:
            keys, sizes, lookup = index[sample["id"]]
            status, rel = V6.fill_in_blank_outcome(keys, sizes, lookup, prediction)
            meta |= {"status": status, "relative_score": rel}
        return Score(value=0.0 if rel is None else rel, answer=text, explanation=status, metadata=meta)

    return score


def _argument_path(value: str, what: str) -> Path:
    """A file named on inspect_ai's command line (``-T dataset=...``).

    inspect_ai creates the task inside the task file's folder, so a relative path is looked up first
    relative to the folder ``inspect eval`` was started from (``$PWD``, which the shell sets), then
    relative to this file's folder (inspect_ai's own convention).
    """
    path = Path(value)
    if path.is_absolute():
        return path
    tried = []
    start = os.environ.get("PWD")
    for base in ([Path(start)] if start else []) + [Path.cwd()]:
        candidate = (base / path).resolve()
        if candidate.exists():
            return candidate
        tried.append(str(candidate))
    raise BadInput(f"{what} file not found (looked for {' and '.join(tried)})", source=value)


def _task(name: str, dataset: str, prompt: str | None) -> Task:
    path = _argument_path(dataset, "dataset")
    raw = read_bytes(path)
    sha = sha256_bytes(raw)
    kind, samples, _, _ = _load(str(path), sha)
    if kind != TASK_FORMATS[name]:
        other = next(t for t, k in TASK_FORMATS.items() if k == kind)
        raise BadInput(f"is a {kind} dataset; run it with {other}", source=path, field="format")
    question_type = samples[0]["question_type"] if samples else loads_json(raw, path)["question_type"]
    template, source, prompt_raw = prompt_template(path, question_type,
                                                   _argument_path(prompt, "prompt") if prompt else None)
    prompts = render_prompts(samples, template, source)
    metric_keys = MC_METRICS if kind == "rxn-multiple-choice" else FIB_METRICS
    return Task(
        dataset=MemoryDataset([Sample(id=s["id"], input=p, target=_target(s), metadata={"question_type": question_type})
                               for s, p in zip(samples, prompts, strict=True)], name=path.name, location=str(path)),
        solver=generate(),
        scorer=rxn_relative_score(str(path), sha),
        metrics=[_METRICS[k](str(path), sha) for k in metric_keys],
        config=GenerateConfig(temperature=0.0, max_tokens=128),
        epochs=1,
        metadata={METADATA_KEY: {"format": kind, "name": path.name, "question_type": question_type, "sha256": sha,
                                 "num_questions": len(samples), "prompt": {"source": source,
                                                                           "sha256": sha256_bytes(prompt_raw)}}},
    )


def _target(sample: dict[str, Any]) -> str:
    """The best answer(s), for people reading the log (the scorer does not use it)."""
    if "answer" in sample:
        return ", ".join(map(str, sample["answer"]))
    best = max(sample["meta"]["legal_combinations"], key=lambda c: c["relative_score"])
    return ", ".join(f"{k}={v}" for k, v in best["indices"].items())


@task
def rxn_mc(dataset: str, prompt: str | None = None) -> Task:
    """A multiple-choice dataset of a build (``multiple_choice_<question_type>.json``), scored by V6."""
    return _task("rxn_mc", dataset, prompt)


@task
def rxn_fib(dataset: str, prompt: str | None = None) -> Task:
    """A fill-in-blank dataset of a build (``fill_in_blank_<question_type>.json``), scored by V6."""
    return _task("rxn_fib", dataset, prompt)
