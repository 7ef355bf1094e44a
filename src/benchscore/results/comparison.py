"""This room's hook for ``benchscore compare``: evaluations of any tool as compare's entries.

The items are samples. The epochs of a sample are repeated measures inside that unit: its value is
their reduction as the task declared it (``mean`` when it declared none; ``--reducer NAME`` one for
every task; the reducer is named in the output's ``same``); a reducer inspect_ai does not ship (a custom
``@score_reducer``) or one that gives no number (``collect``) is refused in one line naming it and
``--reducer``. ``--cluster KEY`` makes the sample metadata field KEY the independent unit (a passage,
a repository, a topic). ``--metric`` picks metrics by name (default: every metric that is a mean of
numeric per-sample values, in every result). A sample x epoch that errored, was not scored, or is
missing (an epoch, or a whole sample, the run planned and the files do not hold) never leaves a
denominator silently; the errors policy says what it counts as:

- ``as-wrong`` (default): it scores 0, the wrong answer of a metric whose values lie in [0, 1]
  (a metric with other values has no "wrong" value: refused, use another policy);
- ``exclude-pair``: the sample leaves every result (with two results: both sides of the pair);
- ``refuse``: one line naming the first such sample, exit 2.

A sample x epoch inspect_ai retried after an error stands as its last attempt ended (inspect_ai's
rule, ``--retries last-attempt``); ``--retries first-attempt`` counts it as its first attempt ended,
errored, under the errors policy. A score edited after the run (inspect_ai's ``edit_score``) is refused
in one line naming the sample, epoch, scorer, editor and reason; ``--accept-score-edits`` takes the
edited value and lists every edit in the counts. A result whose run did not end ``success`` is compared
on what its log holds and marked not final (``counts.status``; the command exits 1).

Every metric carries its counts (sample x epochs scored, errored, unscored, missing; samples
excluded; limits hit, retried attempts and the retries policy, edited scores; the run's status),
written beside every number. Before anything is compared, the samples' dataset identities are
checked: a sample id whose identity differs between two results is refused in one line naming it,
or left out with ``--intersection``. This module holds no statistics: compare's mechanism
(``benchscore.stats.compare``) does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from benchscore.common.errors import BadInput, shown
from benchscore.stats.compare import RETRIES_WORDS, Entry, Metric, labels_of
from benchscore.stats.intervals import beside, item_interval

from .formats import TOOL_NAMES, Evaluation, MetricInfo, SampleResult
from .values import COUNTING, UnknownReducer
from .values import reducer as reducer_of

ERRORS = ("as-wrong", "exclude-pair", "refuse")
DEFAULT_ERRORS = "as-wrong"
#: what a sample x epoch inspect_ai retried counts as: its last attempt (inspect_ai's rule) or its first
RETRIES = tuple(RETRIES_WORDS)
DEFAULT_RETRIES = "last-attempt"


@dataclass(frozen=True)
class Options:
    """What ``benchscore compare`` was asked: ``--metric``, ``--cluster``, ``--errors``, ``--intersection``,
    ``--reducer``, ``--retries``, ``--accept-score-edits``, ``--scheduler``; and ``--jobs``, the processes reading
    the results (None: one per core; what is read is the same for any)."""

    metrics: tuple[str, ...] = ()
    cluster: str | None = None
    errors: str = DEFAULT_ERRORS
    intersection: bool = False
    reducer: str | None = None
    retries: str = DEFAULT_RETRIES
    accept_score_edits: bool = False
    #: ``--scheduler``: the Dask scheduler that reads the results (None: read here)
    scheduler: str | None = None
    jobs: int | None = None


def labels(evaluations: Sequence[Evaluation]) -> list[str]:
    """Each evaluation's label: its model, or ``FILE:MODEL`` when two evaluations share a model."""
    models = [e.model for e in evaluations]
    if len(set(models)) == len(models):
        return models
    files = labels_of([e.source for e in evaluations])
    return [f"{f}:{m}" for f, m in zip(files, models, strict=True)]


def _index(e: Evaluation) -> dict[str, dict[str, list[SampleResult]]]:
    out: dict[str, dict[str, list[SampleResult]]] = {}
    for s in e.samples:
        out.setdefault(s.task, {}).setdefault(s.sample_id, []).append(s)
    for by_id in out.values():
        for epochs in by_id.values():
            epochs.sort(key=lambda s: s.epoch)
    return out


def _check_one_tool(evaluations: Sequence[Evaluation], names: list[str]) -> None:
    first = evaluations[0]
    for e, label in zip(evaluations[1:], names[1:], strict=True):
        if e.tool != first.tool:
            raise BadInput(f"{names[0]} holds {TOOL_NAMES[first.tool]} results and {label} "
                           f"{TOOL_NAMES[e.tool]} results: compare needs results of one tool (each records a sample's "
                           "identity its own way)")


def no_usable_sample(e: Evaluation, task: str) -> str | None:
    """Why ``e`` has no value at all on ``task`` (every sample x epoch of it errored, was unscored, or is
    missing), in words with the counts; None when one of its samples has a value."""
    if task not in e.settings:
        return None
    for s in e.samples:
        if s.task == task and any(v is not None for v in s.values.values()):
            return None
    mine = [s for s in e.samples if s.task == task]
    errored = sum(s.error is not None for s in mine)
    unscored = len(mine) - errored
    planned = e.planned_ids.get(task)
    missing = f"; the files hold none of the {len(planned)} samples the run planned" if planned and not mine else ""
    if not mine:
        return f"no sample of task {task!r} has a score: its files hold no sample of it{missing}"
    what = (f"every one of its {len(mine)} sample x epochs of task {task!r} errored" if errored == len(mine) else
            f"every one of its {len(mine)} sample x epochs of task {task!r} is unscored" if not errored else
            f"none of its {len(mine)} sample x epochs of task {task!r} has a score ({errored} errored, {unscored} "
            "unscored)")
    return what


def _label(e: Evaluation) -> str:
    return f"{e.model} ({e.source.name})"


def select(evaluations: Sequence[Evaluation], wanted: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The metrics to compare (in the first evaluation's order) and, for the default selection, the
    metrics left out with the reason. A metric asked for by name that cannot be compared is refused.

    A result with no usable sample on a task (every sample x epoch errored, unscored or missing) has
    the metrics the other results have on that task, with no value: the errors policy counts them
    (as-wrong: 0; exclude-pair: every sample leaves; refuse: refused), and the counts say so."""
    order: dict[str, None] = {}
    for e in evaluations:
        order.update(dict.fromkeys(e.metrics))
    for name in order:
        info = next(e.metrics[name] for e in evaluations if name in e.metrics)
        for e in evaluations:
            if name not in e.metrics and no_usable_sample(e, info.task) is not None:
                e.metrics[name] = replace(info, reported=None)
    if not order:
        empty = [f"{_label(e)}: {no_usable_sample(e, t) or 'no score'}" for e in evaluations for t in e.tasks] or \
            [f"{_label(e)}: no sample" for e in evaluations]
        raise BadInput(("--metric " + ", ".join(map(repr, wanted)) + ": no such metric; " if wanted else "")
                       + "no result has a metric to compare: " + "; ".join(empty))
    if wanted:
        for name in wanted:
            if name not in order:
                raise BadInput(f"--metric {name!r}: no such metric; the results have " + ", ".join(order))
            for e in evaluations:
                m = e.metrics.get(name)
                if m is None:
                    raise BadInput(f"--metric {name!r}: not in the results of {_label(e)}")
                if m.not_per_sample:
                    raise BadInput(f"--metric {name!r} cannot be compared sample by sample in {e.source.name}: "
                                   f"{m.not_per_sample}")
        return list(dict.fromkeys(wanted)), {}
    chosen, skipped = [], {}
    for name in order:
        missing = next((e for e in evaluations if name not in e.metrics), None)
        odd = next((e.metrics[name] for e in evaluations if name in e.metrics and e.metrics[name].not_per_sample), None)
        if missing is not None:
            skipped[name] = f"not in the results of {_label(missing)}"
        elif odd is not None:
            skipped[name] = f"not compared sample by sample: {odd.not_per_sample}"
        else:
            chosen.append(name)
    if not chosen:
        raise BadInput("no metric every result has as a mean of numeric per-sample values: "
                       + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return chosen, skipped


def _reducers(evaluations: Sequence[Evaluation], chosen: list[str]) -> None:
    """Refuse, in one line, a metric whose epoch reducer benchscore cannot apply (naming it and ``--reducer``)."""
    for name in chosen:
        for e in evaluations:
            info = e.metrics[name]
            try:
                reducer_of(info.reducer)
            except UnknownReducer as exc:
                raise BadInput(f"task {info.task!r}: {exc}; pick one inspect_ai ships for every task with --reducer "
                               "(e.g. --reducer mean)", source=e.source, field="eval.config.epochs_reducer") from None


def _edits(evaluations: Sequence[Evaluation], chosen: list[str], indexes: list[dict], accept: bool) -> None:
    """Refuse, in one line, a score edited after the run that a compared metric reads (unless ``accept``)."""
    if accept:
        return
    for name in chosen:
        for e, index in zip(evaluations, indexes, strict=True):
            info = e.metrics[name]
            for sid, eps in index.get(info.task, {}).items():
                for s in eps:
                    edit = next((x for x in s.edits if x.scorer == info.scorer), None) if s.edits else None
                    if edit is not None:
                        raise BadInput(
                            f"score {edit.scorer!r} was edited after the run by {edit.author or '(no author recorded)'}"
                            f" ({edit.reason or 'no reason recorded'}): {shown(edit.original, 60)} -> "
                            f"{shown(edit.value, 60)}; an edited score is not the scorer's result: --accept-score-edits "
                            "takes the edited value (listed in the output's counts)", source=e.source,
                            record=f"task {info.task!r} sample {sid!r} epoch {s.epoch}",
                            field=f"scores.{edit.scorer}.history")


def _identities(evaluations: Sequence[Evaluation], names: list[str], indexes: list[dict], tasks: list[str],
                intersection: bool) -> list[set[tuple[str, str]]]:
    """Per evaluation, the (task, sample) whose identity differs from the first result holding it:
    refused in one line without ``--intersection``, left out with it."""
    drop: list[set[tuple[str, str]]] = [set() for _ in evaluations]
    for task in tasks:
        first: dict[str, tuple[str | None, int]] = {}
        for k, (e, index) in enumerate(zip(evaluations, indexes, strict=True)):
            for sid, epochs in index.get(task, {}).items():
                mine = {s.identity for s in epochs}
                if len(mine) > 1:
                    raise BadInput(f"the epochs of sample {sid!r} of task {task!r} are of different dataset samples "
                                   f"({e.identity_method})", source=e.source)
                ident = next(iter(mine))
                if sid not in first:
                    first[sid] = (ident, k)
                    continue
                theirs, j = first[sid]
                if theirs != ident:
                    if not intersection:
                        raise BadInput(f"{names[j]} and {names[k]} are results of different datasets: sample {sid!r} "
                                       f"of task {task!r} is {_short(theirs)} in {names[j]} but {_short(ident)} in "
                                       f"{names[k]} ({e.identity_method}); compare them on the samples they share with "
                                       "--intersection")
                    drop[k].add((task, sid))
    return drop


def _short(identity: str | None) -> str:
    return "unknown" if identity is None else identity if len(identity) <= 16 else identity[:12] + "..."


def _unit(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _why(s: SampleResult, key: str, retries: str) -> str | None:
    """Why a sample x epoch has no value for ``key`` (errored / unscored), None when it has one. Under
    ``--retries first-attempt`` a retried sample x epoch errored (as its first attempt ended)."""
    if s.error is not None or (retries == "first-attempt" and s.retried_errors):
        return "errored"
    return "unscored" if s.values.get(key) is None else None


def _error_text(s: SampleResult) -> str:
    return s.error if s.error is not None else f"{s.retried_errors[0]}, then retried"


def _can_be_undefined(reducer: str) -> bool:
    """Whether the reducer can give no value on complete epochs (majority: no strict majority)."""
    return reducer == "majority" or reducer.startswith("pass_")


def _reduce(info: MetricInfo, reduce: Any, eps: list[SampleResult], absent: int, retries: str) -> float:
    """A sample's value: its epochs reduced, an errored / unscored / missing epoch as 0 (as-wrong; the other
    policies never reach here with one); NaN where the reducer gives none."""
    key = info.key
    if info.reducer in COUNTING:  # mode, majority count the values as the scorer wrote them
        values: list[Any] = [0.0 if _why(s, key, retries) else (s.raw or {}).get(key, s.values[key]) for s in eps]
    else:
        values = [0.0 if _why(s, key, retries) else s.values[key] for s in eps]
    values.extend([0.0] * absent)
    return float(reduce(values))


def entries(evaluations: Sequence[Evaluation], options: Options) -> tuple[list[Entry], dict[str, str]]:
    """compare's entries of the evaluations (one each), and the metrics left out with why."""
    if options.errors not in ERRORS:
        raise BadInput(f"--errors {options.errors!r}: expected one of {', '.join(ERRORS)}")
    if options.retries not in RETRIES:
        raise BadInput(f"--retries {options.retries!r}: expected one of {', '.join(RETRIES)}")
    if options.reducer is not None:
        try:
            reducer_of(options.reducer)
        except UnknownReducer as exc:
            raise BadInput(f"--reducer {options.reducer!r}: {exc}") from None
    if len(evaluations) < 2:
        raise BadInput(f"compare needs at least two results; {len(evaluations)} given")
    names = labels(evaluations)
    _check_one_tool(evaluations, names)
    chosen, skipped = select(evaluations, options.metrics)
    _reducers(evaluations, chosen)
    indexes = [_index(e) for e in evaluations]
    _edits(evaluations, chosen, indexes, options.accept_score_edits)
    tasks = list(dict.fromkeys(evaluations[0].metrics[n].task for n in chosen))
    drop = _identities(evaluations, names, indexes, tasks, options.intersection)
    metadata: dict[tuple[str, str], dict[str, Any]] = {}  # a sample's metadata, from the first result holding it
    for index in indexes:
        for task, by_id in index.items():
            for sid, eps in by_id.items():
                metadata.setdefault((task, sid), eps[0].metadata)
    policy = options.errors
    per_metric: list[list[Metric]] = [[] for _ in evaluations]
    for name in list(chosen):
        infos = [e.metrics[name] for e in evaluations]
        task = infos[0].task
        # the samples of each result, without those whose identity differs from the first result's, with the
        # samples the run planned that its files do not hold (every epoch missing)
        samples = []
        for e, index, d in zip(evaluations, indexes, drop, strict=True):
            by_id = {sid: eps for sid, eps in index.get(task, {}).items() if (task, sid) not in d}
            for sid in e.planned_ids.get(task, ()):
                if sid not in by_id and (task, sid) not in d:
                    by_id[sid] = []
            samples.append(by_id)
        excluded: set[str] = set()
        for e, info, by_id in zip(evaluations, infos, samples, strict=True):
            reduce, epochs = reducer_of(info.reducer), e.epochs_of(task)
            for sid, eps in by_id.items():
                gaps = [(s, why) for s in eps if (why := _why(s, info.key, options.retries))]
                absent = max(0, epochs - len(eps))
                undefined = (not gaps and not absent and _can_be_undefined(info.reducer)
                             and math.isnan(_reduce(info, reduce, eps, 0, options.retries)))
                if not gaps and not absent and not undefined:
                    continue
                if policy == "refuse":
                    s, why = gaps[0] if gaps else (eps[-1] if eps else None, "undefined" if undefined else "missing")
                    what = (f"errored ({shown(_error_text(s), 200)})" if why == "errored" else
                            f"has no value for {name}" if why == "unscored" else
                            f"reducer {info.reducer} gives it no value (no value is carried by more than half of its "
                            f"{len(eps)} epochs)" if why == "undefined" else
                            f"has {len(eps)} of the {epochs} epochs the run planned")
                    raise BadInput(f"{what}; with --errors refuse every sample must be scored (as-wrong counts it 0, "
                                   "exclude-pair leaves it out)", source=e.source,
                                   record=f"task {task!r} sample {sid!r}" + (f" epoch {s.epoch}" if gaps else ""))
                if policy == "exclude-pair":
                    excluded.add(sid)
                elif not info.values_in_unit_interval:
                    why = (f"{name} has values outside [0, 1], so an errored or unscored sample (sample {sid!r} of "
                           f"{e.source.name}) has no 'wrong' value to count as; --errors exclude-pair compares it")
                    if options.metrics:
                        raise BadInput(why)
                    skipped[name] = why
                    break
            if name in skipped:
                break
        if name in skipped:
            chosen.remove(name)
            continue
        common = set(samples[0]).intersection(*samples[1:])  # what compare compares (all of it, or --intersection)
        unusable = next((f"{names[k]}: {why}" for k, e in enumerate(evaluations)
                         if (why := no_usable_sample(e, task)) is not None), None)
        for k, (e, info, by_id) in enumerate(zip(evaluations, infos, samples, strict=True)):
            per_metric[k].append(_metric(e, info, by_id, excluded, common, options, metadata, unusable))
    if not chosen:
        raise BadInput("nothing to compare: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    tasks = list(dict.fromkeys(evaluations[0].metrics[n].task for n in chosen))
    unit = "sample" if options.cluster is None else f"metadata field {options.cluster!r}"
    out = []
    for k, e in enumerate(evaluations):
        same = {"tasks": {t: e.settings.get(t) for t in tasks}, "sample identity": e.identity_method,
                "epoch reducers": {n: e.metrics[n].reducer for n in chosen}, "errors": policy, "unit": unit}
        out.append(Entry(names[k], f"{TOOL_NAMES[e.tool]} results", same, per_metric[k], about={
            "created": e.created, "library": e.library or (e.tool, e.tool_version), "files": list(e.files),
            "datasets": {n: e.datasets.get(e.metrics[n].task, e.metrics[n].task) for n in chosen}}))
    _check_units(out, evaluations, names)
    return out, skipped


def _plain(value: Any) -> Any:
    """A score value as JSON can hold it (NaN, inspect_ai's "unscored", as null)."""
    return None if isinstance(value, float) and value != value else value


def _metric(e: Evaluation, info: MetricInfo, by_id: dict[str, list[SampleResult]], excluded: set[str],
            common: set[str], options: Options, metadata: dict[tuple[str, str], dict[str, Any]],
            unusable: str | None = None) -> Metric:
    """One evaluation's metric: its items (samples) and their reduced values; ``counts`` describe the
    samples every result shares (what compare compares). ``unusable``: a result with no usable sample on the
    task, in words (why exclude-pair may leave none)."""
    reduce, epochs = reducer_of(info.reducer), e.epochs_of(info.task)
    items: dict[str, tuple[float, float]] = {}
    clusters: dict[str, str] | None = {} if options.cluster is not None else None
    counts: dict[str, Any] = {
        "samples": 0, "sample_epochs": 0, "scored": 0, "errored": 0, "unscored": 0, "missing": 0, "limited": 0,
        "retried": 0, "edited": 0, "undefined": 0, "excluded": 0, "errors": options.errors,
        "retries": options.retries, "status": e.status}
    if not e.final and e.status_error:
        counts["status_error"] = " ".join(e.status_error.split())[:300]
    edits: list[dict[str, Any]] = []
    for sid, eps in by_id.items():
        counted = sid in common
        if sid in excluded:
            counts["excluded"] += counted
            continue
        absent = max(0, epochs - len(eps))
        if counted:
            for s in eps:
                counts["sample_epochs"] += 1
                counts[_why(s, info.key, options.retries) or "scored"] += 1
                counts["limited"] += s.limit is not None
                counts["retried"] += bool(s.retried_errors)
                for x in s.edits or ():
                    if x.scorer == info.scorer:
                        counts["edited"] += 1
                        edits.append({"sample": sid, "epoch": s.epoch, "scorer": x.scorer, "author": x.author,
                                      "reason": x.reason, "timestamp": x.timestamp, "original": _plain(x.original),
                                      "value": _plain(x.value)})
            counts["missing"] += absent
        value = _reduce(info, reduce, eps, absent, options.retries)
        if value != value:  # the reducer gives none (majority: no strict majority): as-wrong counts it 0
            counts["undefined"] += counted
            value = 0.0
        items[sid] = (value, 1.0)
        if clusters is not None:
            meta = eps[0].metadata if eps else metadata.get((info.task, sid), {})
            if options.cluster not in meta:
                raise BadInput(f"has no metadata field {options.cluster!r} (--cluster)" if eps else
                               f"is in no result's files (its run planned it), so its unit (--cluster "
                               f"{options.cluster}) is not known", source=e.source,
                               record=f"task {info.task!r} sample {sid!r}", field=f"metadata.{options.cluster}")
            clusters[sid] = _unit(meta[options.cluster])
    counts["samples"] = sum(1 for sid in items if sid in common)
    if edits:
        counts["score_edits"] = edits
    reason = _null_reason(e, info, by_id)
    value = None if reason or not items else sum(v for v, _ in items.values()) / len(items)
    binary = bool(items) and all(v in (0.0, 1.0) for v, _ in items.values())
    null_reason = reason or (None if items else _none_left(info, by_id, excluded, unusable))
    unit = "sample" if options.cluster is None else f"{options.cluster} unit"
    own = beside(lambda: item_interval([v for v, _ in items.values()],
                                       None if clusters is None else list(clusters.values()),
                                       bounded=info.values_in_unit_interval, unit=unit),
                 unavailable=null_reason)
    return Metric(info.name, value, items, binary=binary, clusters=clusters, counts=counts,
                  null_reason=null_reason, ci95=own["ci95"], ci_reason=own.get("ci_reason"),
                  ci_method=own["ci_method"], bounds=(0.0, 1.0) if info.values_in_unit_interval else (None, None))


def _none_left(info: MetricInfo, by_id: dict[str, list[SampleResult]], excluded: set[str],
               unusable: str | None) -> str:
    """Why a metric has no sample left, in words."""
    if not by_id:
        return f"no sample of task {info.task!r} in its files"
    return (f"no sample left: --errors exclude-pair left out all {len(excluded)} samples ("
            + (unusable or "each has an errored, unscored or missing epoch in some result") + ")")


def _null_reason(e: Evaluation, info: MetricInfo, by_id: dict[str, list[SampleResult]]) -> str | None:
    """Why the evaluation's number is null: its files hold fewer samples than the run counted and do not say
    which are missing (an lm-eval samples file cut short). A run that did not finish is compared on what its
    files hold (its planned samples not there counted missing) and marked not final instead (``counts``)."""
    planned = e.planned_samples.get(info.task)
    if planned is None or info.task in e.planned_ids:
        return None
    have = len(by_id) if e.tool != "inspect_ai" else sum(len(v) for v in by_id.values())
    if have < planned:
        what = "samples" if e.tool != "inspect_ai" else "sample x epochs"
        return f"the files hold {have} of the {planned} {what} the run counted for task {info.task!r}"
    return None


def unfinished(entries_: Sequence[Entry]) -> list[str]:
    """The results whose run did not end ``success`` (their numbers are not final: the command exits 1), one
    line each."""
    out = []
    for e in entries_:
        counts = next((m.counts for m in e.metrics if m.counts), None) or {}
        if counts.get("status", "unknown") not in ("success", "unknown"):
            out.append(f"{e.label}: NOT FINAL: the run ended with status {counts['status']}"
                       + (f" ({counts['status_error']})" if counts.get("status_error") else ""))
    return out


def _check_units(entries_: list[Entry], evaluations: Sequence[Evaluation], names: list[str]) -> None:
    """With --cluster, a sample must be in the same unit in every result."""
    for m0 in entries_[0].metrics:
        if m0.clusters is None:
            continue
        for entry, name in zip(entries_[1:], names[1:], strict=True):
            m = next(x for x in entry.metrics if x.name == m0.name)
            for sid, unit in (m.clusters or {}).items():
                if sid in m0.clusters and m0.clusters[sid] != unit:
                    raise BadInput(f"sample {sid!r} is in unit {unit!r} in {name} but in {m0.clusters[sid]!r} in "
                                   f"{names[0]}: the results are not of one dataset")


def compare_inputs(paths: Sequence[str | Path], options: Options) -> tuple[list[Entry], dict[str, str], list[Path]]:
    """Read ``paths`` (logs, folders, URLs, lm-eval output, Every Eval Ever records) and return compare's
    entries, the metrics left out (with why) and every file read. Prints what was read and what was not (an
    eval set's older attempts, a run's status, a reducer given in place of a task's own) and each result
    with no usable sample on a task."""
    from benchscore.common.progress import Progress
    from benchscore.common.terminal import print_line

    from .reading import read

    map_units = None
    if options.scheduler is not None:
        from .distributed import dask_map

        map_units = dask_map(options.scheduler)
    with Progress("reading results", unit="samples") as bar:
        evaluations = read(paths, on_file=lambda p, samples: bar.advance(1, count=samples or 0),
                           reducer=options.reducer, intersection=options.intersection, map_units=map_units,
                           jobs=options.jobs)
    entries_, skipped = entries(evaluations, options)
    for e in evaluations:
        for note in e.notes:
            print_line(f"{e.model}: {note}")
        for t in e.tasks:
            if (why := no_usable_sample(e, t)) is not None:
                print_line(f"{e.model}: {why}: counted under --errors {options.errors}")
    return entries_, skipped, list(dict.fromkeys(f for e in evaluations for f in e.files))  # a table: many models


__all__ = ["DEFAULT_ERRORS", "DEFAULT_RETRIES", "ERRORS", "RETRIES", "RETRIES_WORDS", "Options", "compare_inputs",
           "entries", "labels", "no_usable_sample", "select", "unfinished"]
