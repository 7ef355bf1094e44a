"""``benchscore rxn predict``: ask a model every question of a dataset, read its answers into the
evaluator's format, and keep an audit record of every call.

- The prompt of a question is the dataset's own template (``prompt_<question_type>.txt`` beside the
  dataset, or ``--prompt``, else the built-in one) filled by :func:`benchscore.rxn.prompts.render`.
- ``--method generate``: where the endpoint enforces a schema (probed once per model,
  ``LLMClient.constraint_for``) the question asks for :func:`answer_format` under that constraint and
  the answer is read by ``AnswerFormat.read`` alone (exactly the JSON object, never repaired); else it
  is free text, read by :mod:`benchscore.rxn.answers`. ``answered``: the prediction read from it;
  ``unparseable``: the raw text is the prediction, so the evaluators count it invalid; ``failed``: the
  call failed after the client's retries and nothing is written for it (the next run asks again).
- ``--method loglikelihood`` (multiple choice only): every option's text is scored as a continuation of
  the prompt (``LLMClient.loglikelihoods``) and the prediction is the argmax (ties: the lowest index);
  every option's log-likelihood is in the audit.
- The prediction file is an output that the command *extends*: ids already answered in it are not
  asked again, new answers are added, and it is replaced atomically (audit first, then predictions)
  every :data:`SAVE_EVERY_S` seconds, at the end and on Ctrl-C. It stays a plain
  ``{sample_id: prediction}`` file that ``eval-mc`` / ``eval-fib`` read unchanged.

Nothing here prints; the CLI wires the client, the progress bar and the tables.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchscore.common.atomic import atomic_write_json
from benchscore.common.errors import BadInput
from benchscore.common.llm import (
    AnswerFormat,
    CallRecord,
    ChatResult,
    ContinuationScore,
    LLMError,
    ModelMismatch,
    ModelNotFound,
)
from benchscore.common.provenance import provenance, sha256_bytes
from benchscore.common.readers import loads_json, read_bytes, read_json_bytes, validate

from .answers import parse_fib_answer, parse_mc_answer
from .formats import PredictAudit
from .prompts import LOGLIKELIHOOD_CUE, TEMPLATES, option_text, render, structured_suffix

#: the prediction file and its audit are saved at most this often while questions are answered
SAVE_EVERY_S = 2.0

Chat = Callable[..., ChatResult]
Score = Callable[[str, list[str]], list[ContinuationScore]]


def answer_format(sample: dict[str, Any]) -> AnswerFormat:
    """The answer's schema: MC ``{"option": i}`` with ``i`` an option index of the question; FIB an object
    with exactly the query keys, each an index of that key's candidates."""
    if "options" in sample:
        return AnswerFormat("rxn_multiple_choice", {"option": list(range(len(sample["options"])))})
    values = sample["input"]["candidate_values"]
    return AnswerFormat("rxn_fill_in_blank", {k: [c["index"] for c in values[k]] for k in sample["query_keys"]})


def default_audit_path(output: Path) -> Path:
    """``pred.json`` -> ``pred.audit.json`` (beside the prediction file)."""
    return output.with_name(f"{output.stem}.audit.json")


def prompt_template(dataset: Path, question_type: str, prompt: Path | None) -> tuple[str, str, bytes]:
    """The template for a dataset: ``--prompt``, else ``prompt_<question_type>.txt`` beside the dataset (a
    build folder has one), else the built-in template. Returns (text, source, raw bytes)."""
    if prompt is None:
        beside = dataset.parent / f"prompt_{question_type}.txt"
        if not beside.is_file():
            text = TEMPLATES[question_type]
            return text, "built-in", text.encode()
        prompt = beside
    raw = read_bytes(prompt)
    try:
        return raw.decode("utf-8"), prompt.name, raw
    except UnicodeDecodeError:
        raise BadInput("not valid UTF-8", source=prompt) from None


def render_prompts(samples: Sequence[dict[str, Any]], template: str, source: str) -> list[str]:
    """Every question's prompt; a template that cannot be filled is bad input (checked before any call)."""
    out = []
    for sample in samples:
        try:
            out.append(render(sample, template))
        except KeyError as exc:
            raise BadInput(f"unknown placeholder {{{exc.args[0]}}} in the prompt template", source=source) from None
        except (ValueError, IndexError) as exc:
            raise BadInput(f"not a usable prompt template ({exc}); write literal braces as {{{{ and }}}}",
                           source=source) from None
    return out


@dataclass(frozen=True)
class Outcome:
    """One question asked once."""

    sample_id: str
    status: str  # answered | unparseable | failed
    prediction: Any
    answer_text: str | None
    error: str | None
    record: CallRecord | None
    constraint: str | None = None
    #: --method loglikelihood: every option's score, each with its call record
    option_loglikelihoods: tuple[dict[str, Any], ...] | None = None
    records: tuple[CallRecord, ...] = ()


def read_answer(sample: dict[str, Any], text: str, constraint: str = "none") -> tuple[str, Any]:
    """(status, prediction) for a model's answer text (see the module docstring)."""
    if constraint != "none":
        value = answer_format(sample).read(text)
        if value is None:
            return "unparseable", text
        return "answered", value["option"] if "options" in sample else value
    if "options" in sample:
        parsed: Any = parse_mc_answer(text, sample["id"])
    else:
        parsed = parse_fib_answer(text, sample["query_keys"])
    return ("answered", parsed) if parsed is not None else ("unparseable", text)


def ask(sample: dict[str, Any], prompt: str, chat: Chat, constraint: str = "none") -> Outcome:
    """Ask one question under ``constraint``; a failed call is an outcome, an unknown model is raised (it
    ends the run)."""
    messages = [{"role": "user", "content": prompt if constraint == "none" else prompt + structured_suffix(sample)}]
    try:
        if constraint == "none":
            result = chat(messages)
        else:
            fmt = answer_format(sample)
            result = chat(messages, answer_format=fmt, constraint=constraint, max_tokens=fmt.max_tokens)
    except (ModelNotFound, ModelMismatch):
        raise
    except LLMError as exc:
        return Outcome(sample["id"], "failed", None, None, str(exc), exc.record, constraint)
    status, prediction = read_answer(sample, result.text, constraint)
    return Outcome(sample["id"], status, prediction, result.text, None, result.record, constraint)


def argmax_option(scores: Sequence[float | None]) -> int | None:
    """The index of the highest log-likelihood (ties: the lowest index); None when no option has one."""
    best: int | None = None
    for i, s in enumerate(scores):
        if s is not None and (best is None or s > scores[best]):  # type: ignore[operator]
            best = i
    return best


def ask_loglikelihood(sample: dict[str, Any], prompt: str, score: Score) -> Outcome:
    """Score every option's text as the continuation of ``prompt`` + :data:`LOGLIKELIHOOD_CUE`; the argmax is
    the prediction. A failed call fails the question (no prediction)."""
    try:
        scores = score(prompt + LOGLIKELIHOOD_CUE, [" " + option_text(o) for o in sample["options"]])
    except (ModelNotFound, ModelMismatch):
        raise
    except LLMError as exc:
        return Outcome(sample["id"], "failed", None, None, str(exc), exc.record, "loglikelihood")
    values = [s.loglikelihood for s in scores]
    best = argmax_option(values)
    per = tuple({"option": i, "loglikelihood": s.loglikelihood, "tokens": s.tokens, "method": s.method,
                 "straddles_context": s.straddles_context, "record": s.record.model_dump(mode="json")}
                for i, s in enumerate(scores))
    if best is None:
        return Outcome(sample["id"], "unparseable", "no option has a log-likelihood", None, None, None,
                       "loglikelihood", per, tuple(s.record for s in scores))
    return Outcome(sample["id"], "answered", best, None, None, None, "loglikelihood", per,
                   tuple(s.record for s in scores))


def ask_all(questions: Sequence[tuple[dict[str, Any], str]], ask_one: Callable[[dict[str, Any], str], Outcome], *,
            concurrency: int, on_outcome: Callable[[Outcome], None]) -> None:
    """Ask ``questions`` (sample, prompt) with ``ask_one`` on ``concurrency`` threads; ``on_outcome`` runs in the
    calling thread as each answer arrives. On any exception (Ctrl-C) the questions not yet started are cancelled."""
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="rxn-predict")
    try:
        futures = [pool.submit(ask_one, sample, prompt) for sample, prompt in questions]
        for future in as_completed(futures):
            on_outcome(future.result())
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _read_previous(path: Path) -> Any:
    """This command's own earlier output, which it extends (not an input: it may be replaced)."""
    return loads_json(read_json_bytes(path, existing_output=True), path)


def open_previous(output: Path, audit: Path, *, ids: Sequence[str], model: str, dataset: dict[str, Any],
                  prompt: dict[str, Any], method: str = "generate") -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The predictions and audit of earlier runs (resume), checked to belong to this dataset, prompt and model."""
    exists = os.path.lexists  # a link that leads nowhere (dangling, a loop) is read, and refused as such
    previous = _read_previous(output) if exists(output) else {}
    if exists(output) and not exists(audit):
        raise BadInput(f"exists but its audit {audit} does not; predict extends only the prediction files it "
                       "made: remove it, give its --audit, or choose another --output", source=output)
    if not isinstance(previous, dict):
        raise BadInput("expected a JSON object {sample_id: prediction}", source=output)
    known = set(ids)
    for key in previous:
        if key not in known:
            raise BadInput(f"id {key!r} is not a sample id of {dataset['name']}; one prediction file per dataset",
                           source=output)
    prior = _read_previous(audit) if exists(audit) else None
    if prior is not None:
        validate(PredictAudit, prior, source=audit)
    if prior is not None:
        methods = {r.get("settings", {}).get("method", "generate") for r in prior["runs"]}
        for what, mine, theirs in (("method", method, ", ".join(sorted(methods))), ("model", model, prior["model"]),
                                   ("dataset", dataset["sha256"], prior["dataset"]["sha256"]),
                                   ("prompt template", prompt["sha256"], prior["prompt"]["sha256"])):
            if mine != theirs:
                raise BadInput(f"was made with another {what} ({theirs!r}, this run: {mine!r}); one prediction "
                               "file holds one model's answers to one dataset and prompt: choose another --output",
                               source=audit)
    return {k: v for k, v in previous.items() if v is not None}, prior


_COUNTS = ("asked", "answered", "unparseable", "failed", "tokens_in", "tokens_out", "total_tokens")


class Recorder:
    """Collects this run's outcomes and saves the prediction file and its audit (audit first)."""

    def __init__(self, output: Path, audit: Path, *, order: Sequence[str], predictions: dict[str, Any],
                 prior: dict[str, Any] | None, model: str, dataset: dict[str, Any], prompt: dict[str, Any],
                 dataset_raw: bytes, prompt_raw: bytes, run: dict[str, Any],
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.output, self.audit = output, audit
        self._position = {sid: i for i, sid in enumerate(order)}
        self.predictions = predictions
        self._prior_runs: list[dict[str, Any]] = list(prior["runs"]) if prior else []
        self._prior_calls: list[dict[str, Any]] = list(prior["calls"]) if prior else []
        self._head = {"model": model, "dataset": dataset, "prompt": prompt}
        self._inputs = {"dataset": dataset_raw, "prompt": prompt_raw}
        self.run = {"run": len(self._prior_runs) + 1, **run, **dict.fromkeys(_COUNTS, 0), "wall_time_s": 0.0,
                    "complete": False}
        self.calls: list[tuple[int, dict[str, Any]]] = []
        self.first_error: str | None = None
        #: the --tpm budget's tokens per minute (``MinuteBudget.windows``), recorded in the run
        self.tpm_windows: dict[int, int] | None = None
        self._clock = clock
        self._t0 = self._last_save = clock()

    def add(self, outcome: Outcome) -> None:
        record = outcome.record.model_dump(mode="json") if outcome.record is not None else None
        call: dict[str, Any] = {
            "run": self.run["run"], "sample_id": outcome.sample_id, "status": outcome.status,
            "prediction": outcome.prediction, "answer_text": outcome.answer_text, "error": outcome.error,
            "record": record, "constraint": outcome.constraint}
        if outcome.option_loglikelihoods is not None:
            call["option_loglikelihoods"] = list(outcome.option_loglikelihoods)
        self.calls.append((self._position[outcome.sample_id], call))
        r = self.run
        r["asked"] += 1
        r[outcome.status] += 1
        if outcome.status == "failed":
            self.first_error = self.first_error or outcome.error
        else:
            self.predictions[outcome.sample_id] = outcome.prediction
        for rec in [record] if record is not None else [x.model_dump(mode="json") for x in outcome.records]:
            r["tokens_in"] += rec["tokens_in"] or 0
            r["tokens_out"] += rec["tokens_out"] or 0
            r["total_tokens"] += rec["total_tokens"] or 0
        if self._clock() - self._last_save >= SAVE_EVERY_S:
            self.save()

    def save(self, *, complete: bool = False) -> None:
        """Write the audit, then the prediction file (each atomically); ``complete`` only once every question
        of the run has its outcome (a periodic save, Ctrl-C or a crash leave the run incomplete)."""
        self.run["wall_time_s"] = round(self._clock() - self._t0, 6)
        self.run["complete"] = complete
        if self.tpm_windows is not None:
            windows = dict(self.tpm_windows)  # one C-level copy: safe while worker threads reserve tokens
            self.run["tpm_windows"] = {str(k): v for k, v in sorted(windows.items())}
        runs = [*self._prior_runs, self.run]
        calls = self._prior_calls + [c for _, c in sorted(self.calls, key=lambda pc: pc[0])]
        ordered = {sid: self.predictions[sid] for sid in self._position if sid in self.predictions}
        summary = {key: sum(r[key] for r in runs) for key in _COUNTS}
        summary["wall_time_s"] = round(sum(r["wall_time_s"] for r in runs), 6)
        summary |= {"num_questions": len(self._position), "num_predictions": len(ordered), "runs": len(runs)}
        doc = {"format": "rxn-predict-audit", **self._head, "prediction_file": self.output.name,
               "summary": summary, "runs": runs, "calls": calls,
               "provenance": provenance("rxn-predict", self._inputs, extra={"model": self._head["model"]})}
        atomic_write_json(self.audit, doc)
        atomic_write_json(self.output, ordered)
        self._last_save = self._clock()


def dataset_info(name: str, question_type: str, num_questions: int, raw: bytes) -> dict[str, Any]:
    return {"name": name, "question_type": question_type, "num_questions": num_questions, "sha256": sha256_bytes(raw)}
