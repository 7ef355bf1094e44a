"""solver-score wiring: instance records + a compiled fixed reference -> the solver-score output."""

from __future__ import annotations

from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance

from .formulas import SOLVER_METRIC_ID, scored_instance_scores, task_score
from .records import STATUS_NAMES, RecordColumns, gc_paused, parse_records
from .reference import CompiledTask, LoadedReference


def get_task(ref: LoadedReference, task: str) -> CompiledTask:
    compiled = ref.tasks.get(task)
    if compiled is None:
        known = ", ".join(sorted(ref.tasks))
        raise BadInput(
            f"task {task!r} is not in reference {ref.reference_id!r} (tasks: {known})", source=ref.path
        )
    return compiled


def _with_none(values: np.ndarray) -> list[float | None]:
    """``values.tolist()`` with NaN turned into None (JSON null), touching only the NaN slots."""
    out: list[float | None] = values.tolist()
    for i in np.flatnonzero(np.isnan(values)).tolist():
        out[i] = None
    return out


def score_columns(task: CompiledTask, cols: RecordColumns, source: str | Path) -> dict[str, Any]:
    """Score parsed records against one reference task.

    Every scored reference instance needs exactly one record (duplicates are refused when
    parsing); records of instances outside the scored set are reported in ``unscored_instances``
    and left out of the mean. Returns the output without provenance.
    """
    n = len(cols)
    in_order = cols.names == task.instances
    if in_order:  # records in reference order: no lookups needed
        rows = np.arange(n, dtype=np.int64)
    else:
        rows = np.fromiter(map(task.index.get, cols.names, repeat(-1)), dtype=np.int64, count=n)
    known = rows >= 0
    in_scored = np.zeros(n, dtype=bool)
    in_scored[known] = task.scored[rows[known]]
    covered = np.zeros(len(task.instances), dtype=bool)
    covered[rows[in_scored]] = True
    missing = np.flatnonzero(task.scored & ~covered)
    if missing.size:
        first = task.instances[int(missing[0])]
        raise BadInput(
            f"{missing.size} scored reference instance(s) of task {task.name!r} have no record "
            f"(first: {first!r}); a missing result is an incomplete observation",
            source=source,
            field="instance",
        )
    unscored_instances = [cols.names[i] for i in np.flatnonzero(~in_scored)]
    pick = np.flatnonzero(in_scored)
    ref_rows = rows[pick]
    order = np.argsort(ref_rows, kind="stable")  # output in reference order, whatever the record order
    pick, ref_rows = pick[order], ref_rows[order]
    codes = cols.codes[pick]
    a = cols.values[pick]
    mu = task.mu[ref_rows]
    scale = task.scale[ref_rows]
    score, z = scored_instance_scores(a, codes == 0, mu, scale, task.direction)
    names = (
        cols.names
        if in_order and pick.size == n
        else list(map(task.instances.__getitem__, ref_rows.tolist()))
    )
    status_names = list(map(STATUS_NAMES.__getitem__, codes.tolist()))
    instances = {
        name: {"score": s, "A": av, "mu": m, "scale": sc, "z": zv, "status": st}
        for name, s, av, m, sc, zv, st in zip(
            names,
            score.tolist(),
            _with_none(a),
            mu.tolist(),
            scale.tolist(),
            _with_none(z),
            status_names,
            strict=True,
        )
    }
    return {
        "task": task.name,
        "kind": task.kind,
        "direction": task.direction,
        "relative_score": task_score(score),
        "scored_instance_count": int(pick.size),
        "instances": instances,
        "unscored_instances": unscored_instances,
    }


def solver_score(
    ref: LoadedReference, task: str, records_raw: bytes, records_path: str | Path
) -> dict[str, Any]:
    """The full solver-score output for ``task``: scores, ``reference_id``, its sha256, provenance."""
    compiled = get_task(ref, task)
    with gc_paused():
        cols = parse_records(records_raw, records_path, kind=compiled.kind)
        out = score_columns(compiled, cols, records_path)
    out["reference_id"] = ref.reference_id
    out["reference_sha256"] = ref.sha256
    out["provenance"] = provenance(
        SOLVER_METRIC_ID,
        {"records": records_raw},
        reference={"reference_id": ref.reference_id, "sha256": ref.sha256, "name": Path(ref.path).name},
        extra={"task": task, "records_name": Path(records_path).name},
    )
    return out
