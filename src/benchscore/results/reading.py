"""Paths in, :class:`~benchscore.results.formats.Evaluation` out: which tool wrote a file, and what
the room takes from it (docs/results.md).

- inspect_ai: a ``.eval`` or ``.json`` log, or a folder of them, or an fsspec URL of either (``s3://``,
  ``gs://``, ...: copied once to a temporary folder removed at exit, as ``benchscore.sources.inspect_logs``
  fetches them). An eval-set folder (one holding ``eval-set.json``) gives the final log of each of its
  tasks, the last attempt by what the logs record (``eval.created``, then ``stats``: never file times,
  which a copy loses); the older attempts it keeps are named in a note, not read.
  The logs of one run (``run_id``) and one model form one evaluation, one task per log. Per sample x
  epoch: every scorer's value read by inspect_ai's conventions (``values``), the error, the limit,
  the retried errors, the metadata; the dataset identity is a sha256 of the input, target and
  choices (inspect_ai records no dataset hash).
- lm-evaluation-harness: a ``results_*.json`` (with its ``samples_<task>_*.jsonl`` beside it), a
  samples file (its results file is found beside it), or an ``--output_path`` folder (every run
  under it). One run is one evaluation; each task's metric under each filter is one metric
  (``task/metric,filter``); a document's identity is its ``doc_hash`` and ``target_hash``.
- Every Eval Ever: an aggregate record ``X.json`` with ``X_samples.jsonl`` beside it, or the samples
  file alone. Each ``evaluation_result_id`` (or ``evaluation_name``) is a task with two metrics,
  ``NAME/score`` and ``NAME/is_correct``; the identity is the record's ``sample_hash`` (a sha256
  of the input and references computed here when it is null); ``metadata.epoch`` is the epoch when
  the record has one (the inspect_ai converter writes it).
- A table of per-sample scores: a ``.parquet``, ``.csv`` or ``.jsonl`` file with the columns ``model``,
  ``sample_id``, optionally ``epoch``, and one numeric column per metric (recognised by those columns); one
  evaluation per model (``benchscore.results.score_tables``).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchscore.common.errors import BadInput
from benchscore.common.readers import head_of

from .formats import Evaluation, MetricInfo, SampleResult
from .values import (
    COUNTING,
    DEFAULT_REDUCER,
    MAX_MAGNITUDE,
    NotNumeric,
    flatten,
    shown_number,
    within_magnitude,
    written,
)

INSPECT, LM_EVAL, EEE, TABLE = "inspect_ai", "lm-evaluation-harness", "every_eval_ever", "score_table"
_HEAD = 4096
_SKIP_JSON = {"eval-set.json", "logs.json", "listing.json"}
#: a file with one of these suffixes is read as a table of per-sample scores (refused, naming its columns, when
#: it lacks model or sample_id): no benchscore output has them
_TABLE_SUFFIXES = (".parquet", ".csv", ".jsonl")
#: how far the mean of the per-sample values may be from the number a tool reported for it
_AGREE = 1e-9


def _head(path: Path) -> bytes:
    """The first bytes of a regular file (never opens a FIFO or a device: the readers refuse those)."""
    return head_of(path, _HEAD)


def kind_of_file(path: Path) -> str | None:
    """The tool that wrote this file (None: not another tool's results, e.g. a benchscore output)."""
    name = path.name
    if name.endswith(".eval"):
        return INSPECT
    if re.match(r"^results_.+\.json$", name) or re.match(r"^samples_.+\.jsonl$", name):
        return LM_EVAL
    if name.endswith("_samples.jsonl"):
        return EEE
    if name.lower().endswith(_TABLE_SUFFIXES):
        from benchscore.sources.score_tables import is_score_table

        return TABLE if is_score_table(path) else None
    if name.endswith(".json") and name not in _SKIP_JSON:
        head = _head(path)
        if re.search(rb'"schema_version"\s*:', head) and re.search(rb'"evaluation_id"\s*:', head):
            return EEE
        if re.match(rb'\s*\{\s*"version"\s*:\s*\d+\s*,', head) and b'"eval"' in head:
            return INSPECT
    return None


def is_url(given: str | os.PathLike[str]) -> bool:
    """Whether what the user gave is an fsspec URL of a remote log or folder (``file://`` is local)."""
    text = os.fspath(given)
    return "://" in text and not text.startswith("file://")


def _local(given: str | os.PathLike[str]) -> Path:
    text = os.fspath(given)
    return Path(text[len("file://"):] if text.startswith("file://") else text)


_FETCHED: list[Path] = []


def _fetch_folder() -> Path:
    """The temporary folder remote logs are copied to (one per process, removed at exit)."""
    if not _FETCHED:
        _FETCHED.append(Path(tempfile.mkdtemp(prefix="benchscore-logs-")))
        atexit.register(shutil.rmtree, _FETCHED[0], True)
    return _FETCHED[0]


def _inspect_logs_of(given: str | os.PathLike[str], notes: dict[Path, list[str]],
                     where: str | os.PathLike[str] | None = None) -> list[Path]:
    """The local paths of the inspect_ai logs an eval-set folder or a URL stands for (remote logs fetched);
    ``notes`` gets, per log picked from an eval set, what the eval set holds that was not read. ``where``: where
    to read what was ``given`` (verify's staged copy), if not there."""
    from benchscore.sources.inspect_logs import resolve_logs

    out = []
    unlogged_said = set()
    locations = resolve_logs([given if where is None else where])
    for loc in locations:
        path = _fetched(loc) if loc.remote else Path(loc.url)
        if loc.remote:  # provenance: the file, by its name relative to the URL given
            _note_remote(given, loc.url, path)
        if loc.replaced:
            notes.setdefault(path, []).append(f"{loc.name}: the final log of task {loc.task_id} in its eval set; "
                                              f"older logs of the task not read: {', '.join(loc.replaced)}")
        if loc.unlogged and loc.eval_set not in unlogged_said:
            unlogged_said.add(loc.eval_set)
            notes.setdefault(path, []).append(f"eval set {loc.eval_set}: no log of task(s) {', '.join(loc.unlogged)} "
                                              "(listed in its eval-set.json; never run, or their logs are gone)")
        out.append(path)
    if any(loc.remote and loc.eval_set for loc in locations):
        _note_remote_eval_set(given, {loc.url for loc in locations})
    return out


#: the URL each fetched copy was read from (``--scheduler``: a worker reads the URL itself, not this copy)
_URL_OF: dict[Path, str] = {}


def _fetched(loc: Any) -> Path:
    """A remote log copied to a folder of its own under its own name (what is read, and recorded, is that name)."""
    from benchscore.sources.inspect_logs import fetch_log

    home = Path(tempfile.mkdtemp(dir=_fetch_folder()))
    copy = fetch_log(loc, home)[0]
    named = home / loc.name
    os.replace(copy, named)
    _URL_OF[named] = loc.url
    return named


def _note_remote(given: str | os.PathLike[str], url: str, path: Path) -> None:
    """Provenance of a fetched log: its name relative to the URL given (the URL of the log itself: one file)."""
    from benchscore.common.provenance import note_read

    base = os.fspath(given).rstrip("/")
    if url.rstrip("/") == base:
        note_read(given, url.rsplit("/", 1)[-1], path, whole=True)
    else:
        note_read(given, url[len(base) + 1:] if url.startswith(base + "/") else url.rsplit("/", 1)[-1], path)


def _note_remote_eval_set(given: str | os.PathLike[str], fetched: set[str]) -> None:
    """Provenance of a remote eval set: its manifest and every log in it were read to pick the final logs (the
    older attempts' headers too), so each one not ``fetched`` yet is fetched and recorded, as a local eval set's
    are."""
    from fsspec.core import url_to_fs

    from benchscore.sources.inspect_logs import EVAL_SET_MANIFEST, LogLocation

    fs, root = url_to_fs(os.fspath(given))
    protocol = os.fspath(given).split("://", 1)[0]
    for found, info in sorted(fs.find(root, detail=True).items()):
        name = found.rsplit("/", 1)[-1]
        if info.get("type", "file") != "file" or name.startswith(".") or not (
                name == EVAL_SET_MANIFEST or name.endswith((".eval", ".json"))):
            continue
        url = found if "://" in found else f"{protocol}://{found}"
        if url not in fetched:
            _note_remote(given, url, _fetched(LogLocation(url, name, True)))


def _note_folder(given: str | os.PathLike[str], root: Path, files: Iterable[Path], eval_set: bool) -> None:
    """Provenance of a local folder given: every file read through it, by its name relative to the folder (an
    eval set: its manifest and every log in it, whose headers were read to pick the final logs)."""
    from benchscore.common.provenance import note_read
    from benchscore.sources.inspect_logs import EVAL_SET_MANIFEST

    files = list(files)
    if eval_set:
        files.append(root / EVAL_SET_MANIFEST)
        for base, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            files.extend(Path(base) / n for n in names if n.endswith((".eval", ".json")) and not n.startswith("."))
    for f in dict.fromkeys(files):
        try:
            rel = Path(os.path.abspath(f)).relative_to(os.path.abspath(root))
        except ValueError:
            continue
        note_read(given, rel.as_posix(), f)


def files_in(folder: Path) -> list[tuple[str, Path]]:
    """Every results file under a folder, with its tool (an lm-eval samples file is found through its
    results file, an Every Eval Ever samples file through its aggregate record when it has one)."""
    out: list[tuple[str, Path]] = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        kind = kind_of_file(p)
        if kind == LM_EVAL and p.name.startswith("samples_"):
            continue
        if kind == EEE and p.name.endswith("_samples.jsonl") and p.with_name(p.name[:-14] + ".json").is_file():
            continue
        if kind is not None:
            out.append((kind, p))
    return out


def recognises(path: str | os.PathLike[str]) -> bool:
    """Whether ``benchscore compare`` reads this path as results of another tool (a folder, a log, a URL)."""
    from benchscore.common.provenance import located

    if is_url(path):
        return True
    path = _local(located(path))  # verify's staged copy of what was given, if any
    return path.is_dir() or kind_of_file(path) is not None or path.name.lower().endswith(_TABLE_SUFFIXES)


def _results_of_samples(path: Path) -> Path:
    for r in sorted(path.parent.glob("results_*.json")):
        stamp = r.name[len("results_"):-len(".json")]
        if path.name.endswith(f"_{stamp}.jsonl"):
            return r
    raise BadInput("an lm-evaluation-harness samples file without its results_<timestamp>.json beside it (it names "
                   "the model and how each metric is aggregated)", source=path)


def read(paths: Sequence[str | os.PathLike[str]], *, on_file=None, reducer: str | None = None,
         intersection: bool = False, map_units=None, jobs: int | None = 1) -> list[Evaluation]:
    """The evaluations in ``paths`` (files, folders and URLs, any mix of what the module docstring lists).

    ``on_file(path, samples)`` is called as each file is read (for a progress bar; ``samples``: the sample x
    epochs it held, None when not counted). ``reducer``: the epoch reducer of every metric in place of the one
    each task declares (``--reducer``). ``intersection``: a table of scores whose models do not all hold the
    same samples is read on the samples they share (else refused). ``jobs``: processes reading the inspect_ai
    logs (``--jobs``; None: one per core); the evaluations are the same for any. ``map_units(fn, units)``: how
    the reading is spread on a cluster (``results.distributed.dask_map``): an iterable of ``fn(unit)`` in the
    order of ``units``, each unit one result's files (:func:`read_unit`); None: read here."""
    from benchscore.common.provenance import located, note_read
    from benchscore.sources.inspect_logs import EVAL_SET_MANIFEST

    found: list[tuple[str, Path]] = []
    notes: dict[Path, list[str]] = {}
    folders: list[tuple[str | os.PathLike[str], Path, bool]] = []  # what was given, where it was read, eval set?
    for given in paths:
        where = located(given)  # what was given, or verify's staged copy of it
        if is_url(where) or (_local(where) / EVAL_SET_MANIFEST).is_file():
            found.extend((INSPECT, p) for p in _inspect_logs_of(given, notes, where))
            if not is_url(where):
                folders.append((given, _local(where), True))
            continue
        p = _local(where)
        if p.is_dir():
            folders.append((given, p, False))
            inside = files_in(p)
            if not inside:
                raise BadInput("holds no inspect_ai log, lm-evaluation-harness results_*.json, Every Eval Ever "
                               "record or table of per-sample scores", source=p)
            found.extend(inside)
        else:
            from benchscore.common.readers import check_file

            check_file(p)  # a regular file within the size limit: never a FIFO, a device or a link loop
            kind = kind_of_file(p)
            if kind is None and p.name.lower().endswith(_TABLE_SUFFIXES):
                from benchscore.common.readers import check_file
                from benchscore.sources.score_tables import columns_of

                check_file(p)  # not found, a FIFO, a device, too large: said as for any input
                columns = columns_of(p)
                raise BadInput("not a table of per-sample scores: it needs the columns model and sample_id (optional "
                               "epoch, one numeric column per metric); "
                               + (f"its columns are {', '.join(map(repr, columns))}" if columns is not None else
                                  "its columns cannot be read"), source=p)
            if kind is None:
                raise BadInput("not an inspect_ai log, lm-evaluation-harness output, Every Eval Ever record or "
                               "table of per-sample scores (columns model, sample_id, optional epoch, one numeric "
                               "column per metric)", source=p)
            if kind == LM_EVAL and p.name.startswith("samples_"):
                p = _results_of_samples(p)
            elif is_url(given):  # a URL of one file, read from verify's staged copy
                note_read(given, p.name, p, whole=True)
            found.append((kind, p))
    seen: set[Path] = set()
    unique = []
    for kind, p in found:
        real = p.resolve()
        if real in seen:
            raise BadInput("given twice", source=p)
        seen.add(real)
        unique.append((kind, p))
    out: list[Evaluation] = []
    logs = [p for kind, p in unique if kind == INSPECT]
    if map_units is not None:
        units = _units(unique, notes, reducer, intersection)
        for unit, got in zip(units, map_units(read_unit, units), strict=True):
            out.extend(got)
            if on_file is not None:
                for p, _ in unit[1]:
                    on_file(p, None)
        logs, unique = [], []  # read
    if logs:
        out.extend(from_inspect(logs, on_file=on_file, log_notes=notes, reducer=reducer, jobs=jobs))
    for kind, p in unique:
        if kind == LM_EVAL:
            out.append(from_lm_eval(p, reducer=reducer))
        elif kind == EEE:
            out.append(from_eee(p, reducer=reducer))
        elif kind == TABLE:
            from .score_tables import from_score_table

            before = len(out)
            out.extend(from_score_table(p, reducer=reducer, intersection=intersection))
        if kind != INSPECT and on_file is not None:
            on_file(p, sum(len(e.samples) for e in out[before:]) if kind == TABLE else len(out[-1].samples))
    for given, root, eval_set in folders:  # provenance: every file read through each folder given
        _note_folder(given, root, (f for e in out for f in e.files), eval_set)
    return out


# --- units: what one worker reads ---------------------------------------------------------------

#: one result's files: (kind, [(the path read here, the URL it was fetched from or None)], notes per log, reducer,
#: intersection); the logs of one inspect_ai run and model are one unit (one evaluation)
Unit = tuple[str, list[tuple[Path, str | None]], dict[Path, list[str]], str | None, bool]


def _units(found: list[tuple[str, Path]], notes: dict[Path, list[str]], reducer: str | None,
           intersection: bool) -> list[Unit]:
    """The units of the files found, in the order :func:`read` gives their evaluations (inspect_ai logs grouped
    by run and model from their headers, in order of first appearance, then every other file in order)."""
    from .inspect_adapter import log_facts

    def where(p: Path) -> tuple[Path, str | None]:
        return (p, _URL_OF.get(p))

    groups: dict[tuple[str, str], list[Path]] = {}
    for kind, p in found:
        if kind == INSPECT:
            facts = log_facts(p)
            groups.setdefault((facts.run_id, facts.model), []).append(p)
    units: list[Unit] = [(INSPECT, [where(p) for p in group], {p: notes[p] for p in group if p in notes}, reducer,
                          intersection) for group in groups.values()]
    units.extend((kind, [where(p)], {}, reducer, intersection) for kind, p in found if kind != INSPECT)
    return units


def read_unit(unit: Unit) -> list[Evaluation]:
    """The evaluations of one unit, read wherever this runs (a Dask worker: a remote log is read from its URL,
    fetched to a temporary folder of this process, and named in the evaluations as the caller's copy)."""
    kind, files, notes, reducer, intersection = unit
    with tempfile.TemporaryDirectory(prefix="benchscore-unit-") as tmp:
        local: list[Path] = []
        back: dict[Path, Path] = {}
        for path, url in files:
            mine = path
            if url is not None:
                from benchscore.sources.inspect_logs import LogLocation, fetch_log

                home = Path(tempfile.mkdtemp(dir=tmp))
                copy = fetch_log(LogLocation(url, path.name, True), home)[0]
                mine = home / path.name
                os.replace(copy, mine)
                back[mine] = path
            local.append(mine)
        if kind == INSPECT:
            mine_notes = {m: notes[p] for m, (p, _) in zip(local, files, strict=True) if p in notes}
            out = from_inspect(local, log_notes=mine_notes, reducer=reducer)
        elif kind == LM_EVAL:
            out = [from_lm_eval(local[0], reducer=reducer)]
        elif kind == EEE:
            out = [from_eee(local[0], reducer=reducer)]
        else:
            from .score_tables import from_score_table

            out = from_score_table(local[0], reducer=reducer, intersection=intersection)
    for e in out:
        e.source = back.get(e.source, e.source)
        e.files = [back.get(f, f) for f in e.files]
    return out


# --- inspect_ai ---------------------------------------------------------------------------------


@dataclass
class LogRead:
    """What one inspect_ai log gives once read and reduced to this room's terms (picklable: a worker process
    returns it): its facts, its samples, and per metric key whether its values are numbers (``bad``: why
    not) and whether every value lies in [0, 1] (``in_unit``), with the notes it adds."""

    facts: Any
    samples: list[SampleResult]
    keys: dict[str, None]
    bad: dict[str, str]
    in_unit: dict[str, bool]
    reducers: list[str]
    notes: list[str]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with its samples as plain tuples (a slots dataclass pickles field by field in Python: most
        of what a worker's result cost to send)."""
        rows = [(s.task, s.sample_id, s.epoch, s.values, s.identity, s.metadata, s.error, s.limit, s.retried_errors,
                 s.edits, s.raw) for s in self.samples]
        return _log_read, (self.facts, rows, self.keys, self.bad, self.in_unit, self.reducers, self.notes)


def _log_read(facts: Any, rows: list[tuple[Any, ...]], *rest: Any) -> LogRead:
    return LogRead(facts, [SampleResult(*row) for row in rows], *rest)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a log's records are made: they hold no cycles, and each collection
    walks every record made so far (a quarter of the reading time at 30,000 records, growing with the logs)."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_log(path: Path, reducer: str | None = None) -> LogRead:
    """One inspect_ai log read and reduced: its header's facts and every sample x epoch as a
    :class:`SampleResult` (the per-file step of :func:`from_inspect`; top level, so a process pool or a
    cluster can run it). ``reducer``: ``--reducer``."""
    with _collector_paused():
        return _read_log(path, reducer)


def _read_log(path: Path, reducer: str | None) -> LogRead:
    from benchscore.sources.inspect_logs import open_logs

    from .inspect_adapter import facts_of, sample_facts

    with open_logs([path]) as opened:  # the header read (and the log hashed) once
        header = opened[0].header
        facts = facts_of(header, path)
        return _reduced(facts, sample_facts(path, header=header), reducer)


def _reduced(facts: Any, read: Iterable[Any], reducer: str | None) -> LogRead:
    """The samples of one log (its facts, then each sample's facts as they are ``read``) as this room's terms."""
    task = facts.task
    notes: list[str] = []
    declared = facts.reducers or [DEFAULT_REDUCER]
    reducers = [reducer] if reducer else declared
    if reducer and declared != [reducer]:
        notes.append(f"{facts.path.name}: task {task}'s epochs reduced with {reducer} (--reducer), not with "
                     f"{', '.join(declared)} that the task declares")
    keep_raw = any(r in COUNTING for r in reducers)  # mode, majority: count the values as written
    bad: dict[str, str] = {}
    keys: dict[str, None] = {}
    in_unit: dict[str, bool] = {}
    samples: list[SampleResult] = []
    # records that are equal are one object (never changed once made): the values of most samples are one of a
    # few, the epochs of a sample share its identity, most metadata is empty (a third of the memory a log takes)
    same_values: dict[tuple[Any, ...], dict[str, float | None]] = {}
    same_identity: dict[Any, Any] = {}
    no_metadata: dict[str, Any] = {}
    for s in read:
        values: dict[str, float | None] = {}
        raw_values: dict[str, Any] | None = {} if keep_raw else None
        for scorer, raw in s.scores.items():
            base = f"{task}/{scorer}"
            try:
                got = flatten(base, raw)
            except NotNumeric as exc:
                bad.setdefault(base, f"its values are not numbers (sample {s.sample_id!r} epoch {s.epoch}: {exc})")
                keys.setdefault(base)
                continue
            for k, v in got.items():
                keys.setdefault(k)
                values[k] = v
                if v is not None:
                    in_unit[k] = in_unit.get(k, True) and 0.0 <= v <= 1.0
            if raw_values is not None:
                raw_values.update(written(base, raw))
        values = same_values.setdefault(tuple(values.items()), values)
        samples.append(SampleResult(task, s.sample_id, s.epoch, values, same_identity.setdefault(s.identity, s.identity),
                                    s.metadata or no_metadata, s.error, s.limit, s.retried_errors, s.edits,
                                    raw_values or None))
    return LogRead(facts, samples, keys, bad, in_unit, reducers, notes)


def from_inspect(logs: Iterable[Path], *, on_file=None, log_notes: dict[Path, list[str]] | None = None,
                 reducer: str | None = None, jobs: int | None = 1) -> list[Evaluation]:
    """The evaluations of inspect_ai logs: one per run and model (its logs' tasks together); ``log_notes``: per
    log picked from an eval set, what the eval set holds that was not read (older attempts, tasks without a
    log), carried into the evaluation's notes. ``reducer``: the epoch reducer of every metric in place of the
    tasks' own (``--reducer``; said in a note where it replaces another). ``jobs``: processes reading the logs
    (:func:`benchscore.results.parallel.map_files`; None: one per core); the evaluations are the same for any.
    ``on_file(path, samples)`` is called as each log is read."""
    from functools import partial

    from benchscore.common.guard import note_input

    from .parallel import map_files

    logs = list(logs)
    for path in logs:  # the inputs an output must not overwrite: noted here too (a worker's notes stay in it)
        note_input(path)
    with _collector_paused():  # the records coming back from the workers too
        reads = map_files(partial(read_log, reducer=reducer), logs, jobs=jobs,
                          on_done=None if on_file is None else lambda path, got: on_file(path, len(got.samples)))
    groups: dict[tuple[str, str], list[LogRead]] = {}
    for path, got in zip(logs, reads, strict=True):
        facts = got.facts
        group = groups.setdefault((facts.run_id, facts.model), [])
        twin = next((g.facts for g in group if g.facts.task == facts.task), None)
        if twin is not None:
            raise BadInput(f"two logs of task {facts.task!r} for model {facts.model} in run {facts.run_id}: "
                           f"{twin.path.name} and {path.name}; give the one to compare", source=path)
        group.append(got)
    out = []
    for (run_id, model), group in groups.items():
        samples: list[SampleResult] = []
        metrics: dict[str, MetricInfo] = {}
        settings: dict[str, dict[str, Any]] = {}
        statuses = []
        notes: list[str] = []
        planned: dict[str, int] = {}
        planned_ids: dict[str, list[str]] = {}
        planned_epochs: dict[str, int] = {}
        for got in group:
            facts = got.facts
            task = facts.task
            settings[task] = {"task args": facts.task_args, "epochs": facts.epochs}
            planned_epochs[task] = facts.epochs
            statuses.append((facts.status, facts.error, facts.path.name))
            notes.extend((log_notes or {}).get(facts.path, []))
            if facts.planned_sample_epochs is not None:
                planned[task] = facts.planned_sample_epochs
            if facts.sample_ids is not None:
                planned_ids[task] = facts.sample_ids
            notes.extend(got.notes)
            samples.extend(got.samples)
            reducers = got.reducers
            for key in got.keys:
                scorer = key.split("/", 2)[1]
                for red in reducers:
                    name = key if len(reducers) == 1 else f"{key}@{red}"
                    report = facts.reported.get((scorer, None if len(reducers) == 1 else red)) or \
                        facts.reported.get((scorer, red)) or {}
                    shown_value = report.get("accuracy", report.get("mean")) if key.count("/") == 1 else None
                    metrics[name] = MetricInfo(
                        name, task, reducer=red, key=key, scorer=scorer,
                        higher_is_better=True if shown_value is not None else None,
                        reported=shown_value, not_per_sample=got.bad.get(key) or got.bad.get(f"{task}/{scorer}"),
                        values_in_unit_interval=got.in_unit.get(key, True))
        facts_of = [g.facts for g in group]
        worst = next((s for s in statuses if s[0] == "error"), None) or \
            next((s for s in statuses if s[0] == "cancelled"), None) or statuses[0]
        status, error, where = worst
        if status != "success":
            notes.append(f"{where}: status {status}" + (f" ({error.splitlines()[0]})" if error else ""))
        first = facts_of[0]
        created = [f.created for f in facts_of if f.created]
        out.append(Evaluation(
            tool=INSPECT, tool_version=first.tool_version, model=model, source=first.path, settings=settings,
            metrics=metrics, samples=samples, files=[f.path for f in facts_of],
            identity_method="sha256 of each sample's input, target and choices (inspect_ai records no dataset hash)",
            epochs=max(f.epochs for f in facts_of), status=status, status_error=error, planned_samples=planned,
            planned_ids=planned_ids, planned_epochs=planned_epochs, run=run_id, notes=notes,
            created=min(created) if created else None,
            datasets={f.task: f.dataset_name or f.task for f in facts_of}, library=(INSPECT, first.tool_version)))
    return out


# --- lm-evaluation-harness ------------------------------------------------------------------------

_SETTINGS = ("output_type", "doc_to_text", "doc_to_target", "doc_to_choice", "target_delimiter",
             "fewshot_delimiter", "generation_kwargs", "repeats")


def _number(value: Any) -> float | None:
    """A per-sample metric value as a number; None when it is not one (a corpus metric's pair, or a number beyond
    :data:`~benchscore.results.values.MAX_MAGNITUDE`, whose statistics would overflow)."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        try:
            out = float(value)
        except OverflowError:
            return None
        return out if within_magnitude(out) else None
    return None


def from_lm_eval(results_path: Path, *, reducer: str | None = None) -> Evaluation:
    """One lm-evaluation-harness run (see the module docstring)."""
    from benchscore.sources.lm_eval import read_run

    run = read_run(results_path)
    res = run.results
    configs = res.get("configs") or {}
    samples: list[SampleResult] = []
    metrics: dict[str, MetricInfo] = {}
    settings: dict[str, dict[str, Any]] = {}
    planned: dict[str, int] = {}
    notes: list[str] = []
    for task, ts in run.tasks.items():
        cfg = configs.get(task) or {}
        settings[task] = {"version": (res.get("versions") or {}).get(task), "n-shot": (res.get("n-shot") or {}).get(task),
                          **{k: cfg.get(k) for k in _SETTINGS if k in cfg},
                          "filters": sorted({line.filter for line in ts.lines})}
        effective = ((res.get("n-samples") or {}).get(task) or {}).get("effective")
        if isinstance(effective, int) and not isinstance(effective, bool):
            planned[task] = effective
        declared = {m.get("metric"): m.get("aggregation") for m in cfg.get("metric_list") or [] if isinstance(m, dict)}
        better = (res.get("higher_is_better") or {}).get(task) or {}
        reported = (res.get("results") or {}).get(task) or {}
        by_doc: dict[int, SampleResult] = {}
        raw_values: dict[str, list[float]] = {}
        odd: dict[str, str] = {}
        for line in ts.lines:
            sample = by_doc.get(line.doc_id)
            ident = f"{line.doc_hash}/{line.target_hash}"
            if sample is None:
                sample = by_doc[line.doc_id] = SampleResult(task, str(line.doc_id), 1, {}, ident, line.doc)
                samples.append(sample)
            elif sample.identity != ident:
                raise BadInput(f"document {line.doc_id} has another doc_hash / target_hash under filter "
                               f"{line.filter!r} than on its first line", source=ts.path, record=f"line {line.line}",
                               field="doc_hash")
            for metric, value in line.values.items():
                name = f"{task}/{metric},{line.filter}"
                number = _number(value)
                if number is None:
                    odd.setdefault(name, f"its per-sample values are not numbers within {MAX_MAGNITUDE:g} in magnitude "
                                         f"(line {line.line}: {shown_number(value)})")
                sample.values[name] = number
                if number is not None:
                    raw_values.setdefault(name, []).append(number)
                if name not in metrics:
                    key = f"{metric},{line.filter}"
                    agg = declared.get(metric)
                    metrics[name] = MetricInfo(
                        name, task, key=name, reducer=reducer or DEFAULT_REDUCER, higher_is_better=better.get(metric),
                        reported=_number(reported.get(key)) if key in reported else None,
                        aggregation=agg if isinstance(agg, str) else None)
        for name, info in metrics.items():
            if info.task != task:
                continue
            vs = raw_values.get(name, [])
            info.values_in_unit_interval = all(0.0 <= v <= 1.0 for v in vs)
            if name in odd:
                info.not_per_sample = odd[name]
                continue
            complete = planned.get(task) in (None, len(by_doc))
            mean = sum(vs) / len(vs) if vs else None
            agrees = (mean is not None and info.reported is not None
                      and abs(mean - info.reported) <= _AGREE * max(1.0, abs(info.reported)))
            if info.aggregation not in (None, "mean"):
                info.not_per_sample = f"lm-eval aggregates it with {info.aggregation!r}, not as the mean of its " \
                                      "per-sample values"
            elif info.aggregation is None and complete and info.reported is not None and not agrees:
                info.not_per_sample = (f"{results_path.name} reports {info.reported!r}, not the mean of its per-sample "
                                       f"values ({mean!r}): lm-eval aggregates it another way")
            elif complete and info.reported is not None and not agrees and len(vs) == len(by_doc):
                raise BadInput(f"reports {name.split('/', 1)[1]} = {info.reported!r} for task {task!r}, but its "
                               f"{len(vs)} samples give {mean!r}: {ts.path.name} is not the samples file of these "
                               "results", source=results_path, field=f"results.{task}")
        if task in planned and planned[task] != len(by_doc):
            notes.append(f"{ts.path.name} holds {len(by_doc)} of the {planned[task]} samples {results_path.name} "
                         f"counts for task {task}")
    date = res.get("date")
    return Evaluation(
        tool=LM_EVAL, tool_version=run.version, model=run.model, source=results_path, settings=settings,
        metrics=metrics, samples=samples, files=[results_path, *(t.path for t in run.tasks.values())],
        identity_method="lm-evaluation-harness doc_hash and target_hash of each document", planned_samples=planned,
        notes=notes, created=_unix_time(date),
        datasets={t: _lm_eval_dataset(configs.get(t) or {}, t) for t in run.tasks}, library=("lm_eval", run.version))


def _unix_time(value: Any) -> str | None:
    """A time recorded as seconds since 1970 (lm-eval's ``date``) as ISO 8601 UTC; None when it is none."""
    from datetime import UTC, datetime

    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return None


def _eee_time(value: Any) -> str | None:
    """An Every Eval Ever ``evaluation_timestamp`` (seconds since 1970 as text, as its converters write it, or
    ISO 8601) as ISO 8601."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    return _unix_time(float(text)) if re.fullmatch(r"\d+(\.\d+)?", text) else text


#: lm-eval ``dataset_path`` values that name a file loader, not a dataset (the task's files are its dataset)
_LOADERS = frozenset({"json", "csv", "parquet", "text", "arrow", "pandas"})


def _lm_eval_dataset(config: dict[str, Any], task: str) -> str:
    """The dataset an lm-eval task's config names (``dataset_path``, with its ``dataset_name``); the task itself
    when it names none, or only a file loader (``json``: its dataset is its own files)."""
    path, name = config.get("dataset_path"), config.get("dataset_name")
    if not isinstance(path, str) or not path or path in _LOADERS:
        return task
    return f"{path}/{name}" if isinstance(name, str) and name else path


# --- Every Eval Ever ------------------------------------------------------------------------------


def _eee_identity(record: dict[str, Any]) -> str:
    if record.get("sample_hash"):
        return str(record["sample_hash"])
    doc = {"raw": record["input"]["raw"], "reference": record["input"]["reference"]}
    return "benchscore:" + hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _eee_score(value: Any, source: Path, line: int) -> float:
    """An instance record's ``evaluation.score`` (a number by its schema) as a float the statistics can take."""
    try:
        out = float(value)
    except OverflowError:
        out = math.inf
    if not math.isfinite(out) or not within_magnitude(out):
        raise BadInput(f"{shown_number(value)} is beyond {MAX_MAGNITUDE:g} in magnitude: the statistics of such "
                       "scores overflow", source=source, record=f"line {line}", field="evaluation.score")
    return out


def from_eee(path: Path, *, reducer: str | None = None) -> Evaluation:
    """One Every Eval Ever evaluation (see the module docstring). Each task's epochs are the most epoch records
    any of its samples has: a sample with fewer misses the others (counted ``missing``, under ``--errors``)."""
    from benchscore.sources.every_eval_ever import read_evaluation

    ev = read_evaluation(path)
    agg = ev.aggregate or {}
    results = {r.get("evaluation_result_id") or r.get("evaluation_name"): r for r in agg.get("evaluation_results", [])}
    samples: list[SampleResult] = []
    metrics: dict[str, MetricInfo] = {}
    settings: dict[str, dict[str, Any]] = {}
    seen: dict[tuple[str, str, int], int] = {}
    values_of: dict[str, list[float]] = {}
    held: dict[tuple[str, str], int] = {}  # epoch records per sample
    for r in ev.records:
        task = r.get("evaluation_result_id") or r["evaluation_name"]
        meta = dict(r.get("metadata") or {})
        epoch_text = meta.get("epoch")
        epoch = int(epoch_text) if isinstance(epoch_text, str) and epoch_text.isdigit() and int(epoch_text) > 0 else 1
        key = (task, r["sample_id"], epoch)
        if key in seen:
            raise BadInput(f"sample {r['sample_id']!r} of {task!r} (epoch {epoch}) appears twice (first on line "
                           f"{seen[key]})", source=ev.samples_path, record=f"line {r['__line__']}", field="sample_id")
        seen[key] = r["__line__"]
        held[(task, r["sample_id"])] = held.get((task, r["sample_id"]), 0) + 1
        if task not in settings:
            result = results.get(task) or {}
            config = result.get("metric_config") or {}
            settings[task] = {"evaluation_name": r["evaluation_name"],
                              "metric": {k: config.get(k) for k in ("metric_id", "metric_name", "lower_is_better",
                                                                    "min_score", "max_score") if k in config}}
            better = None if "lower_is_better" not in config else not config["lower_is_better"]
            reported = (result.get("score_details") or {}).get("score")
            metrics[f"{task}/score"] = MetricInfo(f"{task}/score", task, key=f"{task}/score", higher_is_better=better,
                                                  reported=_number(reported), reducer=reducer or DEFAULT_REDUCER)
            metrics[f"{task}/is_correct"] = MetricInfo(f"{task}/is_correct", task, key=f"{task}/is_correct",
                                                       higher_is_better=True, reducer=reducer or DEFAULT_REDUCER)
        score = _eee_score(r["evaluation"]["score"], ev.samples_path, r["__line__"])
        values = {f"{task}/score": score, f"{task}/is_correct": 1.0 if r["evaluation"]["is_correct"] else 0.0}
        values_of.setdefault(f"{task}/score", []).append(score)
        samples.append(SampleResult(task, r["sample_id"], epoch, values, _eee_identity(r), meta, r.get("error") or None))
    for name, vs in values_of.items():
        metrics[name].values_in_unit_interval = all(0.0 <= v <= 1.0 for v in vs)
    epochs: dict[str, int] = {}
    for (task, _), n in held.items():
        epochs[task] = max(epochs.get(task, 1), n)
    library = agg.get("eval_library") or {}
    for s in settings.values():
        s["eval library"] = library.get("name")
    model = (agg.get("model_info") or {}).get("id") or ev.records[0]["model_id"]
    files = [p for p in (ev.aggregate_path, ev.samples_path) if p is not None]
    notes = [] if ev.aggregate is not None else [f"{ev.samples_path.name}: no aggregate record beside it"]
    datasets = {t: str((r.get("source_data") or {}).get("dataset_name") or t) for t, r in results.items() if t}
    return Evaluation(
        tool=EEE, tool_version=str(agg.get("schema_version") or ev.records[0]["schema_version"]), model=str(model),
        source=files[0], settings=settings, metrics=metrics, samples=samples, files=files,
        identity_method="Every Eval Ever sample_hash of each record (sha256 of input.raw and input.reference "
                        "computed by benchscore where it is null)", notes=notes, epochs=max(epochs.values(), default=1),
        planned_epochs=epochs,
        created=_eee_time(agg.get("evaluation_timestamp")),
        datasets={t: datasets.get(t, t) for t in settings},
        library=(str(library["name"]), str(library.get("version")) if library.get("version") else None)
        if library.get("name") else None)


__all__ = ["EEE", "INSPECT", "LM_EVAL", "LogRead", "TABLE", "files_in", "from_eee", "from_inspect", "from_lm_eval",
           "kind_of_file", "read", "read_log", "read_unit", "recognises"]
