"""Fixed references and suite manifests: loading with validation, compiling, freezing runs.

Named suites and references resolve to files in :mod:`.datafolder`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from pydantic import ValidationError

from benchscore.common.errors import BadInput
from benchscore.common.provenance import sha256_bytes
from benchscore.common.readers import loads_json, read_json_bytes, validate

from .formats import Reference, SuiteManifest
from .formulas import TRACKS, instance_scale, reference_stats
from .records import FIRST_INFRA_CODE, gc_paused, parse_records


@dataclass(frozen=True)
class CompiledTask:
    """One reference task as arrays: per instance (reference order) mu, scale and scored flag."""

    name: str
    kind: str
    direction: str
    instances: list[str]
    n_usable: np.ndarray
    mu: np.ndarray
    scale: np.ndarray
    scored: np.ndarray
    unscored_listed: tuple[str, ...] = field(default=())
    #: True when the loader already checked the names as :attr:`clean_names` would (None: unknown)
    names_clean: bool | None = None

    @cached_property
    def index(self) -> dict[str, int]:
        """Instance name -> row (built on first use: records out of reference order need it)."""
        return dict(zip(self.instances, range(len(self.instances)), strict=True))

    @cached_property
    def clean_names(self) -> list[str] | None:
        """``instances`` when no name has surrounding whitespace by ``str.strip`` (the records'
        rule, slightly stricter than the reference's pattern), else None: the ``known_names``
        hint of :func:`~.records.parse_records` (names are distinct: they are JSON keys)."""
        names = self.instances
        if self.names_clean:
            return names
        if "" in names or sum(map(len, names)) != sum(map(len, map(str.strip, names))):
            return None
        return names


@dataclass(frozen=True)
class LoadedReference:
    reference: Reference
    sha256: str
    path: Path
    tasks: dict[str, CompiledTask]

    @property
    def reference_id(self) -> str:
        return self.reference.reference_id


@dataclass(frozen=True)
class _Checked:
    """What the fast reference path already computed for one task (reused when compiling):
    the names (checked non-empty, no surrounding whitespace by ``str.strip``), the value lists
    and all values flattened (floats or None only)."""

    names: list[str]
    values: list[list]
    flat: list


def _values_matrix(instances: dict[str, list], checked: _Checked | None = None) -> np.ndarray:
    """Instances x runs matrix of reference values, NaN for null (unusable) and for absent runs."""
    values = list(instances.values()) if checked is None else checked.values
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    width = max(int(lengths.max(initial=0)), 1)
    flat = np.array(
        list(chain.from_iterable(values)) if checked is None else checked.flat, dtype=float
    )  # None -> NaN
    if flat.size == lengths.size * width:  # every instance has the same number of runs
        return flat.reshape(lengths.size, width)
    mat = np.full((len(values), width), np.nan)
    rows = np.repeat(np.arange(len(values)), lengths)
    cols = np.arange(flat.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    mat[rows, cols] = flat
    return mat


def compile_reference(
    ref: Reference, source: str | Path, checked: dict[str, _Checked] | None = None
) -> dict[str, CompiledTask]:
    """Check cross-field rules and compute mu/scale per instance (``checked``: what the fast
    loading path already computed, reused as is).

    Rules: a ``solve`` task's values are 1 or 0; an instance with fewer than two usable values is
    listed in ``unscored_reference_instances`` and a listed one has fewer than two (or is absent);
    every listed task exists; a name is listed once; every task keeps at least one scored instance.
    """
    for task in ref.unscored_reference_instances:
        if task not in ref.tasks:
            raise BadInput(
                "lists a task that is not among the reference's tasks",
                source=source,
                field=f"unscored_reference_instances.{task}",
            )
    floors = ref.scale_floors
    compiled: dict[str, CompiledTask] = {}
    for name, task in ref.tasks.items():
        pre = None if checked is None else checked.get(name)
        mat = _values_matrix(task.instances, pre)
        if task.kind == "solve":
            bad = ~np.isnan(mat) & (mat != 0.0) & (mat != 1.0)
            if bad.any():
                row = int(np.argwhere(bad)[0][0])
                inst = list(task.instances)[row]
                raise BadInput(
                    "a solve task's reference values are 1 (solved), 0 (not solved) or null",
                    source=source,
                    field=f"tasks.{name}.instances.{inst}",
                )
        n_usable, mu, s = reference_stats(mat)
        scored = n_usable >= 2
        names = list(task.instances) if pre is None else pre.names
        listed = ref.unscored_reference_instances.get(name, [])
        listed_set = set(listed)
        if len(listed_set) != len(listed):
            dup = next(x for x in listed if listed.count(x) > 1)
            raise BadInput(
                f"instance {dup!r} is listed twice",
                source=source,
                field=f"unscored_reference_instances.{name}",
            )
        for inst in listed:
            vals = task.instances.get(inst)
            usable = 0 if vals is None else sum(v is not None for v in vals)
            if usable >= 2:
                raise BadInput(
                    f"instance {inst!r} is listed as unscored but has {usable} usable reference values",
                    source=source,
                    field=f"unscored_reference_instances.{name}",
                )
        unlisted = [i for i in np.flatnonzero(~scored).tolist() if names[i] not in listed_set]
        if unlisted:
            i = unlisted[0]
            raise BadInput(
                f"has {int(n_usable[i])} usable reference value(s), fewer than two, but is not listed in "
                f"unscored_reference_instances.{name}",
                source=source,
                field=f"tasks.{name}.instances.{names[i]}",
            )
        if not scored.any():
            raise BadInput(
                "the task has no scored instance (each needs two usable values)",
                source=source,
                field=f"tasks.{name}",
            )
        scale = np.where(scored, instance_scale(s, mu, floors.relative, floors.absolute), np.nan)
        overflow = scored & ~(np.isfinite(mu) & np.isfinite(scale))
        if overflow.any():
            i = int(np.flatnonzero(overflow)[0])
            raise BadInput(
                f"mu {float(mu[i])!r} or scale {float(scale[i])!r} of these values is not finite in "
                "double precision (each value is finite, their mean, standard deviation or "
                "relative floor overflows)",
                source=source,
                field=f"tasks.{name}.instances.{names[i]}",
            )
        compiled[name] = CompiledTask(
            name=name,
            kind=task.kind,
            direction=task.direction,
            instances=names,
            n_usable=n_usable,
            mu=mu,
            scale=scale,
            scored=scored,
            unscored_listed=tuple(listed),
            names_clean=True if pre is not None else None,
        )
    return compiled


_NoneType = type(None)


def _keys_and_colons(obj: Any) -> tuple[int, int]:
    """(object keys, ':' inside strings) of a parsed JSON value (see records.py, duplicate keys)."""
    keys = colons = 0
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            keys += len(cur)
            colons += sum(k.count(":") for k in cur)
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
        elif isinstance(cur, str):
            colons += cur.count(":")
    return keys, colons


def _fast_reference(raw: bytes, data: Any) -> tuple[Reference, dict[str, _Checked]] | None:
    """Validate a large reference without a pydantic pass over every instance value.

    The per-instance value lists are checked as whole columns (lists of JSON numbers or null,
    names non-empty without surrounding whitespace, no duplicate keys by the colon count); the
    rest of the file goes through pydantic with a one-instance stand-in per task. Returns None
    whenever anything needs a closer look: the caller then runs the exact, slow path, so both
    accept and refuse the same files and every message comes from the exact path.
    """
    if type(data) is not dict or type(data.get("tasks")) is not dict or not data["tasks"]:
        return None
    if b"\\u003a" in raw or b"\\u003A" in raw:
        return None
    keys = colons = 0
    stand_in: dict[str, Any] = {}
    real: dict[str, dict[str, list]] = {}
    checked: dict[str, _Checked] = {}
    for name, task in data["tasks"].items():
        if type(task) is not dict or type(task.get("instances")) is not dict or not task["instances"]:
            return None
        instances = task["instances"]
        names = list(instances)
        values = list(instances.values())
        if set(map(type, values)) != {list}:
            return None
        flat = list(chain.from_iterable(values))
        types = set(map(type, flat))
        if not types <= {int, float, _NoneType}:
            return None
        if "" in instances or sum(map(len, names)) != sum(map(len, map(str.strip, names))):
            return None
        if int in types:  # as pydantic would: JSON integers become floats
            instances = {k: [None if v is None else float(v) for v in vals] for k, vals in instances.items()}
        else:
            checked[name] = _Checked(names, values, flat)
        keys += len(names)
        colons += "\n".join(names).count(":")
        real[name] = instances
        stand_in[name] = {**task, "instances": {"stand-in": [0.0, 0.0]}}
    rest = {**data, "tasks": stand_in}
    k, c = _keys_and_colons(rest)
    keys += k - len(stand_in)  # the stand-in keys ("stand-in", no colon) are not in the file
    colons += c
    if raw.count(b":") != keys + colons:
        return None
    try:
        head = Reference.model_validate(rest)
    except ValidationError:
        return None
    tasks = {name: task.model_copy(update={"instances": real[name]}) for name, task in head.tasks.items()}
    return head.model_copy(update={"tasks": tasks}), checked


def _parse_reference(
    raw: bytes, path: str | Path, fast: bool
) -> tuple[Reference, dict[str, _Checked] | None]:
    if fast:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = None
        got = _fast_reference(raw, data) if data is not None else None
        if got is not None:
            return got
    return validate(Reference, loads_json(raw, path), source=path), None


def parse_reference(raw: bytes, path: str | Path, *, fast: bool = True) -> Reference:
    """Parse and validate reference bytes (``fast=False``: the exact path alone, for tests)."""
    return _parse_reference(raw, path, fast)[0]


def load_reference(path: str | Path) -> LoadedReference:
    """Read and validate a reference file (see :class:`~.formats.Reference`)."""
    path = Path(path)
    raw = read_json_bytes(path)
    with gc_paused():
        ref, checked = _parse_reference(raw, path, True)
        return LoadedReference(ref, sha256_bytes(raw), path, compile_reference(ref, path, checked))


def load_suite(path: str | Path) -> SuiteManifest:
    """Read a suite manifest; a task id appears once in the whole suite."""
    path = Path(path)
    manifest = validate(SuiteManifest, loads_json(read_json_bytes(path), path), source=path)
    seen: dict[str, str] = {}
    for track in TRACKS:
        for i, item in enumerate(getattr(manifest.tracks, track)):
            if item in seen:
                raise BadInput(
                    f"task {item!r} already appears in track {seen[item]!r}",
                    source=path,
                    field=f"tracks.{track}[{i}]",
                )
            seen[item] = track
    return manifest


def build_task_reference(
    runs: list[tuple[Path, bytes]], *, kind: str
) -> tuple[dict[str, list[float | None]], list[str]]:
    """Freeze runs' instance records into ``instances`` (name -> one value per run, in run order)
    and the sorted list of instances with fewer than two usable values.

    A run's value is ``A`` (or 1/0 for solve tasks) when usable; for ``objective`` tasks a
    completed failure (timeout, invalid, ...) is an unusable run (null); for ``solve`` tasks a
    completed failure is "not solved" (0). Infrastructure statuses and instances absent from a
    run are unusable (null).
    """
    per_run = []
    seen_paths: dict[Path, Path] = {}
    for path, raw in runs:
        # the same file twice is a mistake; identical content from distinct files is not (a
        # deterministic solver repeats a run exactly; the scale floors exist for s = 0)
        resolved = Path(path).resolve()
        if resolved in seen_paths:
            raise BadInput(f"the same run file is given twice (also {seen_paths[resolved]})", source=path)
        seen_paths[resolved] = path
        cols = parse_records(raw, path, kind=kind, allow_infra=True)
        usable = cols.codes == 0
        if kind == "solve":
            values = np.where(usable, cols.values, np.where(cols.codes < FIRST_INFRA_CODE, 0.0, np.nan))
        else:
            values = np.where(usable, cols.values, np.nan)
        per_run.append(dict(zip(cols.names, values.tolist(), strict=True)))
    names = sorted(set().union(*per_run)) if per_run else []
    instances: dict[str, list[float | None]] = {}
    unscored: list[str] = []
    for name in names:
        vals = [run.get(name) for run in per_run]
        vals = [None if v is None or v != v else v for v in vals]
        instances[name] = vals
        if sum(v is not None for v in vals) < 2:
            unscored.append(name)
    return instances, unscored


def reference_content(data: dict[str, Any]) -> dict[str, Any]:
    """A reference's content without its provenance (what a reference id must pin down)."""
    return {k: v for k, v in data.items() if k != "provenance"}


def existing_conflict(output: Path, new: dict[str, Any]) -> str | None:
    """``'same'`` if ``output`` holds the same content under the same id, an error message if it
    holds different content under the same id, None if it is absent or holds another id."""
    if not output.exists():
        return None
    old = loads_json(read_json_bytes(output, existing_output=True), output)
    if not isinstance(old, dict) or old.get("reference_id") != new["reference_id"]:
        return None
    if reference_content(old) == reference_content(new):
        return "same"
    return (
        f"already holds reference {new['reference_id']!r} with different content; "
        "a changed reference needs a new --id"
    )
