"""Reading lm-evaluation-harness output at the door: ``results_*.json`` and its ``--log_samples`` files.

``lm_eval ... --output_path OUT --log_samples`` writes, per run, ``results_<timestamp>.json`` (the
aggregate numbers, each task's config, n-shot, ``n-samples``) and, per task,
``samples_<task>_<timestamp>.jsonl`` beside it: one line per document and filter with ``doc_id``,
``filter``, ``metrics`` (the metric names the line carries), the value of each, and ``doc_hash``,
``prompt_hash`` and ``target_hash`` (sha256 of the document, the prompt and the target). Both are
plain JSON (no lm-eval import is needed). The readers refuse, in one line naming file, line and
field, a line without those fields, a duplicate document and filter, a non-finite value, and a
samples file of a task the results file does not list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchscore.common.errors import BadInput, shown

_RESULTS = re.compile(r"^results_(?P<stamp>.+)\.json$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
#: fields every ``--log_samples`` line carries (lm-evaluation-harness 0.4.3 and later)
LINE_FIELDS = ("doc_id", "filter", "metrics", "doc_hash", "prompt_hash", "target_hash")


@dataclass
class SampleLine:
    """One line of a samples file: a document under one filter, with its metric values as written."""

    line: int
    doc_id: int
    filter: str
    doc_hash: str
    prompt_hash: str
    target_hash: str
    values: dict[str, Any]
    doc: dict[str, Any]


@dataclass
class TaskSamples:
    task: str
    path: Path
    lines: list[SampleLine] = field(default_factory=list)


@dataclass
class LmEvalRun:
    """One run: its ``results_*.json`` document and the samples files of its tasks."""

    results_path: Path
    results: dict[str, Any]
    tasks: dict[str, TaskSamples]

    @property
    def model(self) -> str:
        r = self.results
        return str(r.get("model_name") or (r.get("config") or {}).get("model") or "unknown")

    @property
    def version(self) -> str | None:
        v = self.results.get("lm_eval_version")
        return str(v) if v is not None else None


def is_results_file(path: Path) -> bool:
    return path.is_file() and _RESULTS.match(path.name) is not None


def runs_under(folder: Path) -> list[Path]:
    """Every ``results_*.json`` under a folder (``--output_path`` puts each model in a sub-folder)."""
    return sorted(p for p in folder.rglob("results_*.json") if _RESULTS.match(p.name))


def _samples_files(results_path: Path) -> dict[str, Path]:
    stamp = _RESULTS.match(results_path.name).group("stamp")  # type: ignore[union-attr]
    suffix = f"_{stamp}.jsonl"
    out = {}
    for p in sorted(results_path.parent.glob(f"samples_*{suffix}")):
        out[p.name[len("samples_"):-len(suffix)]] = p
    return out


def _line(path: Path, number: int, row: Any) -> SampleLine:
    record = f"line {number}"
    if not isinstance(row, dict):
        raise BadInput("expected a JSON object (one sample of lm-evaluation-harness --log_samples)", source=path,
                       record=record)
    for key in LINE_FIELDS:
        if key not in row:
            raise BadInput(f"missing; an lm-evaluation-harness --log_samples line carries {', '.join(LINE_FIELDS)} "
                           "(lm-eval 0.4.3 or later)", source=path, record=record, field=key)
    doc_id = row["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
        raise BadInput(f"expected a document index (an integer >= 0), got {shown(doc_id)}", source=path, record=record,
                       field="doc_id")
    if not isinstance(row["filter"], str) or not row["filter"]:
        raise BadInput(f"expected a filter name, got {shown(row['filter'])}", source=path, record=record, field="filter")
    for key in ("doc_hash", "prompt_hash", "target_hash"):
        if not isinstance(row[key], str) or not _HEX64.match(row[key]):
            raise BadInput(f"expected a sha256 (64 hex digits), got {shown(row[key])}", source=path, record=record,
                           field=key)
    metrics = row["metrics"]
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise BadInput(f"expected a list of metric names, got {shown(metrics)}", source=path, record=record,
                       field="metrics")
    values = {}
    for m in metrics:
        if m not in row:
            raise BadInput(f"metric {m!r} is listed in 'metrics' but has no value", source=path, record=record, field=m)
        values[m] = row[m]
    doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
    return SampleLine(number, doc_id, row["filter"], row["doc_hash"], row["prompt_hash"], row["target_hash"], values,
                      doc)


#: the objects of a results file benchscore reads, and what each holds per task (None: any value)
_PER_TASK = {"results": dict, "configs": dict, "versions": None, "n-shot": None, "n-samples": dict,
             "higher_is_better": dict}


def _check_results(results: dict[str, Any], path: Path) -> None:
    """The shapes benchscore reads in a results file, each refused in one line naming its field: every object of
    :data:`_PER_TASK` an object of tasks (each task's entry an object where one is read), ``config`` an object,
    a task's ``metric_list`` a list, ``higher_is_better`` true, false or null per metric."""
    for key in ("config", *_PER_TASK):
        value = results.get(key)
        if value is not None and not isinstance(value, dict):
            raise BadInput(f"expected an object, got {shown(value)}", source=path, field=key)
    for key, kind in _PER_TASK.items():
        for task, entry in (results.get(key) or {}).items():
            if kind is not None and entry is not None and not isinstance(entry, kind):
                raise BadInput(f"expected an object, got {shown(entry)}", source=path, field=f"{key}.{task}")
    for task, config in (results.get("configs") or {}).items():
        metric_list = (config or {}).get("metric_list")
        if metric_list is not None and not isinstance(metric_list, list):
            raise BadInput(f"expected a list, got {shown(metric_list)}", source=path, field=f"configs.{task}.metric_list")
    for task, better in (results.get("higher_is_better") or {}).items():
        for metric, value in (better or {}).items():
            if value is not None and not isinstance(value, bool):
                raise BadInput(f"expected true, false or null, got {shown(value)}", source=path,
                               field=f"higher_is_better.{task}.{metric}")


def read_run(results_path: Path) -> LmEvalRun:
    """The results file and every samples file of its run (same timestamp, same folder)."""
    from benchscore.common.readers import loads_json, read_json, read_json_bytes

    results = read_json(results_path)
    if not isinstance(results, dict) or not isinstance(results.get("results"), dict):
        raise BadInput("not an lm-evaluation-harness results file (no 'results' object)", source=results_path,
                       field="results")
    _check_results(results, results_path)
    known = set(results["results"]) | set(results.get("configs") or {})
    files = _samples_files(results_path)
    if not files:
        raise BadInput("has no samples_<task>_*.jsonl beside it: run lm_eval with --log_samples to compare its "
                       "samples", source=results_path)
    tasks: dict[str, TaskSamples] = {}
    for task, path in files.items():
        if task not in known:
            raise BadInput(f"a samples file of task {task!r}, which {results_path.name} does not list", source=path)
        data = read_json_bytes(path, lines=True)
        ts = TaskSamples(task, path)
        seen: dict[tuple[int, str], int] = {}
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            line = _line(path, number, loads_json(raw, path, line=number))
            key = (line.doc_id, line.filter)
            if key in seen:
                raise BadInput(f"document {line.doc_id} under filter {line.filter!r} appears twice (first on line "
                               f"{seen[key]})", source=path, record=f"line {number}", field="doc_id")
            seen[key] = number
            ts.lines.append(line)
        tasks[task] = ts
    return LmEvalRun(results_path, results, tasks)


__all__ = ["LINE_FIELDS", "LmEvalRun", "SampleLine", "TaskSamples", "is_results_file", "read_run", "runs_under"]
