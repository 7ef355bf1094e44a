"""Reading instance-record files (a JSON list of :class:`~.formats.InstanceRecord`) into columns.

Two paths that accept and reject exactly the same files:

- :func:`_parse_slow` is the reference implementation: one record at a time, pydantic plus the
  status rules, raising the first problem as one line naming file, record (1-based position in
  the list) and field.
- :func:`parse_records` first tries a vectorised fast path (needed for million-record files):
  orjson parse, then whole-column checks with C-level ``map``/``set``/numpy. Any doubt at all
  (an unexpected type, key, status, duplicate name, non-finite value ...) hands the file to the
  slow path, which then names the problem. So the fast path can only ever say "all good".

Duplicate keys inside a record: orjson silently keeps the last one, so the fast path uses the
counting argument of :mod:`benchscore.common.readers`: each key in the text is followed by one
structural ``:``, hence ``text colons == keys + colons inside string values`` exactly when no
key was dropped (``\\u003a`` escapes send the file to the exact, slower check).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from benchscore.common.errors import BadInput
from benchscore.common.readers import loads_json, reject_duplicate_keys, validate

from .formats import FAILURE_STATUSES, INFRA_STATUSES, OK_STATUS, InstanceRecord

#: status codes in the parsed columns
STATUS_CODES: dict[str, int] = {OK_STATUS: 0}
STATUS_CODES.update({s: i + 1 for i, s in enumerate(FAILURE_STATUSES)})
STATUS_CODES.update({s: i + 1 + len(FAILURE_STATUSES) for i, s in enumerate(INFRA_STATUSES)})
STATUS_NAMES: tuple[str, ...] = tuple(sorted(STATUS_CODES, key=STATUS_CODES.__getitem__))
FIRST_INFRA_CODE = 1 + len(FAILURE_STATUSES)
_COMPLETED = (OK_STATUS, *FAILURE_STATUSES)


@dataclass(frozen=True)
class RecordColumns:
    """Parsed records as columns: ``names`` (list), ``codes`` (int8 status codes, see
    :data:`STATUS_CODES`) and ``values`` (float: ``A``, or 1/0 from ``solved``; NaN when absent)."""

    names: list[str]
    codes: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.names)


def _status_message(status: str) -> str:
    if status in INFRA_STATUSES:
        return (
            f"status {status!r} is an infrastructure failure, an incomplete observation: "
            "fix the judging input and rescore"
        )
    return (
        f"unknown status {status!r}; expected one of {', '.join(_COMPLETED)} "
        f"({', '.join(INFRA_STATUSES)} are incomplete observations, not scores)"
    )


def _check_record(
    rec: Any, i: int, source: str | Path, kind: str, allow_infra: bool
) -> tuple[str, int, float]:
    if not isinstance(rec, dict):
        raise BadInput(f"expected an object, got {type(rec).__name__}", source=source, record=i)
    model = validate(InstanceRecord, rec, source=source, record=i)
    if model.instance != model.instance.strip():
        raise BadInput(
            "instance name has leading or trailing whitespace", source=source, record=i, field="instance"
        )
    code = STATUS_CODES.get(model.status)
    if code is None or (code >= FIRST_INFRA_CODE and not allow_infra):
        raise BadInput(_status_message(model.status), source=source, record=i, field="status")
    value = float("nan")
    if kind == "objective":
        if model.solved is not None or "solved" in rec:
            raise BadInput(
                "'solved' is for kind: solve tasks; objective records give A",
                source=source,
                record=i,
                field="solved",
            )
        if model.A is not None:
            value = float(model.A)
        elif code == 0:
            raise BadInput("status 'ok' needs a finite A", source=source, record=i, field="A")
    else:
        if "A" in rec and "solved" in rec:
            raise BadInput(
                "give either A (1 or 0) or solved (true/false), not both",
                source=source,
                record=i,
                field="solved",
            )
        if model.A is not None:
            if model.A not in (0, 1):
                raise BadInput(
                    f"a solve task's A must be 1 or 0, got {model.A!r}", source=source, record=i, field="A"
                )
            value = float(model.A)
        elif model.solved is not None:
            value = 1.0 if model.solved else 0.0
        elif code == 0:
            raise BadInput(
                "status 'ok' needs A (1 or 0) or a boolean solved", source=source, record=i, field="solved"
            )
    return model.instance, code, value


def _parse_slow(raw: bytes, parsed: Any, source: str | Path, kind: str, allow_infra: bool) -> RecordColumns:
    reject_duplicate_keys(raw.decode("utf-8"), source)
    if not isinstance(parsed, list):
        raise BadInput(
            f"expected a JSON list of instance records, got {type(parsed).__name__}", source=source
        )
    names: list[str] = []
    codes: list[int] = []
    values: list[float] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(parsed, start=1):
        name, code, value = _check_record(rec, i, source, kind, allow_infra)
        if name in seen:
            raise BadInput(
                f"duplicate instance name {name!r} (first in record {seen[name]})",
                source=source,
                record=i,
                field="instance",
            )
        seen[name] = i
        names.append(name)
        codes.append(code)
        values.append(value)
    return RecordColumns(names, np.asarray(codes, dtype=np.int8), np.asarray(values, dtype=float))


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of acyclic dicts are built (no cycles
    are created, so nothing is left for it to find; it would only rescan live objects)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_NoneType = type(None)
#: status -> code of the statuses the fast path accepts, without / with infrastructure statuses
_ALLOWED_CODES: dict[bool, dict[str, int]] = {
    False: {s: STATUS_CODES[s] for s in _COMPLETED},
    True: dict(STATUS_CODES),
}


def _parse_fast(
    raw: bytes, parsed: Any, kind: str, allow_infra: bool, known_names: list[str] | None = None
) -> RecordColumns | None:
    """Vectorised checks; returns None whenever anything at all needs a closer look."""
    if type(parsed) is not list:
        return None
    n = len(parsed)
    if n == 0:
        return RecordColumns([], np.zeros(0, dtype=np.int8), np.zeros(0, dtype=float))
    try:  # TypeError: a record that is not an object; KeyError: one without instance or status
        names = list(map(dict.__getitem__, parsed, repeat("instance")))
        statuses = list(map(dict.__getitem__, parsed, repeat("status")))
    except (TypeError, KeyError):
        return None
    n_keys = sum(map(len, parsed))
    n_a = sum(map(dict.__contains__, parsed, repeat("A")))
    n_solved = 0 if n_keys == 2 * n + n_a else sum(map(dict.__contains__, parsed, repeat("solved")))
    if n_keys != 2 * n + n_a + n_solved:
        return None  # an unknown key
    if known_names is not None and names == known_names:
        # the names are the known ones, in order (str == only matches str): distinct, non-empty,
        # no surrounding whitespace; share the caller's list so it can compare by identity
        names = known_names
    else:
        if set(map(type, names)) != {str}:
            return None
        name_set = set(names)
        if len(name_set) != n or "" in name_set:
            return None  # duplicate or empty instance names
        if sum(map(len, names)) != sum(map(len, map(str.strip, names))):
            return None  # surrounding whitespace
    # a status that is not a str, unknown, or (unless allowed) infrastructure gets code -1
    allowed = _ALLOWED_CODES[allow_infra]
    try:
        codes = np.fromiter(map(allowed.get, statuses, repeat(-1)), dtype=np.int8, count=n)
    except TypeError:  # an unhashable status (list, object)
        return None
    if (codes < 0).any():
        return None
    # duplicate keys: structural colons == keys; colons inside strings can only be in names here
    if b"\\u003" in raw and (b"\\u003a" in raw or b"\\u003A" in raw):
        return None
    if raw.count(b":") != n_keys + "\n".join(names).count(":"):
        return None
    ok = codes == 0
    a_vals = list(map(dict.get, parsed, repeat("A")))
    if not set(map(type, a_vals)) <= {int, float, _NoneType}:
        return None  # strings, booleans, lists ... (bool is its own type, not int)
    values = np.array(a_vals, dtype=float)  # None -> NaN; orjson never yields NaN/Infinity
    if kind == "objective":
        if n_solved:
            return None
        if np.isnan(values[ok]).any():
            return None  # an ok record without A
        return RecordColumns(names, codes, values)
    solved = list(map(dict.get, parsed, repeat("solved")))
    if not set(map(type, solved)) <= {bool, _NoneType}:
        return None
    if n_a and n_solved:
        both = np.fromiter(map(dict.__contains__, parsed, repeat("A")), dtype=bool, count=n) & np.fromiter(
            map(dict.__contains__, parsed, repeat("solved")), dtype=bool, count=n
        )
        if both.any():
            return None
    has_a = ~np.isnan(values)
    if has_a.any() and not np.isin(values[has_a], (0.0, 1.0)).all():
        return None
    solved_vals = (
        np.array([np.nan if s is None else float(s) for s in solved], dtype=float) if n_solved else None
    )
    if solved_vals is not None:
        values = np.where(has_a, values, solved_vals)
    if np.isnan(values[ok]).any():
        return None
    return RecordColumns(names, codes, values)


def parse_records(
    raw: bytes,
    source: str | Path,
    *,
    kind: str,
    allow_infra: bool = False,
    fast: bool = True,
    known_names: list[str] | None = None,
) -> RecordColumns:
    """Parse an instance-records JSON list for a task of ``kind`` (``objective`` or ``solve``).

    ``allow_infra`` accepts ``infra_error``/``missing`` (used when freezing reference runs,
    where such a run is simply unusable); solver-score rejects them. ``fast=False`` runs only
    the reference implementation (tests check both paths agree). ``known_names``: a hint only,
    a list of DISTINCT, non-empty names without surrounding whitespace (by ``str.strip``), e.g.
    a reference task's instances; when the records' names equal it in order, the fast path
    skips re-checking them (the same files are accepted and refused either way).
    """
    if kind not in ("objective", "solve"):
        raise ValueError(f"kind must be 'objective' or 'solve', got {kind!r}")
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        loads_json(raw, source)  # raises the one-line message (encoding, syntax, NaN ...)
        raise  # pragma: no cover - loads_json always raises on what orjson refused
    columns = _parse_fast(raw, parsed, kind, allow_infra, known_names) if fast else None
    if columns is not None:
        return columns
    return _parse_slow(raw, parsed, source, kind, allow_infra)
