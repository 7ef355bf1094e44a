"""solver-score wiring: instance records + a compiled fixed reference -> the solver-score output."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from benchscore.common.atomic import dumps_json
from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance
from benchscore.stats.intervals import LEVEL

from .formulas import SOLVER_METRIC_ID, scored_instance_scores, task_score
from .intervals import relative_score_interval
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


@dataclass(frozen=True)
class InstanceColumns:
    """The per-instance part of a solver-score output as columns, in reference order.

    :meth:`to_dict` is the reference implementation of the ``instances`` map (one dict per
    instance); :func:`dumps_solver_output` writes the same JSON bytes without building them.
    """

    names: list[str]
    score: np.ndarray
    a: np.ndarray
    mu: np.ndarray
    scale: np.ndarray
    z: np.ndarray
    codes: np.ndarray

    def __len__(self) -> int:
        return len(self.names)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        status_names = list(map(STATUS_NAMES.__getitem__, self.codes.tolist()))
        return {
            name: {"score": s, "A": av, "mu": m, "scale": sc, "z": zv, "status": st}
            for name, s, av, m, sc, zv, st in zip(
                self.names,
                self.score.tolist(),
                _with_none(self.a),
                self.mu.tolist(),
                self.scale.tolist(),
                _with_none(self.z),
                status_names,
                strict=True,
            )
        }


@dataclass(frozen=True)
class SolverScore:
    """A solver-score output: ``summary`` is every key but ``instances`` (in output order, with
    ``instances`` as a placeholder), ``instances`` the per-instance columns."""

    summary: dict[str, Any]
    instances: InstanceColumns

    def to_dict(self) -> dict[str, Any]:
        """The output as one dict (reference implementation; slow for millions of instances)."""
        return {k: (self.instances.to_dict() if k == "instances" else v) for k, v in self.summary.items()}

    def to_json(self) -> bytes:
        """The output's JSON bytes, identical to ``dumps_json(self.to_dict())``."""
        return dumps_solver_output(self.summary, self.instances)


def score_task(task: CompiledTask, cols: RecordColumns, source: str | Path) -> SolverScore:
    """Score parsed records against one reference task.

    Every scored reference instance needs exactly one record (duplicates are refused when
    parsing); records of instances outside the scored set are reported in ``unscored_instances``
    and left out of the mean. The result has no provenance yet.
    """
    n = len(cols)
    in_order = cols.names is task.instances or cols.names == task.instances
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
    summary = {
        "task": task.name,
        "kind": task.kind,
        "direction": task.direction,
        "relative_score": task_score(score),
        "scored_instance_count": int(pick.size),
        "intervals": {"relative_score": relative_score_interval(score)},
        "instances": None,
        "unscored_instances": unscored_instances,
    }
    return SolverScore(summary, InstanceColumns(names, score, a, mu, scale, z, codes))


def score_columns(task: CompiledTask, cols: RecordColumns, source: str | Path) -> dict[str, Any]:
    """:func:`score_task` as one dict (the output without provenance)."""
    return score_task(task, cols, source).to_dict()


#: the text between the pieces of one instance in the indented output (see dumps_json)
_PIECES = (
    b'": {\n      "score": ',
    b',\n      "A": ',
    b',\n      "mu": ',
    b',\n      "scale": ',
    b',\n      "z": ',
)
_STATUS_NEXT = tuple(b',\n      "status": ' + orjson.dumps(s) + b'\n    },\n    "' for s in STATUS_NAMES)
_STATUS_LAST = tuple(b',\n      "status": ' + orjson.dumps(s) + b"\n    }\n  }" for s in STATUS_NAMES)
_PLACEHOLDER = b'\n  "instances": null'
_CHUNK = 2048


def _float_texts(values: np.ndarray) -> list[bytes]:
    """Each float's JSON text exactly as orjson writes the Python float (NaN and +-inf: null)."""
    text = orjson.dumps(np.ascontiguousarray(values, dtype=np.float64), option=orjson.OPT_SERIALIZE_NUMPY)
    return text[1:-1].split(b",")


def dumps_solver_output(summary: dict[str, Any], inst: InstanceColumns) -> bytes:
    """``dumps_json`` of the output with ``summary["instances"]`` filled from ``inst``, built
    without a Python dict per instance.

    Each column is written once by orjson (names JSON-escaped as a list of strings, floats as a
    numpy array: the same text as a Python float, NaN as null) and split into per-instance
    pieces; the pieces are interleaved with the fixed indented text between them. Byte-identical
    to ``dumps_json(SolverScore.to_dict())`` (tested with hypothesis).
    """
    head = dumps_json(summary)
    if len(inst) == 0:
        return dumps_json({k: ({} if k == "instances" else v) for k, v in summary.items()})
    at = head.index(_PLACEHOLDER) + len(_PLACEHOLDER) - len(b"null")
    # a list of strings never holds '","' inside one string: every '"' in a string is escaped
    names = orjson.dumps(inst.names)[2:-2].split(b'","')
    columns = [_float_texts(c) for c in (inst.score, inst.a, inst.mu, inst.scale, inst.z)]
    status = list(map(_STATUS_NEXT.__getitem__, inst.codes.tolist()))
    status[-1] = _STATUS_LAST[int(inst.codes[-1])]
    if any(len(piece) != len(names) for piece in (*columns, status)) or len(names) != len(inst):
        raise RuntimeError("solver-score output columns differ in length")  # cannot happen: a bug
    c1, c2, c3, c4, c5 = (repeat(p) for p in _PIECES)
    score, a, mu, scale, z = columns
    join = b"".join
    flat = chain.from_iterable
    parts = [head[:at], b'{\n    "']
    for i in range(0, len(names), _CHUNK):  # joins of bounded size: much faster than one huge join
        j = slice(i, i + _CHUNK)
        parts.append(
            join(
                flat(
                    zip(
                        names[j],
                        c1,
                        score[j],
                        c2,
                        a[j],
                        c3,
                        mu[j],
                        c4,
                        scale[j],
                        c5,
                        z[j],
                        status[j],
                        strict=False,
                    )
                )
            )
        )
    parts.append(head[at + len(b"null") :])
    return join(parts)


def solver_score_result(
    ref: LoadedReference, task: str, records_raw: bytes, records_path: str | Path
) -> SolverScore:
    """The full solver-score output for ``task``: scores, ``reference_id``, its sha256, provenance."""
    compiled = get_task(ref, task)
    with gc_paused():
        cols = parse_records(records_raw, records_path, kind=compiled.kind, known_names=compiled.clean_names)
        result = score_task(compiled, cols, records_path)
    out = result.summary
    out["reference_id"] = ref.reference_id
    out["reference_sha256"] = ref.sha256
    out["provenance"] = provenance(
        SOLVER_METRIC_ID,
        {"records": records_raw},
        reference={"reference_id": ref.reference_id, "sha256": ref.sha256, "name": Path(ref.path).name},
        extra={"task": task, "records_name": Path(records_path).name, "intervals": {"level": LEVEL}},
    )
    return result


def solver_score(
    ref: LoadedReference, task: str, records_raw: bytes, records_path: str | Path
) -> dict[str, Any]:
    """:func:`solver_score_result` as one dict (reference implementation of the output)."""
    return solver_score_result(ref, task, records_raw, records_path).to_dict()
