"""This room's hook for ``benchscore compare``: evaluations of any tool as compare's entries.

The items are samples. The epochs of a sample are repeated measures inside that unit: its value is
their reduction as the task declared it (``mean`` when it declared none; the reducer is named in
the output's ``same``). ``--cluster KEY`` makes the sample metadata field KEY the independent unit
(a passage, a repository, a topic). ``--metric`` picks metrics by name (default: every metric that
is a mean of numeric per-sample values, in every result). A sample x epoch that errored or was not
scored never leaves a denominator silently; the errors policy says what it counts as:

- ``as-wrong`` (default): it scores 0, the wrong answer of a metric whose values lie in [0, 1]
  (a metric with other values has no "wrong" value: refused, use another policy);
- ``exclude-pair``: the sample leaves every result (with two results: both sides of the pair);
- ``refuse``: one line naming the first such sample, exit 2.

Every metric carries its counts (sample x epochs scored, errored, unscored, missing; samples
excluded; limits hit and retried errors), written beside every number. Before anything is
compared, the samples' dataset identities are checked: a sample id whose identity differs
between two results is refused in one line naming it, or left out with ``--intersection``.
This module holds no statistics: compare's mechanism (``benchscore.stats.compare``) does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchscore.common.errors import BadInput, shown
from benchscore.stats.compare import Entry, Metric, labels_of
from benchscore.stats.intervals import beside, item_interval

from .formats import TOOL_NAMES, Evaluation, MetricInfo, SampleResult
from .values import reducer as reducer_of

ERRORS = ("as-wrong", "exclude-pair", "refuse")
DEFAULT_ERRORS = "as-wrong"


@dataclass(frozen=True)
class Options:
    """What ``benchscore compare`` was asked: ``--metric``, ``--cluster``, ``--errors``, ``--intersection``."""

    metrics: tuple[str, ...] = ()
    cluster: str | None = None
    errors: str = DEFAULT_ERRORS
    intersection: bool = False


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


def select(evaluations: Sequence[Evaluation], wanted: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The metrics to compare (in the first evaluation's order) and, for the default selection, the
    metrics left out with the reason. A metric asked for by name that cannot be compared is refused."""
    order: dict[str, None] = {}
    for e in evaluations:
        order.update(dict.fromkeys(e.metrics))
    if wanted:
        for name in wanted:
            if name not in order:
                raise BadInput(f"--metric {name!r}: no such metric; the results have "
                               + ", ".join(order) if order else "no metric")
            for e in evaluations:
                m = e.metrics.get(name)
                if m is None:
                    raise BadInput(f"--metric {name!r}: not in the results of {e.model} ({e.source.name})")
                if m.not_per_sample:
                    raise BadInput(f"--metric {name!r} cannot be compared sample by sample in {e.source.name}: "
                                   f"{m.not_per_sample}")
        return list(dict.fromkeys(wanted)), {}
    chosen, skipped = [], {}
    for name in order:
        missing = next((e for e in evaluations if name not in e.metrics), None)
        odd = next((e.metrics[name] for e in evaluations if name in e.metrics and e.metrics[name].not_per_sample), None)
        if missing is not None:
            skipped[name] = f"not in the results of {missing.model} ({missing.source.name})"
        elif odd is not None:
            skipped[name] = f"not compared sample by sample: {odd.not_per_sample}"
        else:
            chosen.append(name)
    if not chosen:
        raise BadInput("no metric every result has as a mean of numeric per-sample values: "
                       + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return chosen, skipped


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


def _missing(s: SampleResult, key: str) -> str | None:
    """Why a sample x epoch has no value for ``key`` (errored / unscored), None when it has one."""
    if s.error is not None:
        return "errored"
    return "unscored" if s.values.get(key) is None else None


def entries(evaluations: Sequence[Evaluation], options: Options) -> tuple[list[Entry], dict[str, str]]:
    """compare's entries of the evaluations (one each), and the metrics left out with why."""
    if options.errors not in ERRORS:
        raise BadInput(f"--errors {options.errors!r}: expected one of {', '.join(ERRORS)}")
    if len(evaluations) < 2:
        raise BadInput(f"compare needs at least two results; {len(evaluations)} given")
    names = labels(evaluations)
    _check_one_tool(evaluations, names)
    chosen, skipped = select(evaluations, options.metrics)
    indexes = [_index(e) for e in evaluations]
    tasks = list(dict.fromkeys(evaluations[0].metrics[n].task if n in evaluations[0].metrics else
                               next(e.metrics[n].task for e in evaluations if n in e.metrics) for n in chosen))
    drop = _identities(evaluations, names, indexes, tasks, options.intersection)
    policy = options.errors
    per_metric: list[list[Metric]] = [[] for _ in evaluations]
    for name in list(chosen):
        infos = [e.metrics[name] for e in evaluations]
        task = infos[0].task
        # the samples of each result, without those whose identity differs from the first result's
        samples = [{sid: eps for sid, eps in index.get(task, {}).items() if (task, sid) not in d}
                   for index, d in zip(indexes, drop, strict=True)]
        excluded: set[str] = set()
        for e, info, by_id in zip(evaluations, infos, samples, strict=True):
            for sid, eps in by_id.items():
                gaps = [(s, why) for s in eps if (why := _missing(s, info.key))]
                absent = max(0, e.epochs - len(eps))
                if not gaps and not absent:
                    continue
                if policy == "refuse":
                    s, why = gaps[0] if gaps else (eps[-1], "missing")
                    what = (f"errored ({shown(s.error, 200)})" if why == "errored" else
                            f"has no value for {name}" if why == "unscored" else
                            f"has {len(eps)} of the {e.epochs} epochs the run planned")
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
        for k, (e, info, by_id) in enumerate(zip(evaluations, infos, samples, strict=True)):
            per_metric[k].append(_metric(e, info, by_id, excluded, common, options))
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


def _metric(e: Evaluation, info: MetricInfo, by_id: dict[str, list[SampleResult]], excluded: set[str],
            common: set[str], options: Options) -> Metric:
    """One evaluation's metric: its items (samples) and their reduced values; ``counts`` describe the
    samples every result shares (what compare compares)."""
    reduce = reducer_of(info.reducer)
    items: dict[str, tuple[float, float]] = {}
    clusters: dict[str, str] | None = {} if options.cluster is not None else None
    counts = {"samples": 0, "sample_epochs": 0, "scored": 0, "errored": 0, "unscored": 0, "missing": 0,
              "limited": 0, "retried": 0, "excluded": 0, "errors": options.errors}
    for sid, eps in by_id.items():
        counted = sid in common
        if sid in excluded:
            counts["excluded"] += counted
            continue
        values = []
        for s in eps:
            why = _missing(s, info.key)
            if counted:
                counts["sample_epochs"] += 1
                counts[why or "scored"] += 1
                counts["limited"] += s.limit is not None
                counts["retried"] += bool(s.retried_errors)
            values.append(0.0 if why else s.values[info.key])  # as-wrong (the other policies never get here)
        absent = max(0, e.epochs - len(eps))
        counts["missing"] += absent if counted else 0
        values.extend([0.0] * absent)
        value = reduce(values)
        if value != value:  # NaN: the reducer is undefined on these epochs (pass_at_k with fewer than k)
            raise BadInput(f"reducer {info.reducer} is undefined on the {len(values)} epochs of sample {sid!r}",
                           source=e.source, record=f"task {info.task!r}")
        items[sid] = (float(value), 1.0)
        if clusters is not None:
            meta = eps[0].metadata
            if options.cluster not in meta:
                raise BadInput(f"has no metadata field {options.cluster!r} (--cluster)", source=e.source,
                               record=f"task {info.task!r} sample {sid!r}", field=f"metadata.{options.cluster}")
            clusters[sid] = _unit(meta[options.cluster])
    counts["samples"] = sum(1 for sid in items if sid in common)
    reason = _null_reason(e, info, by_id)
    value = None if reason or not items else sum(v for v, _ in items.values()) / len(items)
    binary = bool(items) and all(v in (0.0, 1.0) for v, _ in items.values())
    null_reason = reason or (None if items else "no sample left")
    unit = "sample" if options.cluster is None else f"{options.cluster} unit"
    own = beside(lambda: item_interval([v for v, _ in items.values()],
                                       None if clusters is None else list(clusters.values()),
                                       bounded=info.values_in_unit_interval, unit=unit),
                 unavailable=null_reason)
    return Metric(info.name, value, items, binary=binary, clusters=clusters, counts=counts,
                  null_reason=null_reason, ci95=own["ci95"], ci_reason=own.get("ci_reason"),
                  ci_method=own["ci_method"], bounds=(0.0, 1.0) if info.values_in_unit_interval else (None, None))


def _null_reason(e: Evaluation, info: MetricInfo, by_id: dict[str, list[SampleResult]]) -> str | None:
    """Why the evaluation's number is not final: its run did not finish, or its files hold fewer
    samples than the run counted."""
    if e.status not in ("success", "unknown"):
        return f"the run ended with status {e.status!r}" + (f": {' '.join(e.status_error.split())[:200]}"
                                                              if e.status_error else "")
    planned = e.planned_samples.get(info.task)
    if planned is None:
        return None
    have = len(by_id) if e.tool != "inspect_ai" else sum(len(v) for v in by_id.values())
    if have < planned:
        what = "samples" if e.tool != "inspect_ai" else "sample x epochs"
        return f"the files hold {have} of the {planned} {what} the run counted for task {info.task!r}"
    return None


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
    entries, the metrics left out (with why) and every file read."""
    from benchscore.common.terminal import print_line, progress

    from .reading import read

    with progress() as bar:
        task = bar.add_task("reading results", total=None)
        evaluations = read(paths, on_file=lambda p: bar.advance(task))
    for e in evaluations:  # what was read and what was not (an eval set's older attempts, a run's status)
        for note in e.notes:
            print_line(f"{e.model}: {note}")
    entries_, skipped = entries(evaluations, options)
    return entries_, skipped, [f for e in evaluations for f in e.files]


__all__ = ["DEFAULT_ERRORS", "ERRORS", "Options", "compare_inputs", "entries", "labels", "select"]
