"""inspect_ai logs of the rxn tasks -> a prediction file (``rxn eval-mc / eval-fib --from-inspect LOG``).

A log written by ``benchscore.rxn.inspect``'s ``rxn_mc`` or ``rxn_fib`` task becomes the
``{sample_id: prediction}`` file ``rxn predict`` writes, read by the same rules
(``benchscore.rxn.predict.read_answer``): an answer the rules read is its prediction, an unparseable
answer is its raw text (the evaluators count it invalid), and a sample without an answer (it
errored: the model call failed after inspect_ai's retries) has no prediction, so it is *missing*,
exactly as a failed call of ``rxn predict``. The log must be of the dataset given with
``--dataset`` (the task records the dataset's sha256 in the log), of the task that matches the
command (``rxn_mc`` for ``eval-mc``), and of one epoch. The reading is
:mod:`benchscore.common.inspect_logs` (inspect_ai, imported only when a log is read).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchscore.common.errors import BadInput
from benchscore.common.inspect_logs import iter_samples, read_header

#: the task name -> the dataset format it runs (``benchscore.rxn.inspect``)
TASK_FORMATS = {"rxn_mc": "rxn-multiple-choice", "rxn_fib": "rxn-fill-in-blank"}
#: the key of the task metadata (``EvalSpec.metadata``) that identifies the dataset and the prompt
METADATA_KEY = "rxn_dataset"
_COMMAND = {"rxn-multiple-choice": "eval-mc", "rxn-fill-in-blank": "eval-fib"}


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


def predictions_from_logs(logs: list[Path], datasets: list[Dataset], fmt: str) -> FromInspect:
    """The prediction file of the logs (see the module docstring); raises :class:`BadInput`."""
    from .predict import read_answer

    by_sha = {d.sha256: d for d in datasets}
    predictions: dict[str, Any] = {}
    where: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for path in logs:
        header = read_header(path)
        spec = header.log.eval
        name = spec.task.rsplit("/", 1)[-1]
        meta = (spec.metadata or {}).get(METADATA_KEY)
        if name not in TASK_FORMATS or not isinstance(meta, dict):
            raise BadInput(f"a log of task {spec.task!r}; --from-inspect reads logs of benchscore's rxn_mc and "
                           "rxn_fib tasks (src/benchscore/rxn/inspect.py)", source=path, field="eval.task")
        if TASK_FORMATS[name] != fmt:
            raise BadInput(f"a log of {name} ({TASK_FORMATS[name]}); score it with rxn {_COMMAND[TASK_FORMATS[name]]}",
                           source=path, field="eval.task")
        dataset = by_sha.get(meta.get("sha256"))
        if dataset is None:
            raise BadInput(f"was run on the dataset {meta.get('name')!r} (sha256 {meta.get('sha256')}), which is not "
                           "one of the --dataset files; give that file", source=path, field="eval.metadata.rxn_dataset")
        if header.epochs != 1:
            raise BadInput(f"the log has {header.epochs} epochs; V6 scores one answer per question: run the task "
                           "with --epochs 1", source=path, field="eval.config.epochs")
        answered = errored = 0
        for sample in iter_samples(path):
            sid = str(sample.id)
            record = f"sample {sample.id!r}"
            question = dataset.samples.get(sid)
            if question is None:
                raise BadInput(f"{sid!r} is not a sample id of {dataset.path.name}", source=path, record=record,
                               field="id")
            if sid in where:
                raise BadInput(f"{sid!r} is answered in {where[sid]} too; one answer per question", source=path,
                               record=record, field="id")
            where[sid] = path.name
            if sample.error is not None:  # no answer: missing, like a call rxn predict could not make
                errored += 1
                continue
            predictions[sid] = read_answer(question, sample.output.completion if sample.output else "")[1]
            answered += 1
        out.append(header.identity() | {"dataset": dataset.path.name, "dataset_sha256": dataset.sha256,
                                        "answers": answered, "errored_samples": errored})
    ordered = {sid: predictions[sid] for d in datasets for sid in d.samples if sid in predictions}
    return FromInspect(ordered, out)


__all__ = ["METADATA_KEY", "TASK_FORMATS", "Dataset", "FromInspect", "predictions_from_logs"]
