"""inspect_ai logs of the rxn tasks -> a prediction file (``rxn eval-mc / eval-fib --from-inspect LOG``).

A log written by ``benchscore.rxn.inspect``'s ``rxn_mc`` or ``rxn_fib`` task becomes the
``{sample_id: prediction}`` file ``rxn predict`` writes, read by the same rules
(``benchscore.rxn.predict.read_answer``): an answer the rules read is its prediction, an unparseable
answer is its raw text (the evaluators count it invalid), and a sample without an answer (it
errored: the model call failed after inspect_ai's retries) has no prediction, so it is *missing*,
exactly as a failed call of ``rxn predict``. The log must be of the dataset given with
``--dataset`` (the task records the dataset's sha256 in the log), of the task that matches the
command (``rxn_mc`` for ``eval-mc``), and of one epoch. The logs are read by
:mod:`benchscore.sources.inspect_logs` (files, folders, eval sets, fsspec URLs). A sample inspect_ai
retried after an error (``retry_on_error``) is answered by its last attempt (inspect_ai's rule, the
policy ``last-attempt``); each log's entry counts them (``retried_samples``) and names the policy
(``retries``). A log whose run did not finish (status ``cancelled`` or ``error``) is scored all the
same, but the evaluation is not final: its entry carries the status and the run's error, and the
command exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchscore.common.errors import BadInput

#: the task name -> the dataset format it runs (``benchscore.rxn.inspect``)
TASK_FORMATS = {"rxn_mc": "rxn-multiple-choice", "rxn_fib": "rxn-fill-in-blank"}
#: the key of the task metadata (``EvalSpec.metadata``) that identifies the dataset and the prompt
METADATA_KEY = "rxn_dataset"
#: how a retried sample is answered (the ``retries`` policy of compare's counts, in its words)
RETRIES = "last-attempt"
RETRIES_WORDS = "the last attempt's answer stands: inspect_ai's rule"
_COMMAND = {"rxn-multiple-choice": "eval-mc", "rxn-fill-in-blank": "eval-fib"}


def retried_text(entry: dict[str, Any]) -> str:
    """How many samples of a log inspect_ai retried, and which attempt answers them (terminal and report)."""
    return f"{entry.get('retried_samples', 0)} retried samples ({RETRIES_WORDS})"


@dataclass(frozen=True)
class Dataset:
    """A ``--dataset`` file: its path, format, sha256 and samples by id."""

    path: Path
    format: str
    sha256: str
    samples: dict[str, dict[str, Any]]


@dataclass
class FromInspect:
    """The predictions read from the logs, and what the output records of each log."""

    predictions: dict[str, Any]
    logs: list[dict[str, Any]]


def predictions_from_logs(logs: list[str | Path], datasets: list[Dataset], fmt: str) -> FromInspect:
    """The prediction file of the logs (see the module docstring); raises :class:`BadInput`.

    Each log's entry records how its run ended (``status``; ``error``, the run's error message, when it
    ended in error): a log whose status is not ``success`` makes the evaluation not final; and how many of
    its samples inspect_ai retried after an error (``retried_samples``, answered by their last attempt:
    ``retries``)."""
    from benchscore.sources.inspect_logs import open_logs

    from .predict import read_answer

    by_sha = {d.sha256: d for d in datasets}
    predictions: dict[str, Any] = {}
    where: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    with open_logs(logs) as opened:
        for log in opened:
            header = log.header
            source = header.location.url
            name = header.task.rsplit("/", 1)[-1]
            meta = header.metadata.get(METADATA_KEY)
            if name not in TASK_FORMATS or not isinstance(meta, dict):
                raise BadInput(f"a log of task {header.task!r}; --from-inspect reads logs of benchscore's rxn_mc and "
                               "rxn_fib tasks (src/benchscore/rxn/inspect.py)", source=source, field="eval.task")
            if TASK_FORMATS[name] != fmt:
                raise BadInput(f"a log of {name} ({TASK_FORMATS[name]}); score it with rxn "
                               f"{_COMMAND[TASK_FORMATS[name]]}", source=source, field="eval.task")
            dataset = by_sha.get(meta.get("sha256"))
            if dataset is None:
                raise BadInput(f"was run on the dataset {meta.get('name')!r} (sha256 {meta.get('sha256')}), which is "
                               "not one of the --dataset files; give that file", source=source,
                               field="eval.metadata.rxn_dataset")
            if header.epochs != 1:
                raise BadInput(f"the log has {header.epochs} epochs; V6 scores one answer per question: run the task "
                               "with --epochs 1", source=source, field="eval.config.epochs")
            answered = errored = retried = 0
            for sample in log.samples():
                sid = str(sample.id)
                record = f"sample {sample.id!r}"
                question = dataset.samples.get(sid)
                if question is None:
                    raise BadInput(f"{sid!r} is not a sample id of {dataset.path.name}", source=source, record=record,
                                   field="id")
                if sid in where:
                    raise BadInput(f"{sid!r} is answered in {where[sid]} too; one answer per question", source=source,
                                   record=record, field="id")
                where[sid] = header.name
                retried += bool(sample.retries)
                if sample.error is not None:  # no answer: missing, like a call rxn predict could not make
                    errored += 1
                    continue
                predictions[sid] = read_answer(question, sample.output)[1]
                answered += 1
            entry = header.identity() | {"dataset": dataset.path.name, "dataset_sha256": dataset.sha256,
                                         "answers": answered, "errored_samples": errored, "retried_samples": retried,
                                         "retries": RETRIES, "status": header.status}
            if header.error is not None:
                entry["error"] = header.error.message
            out.append(entry)
    ordered = {sid: predictions[sid] for d in datasets for sid in d.samples if sid in predictions}
    return FromInspect(ordered, out)


__all__ = ["METADATA_KEY", "RETRIES", "RETRIES_WORDS", "TASK_FORMATS", "Dataset", "FromInspect",
           "predictions_from_logs", "retried_text"]
