"""Reading mira inputs at the door: strict parsing, schema validation and cross-checks against the contract.

Every problem becomes one :class:`BadInput` line naming file, record (line) and field.
Repetition records are validated as plain dicts by one TypeAdapter over the whole file (no
pydantic model instance per record), then cross-checked against the contract in one pass.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from benchscore.common.errors import BadInput
from benchscore.common.provenance import sha256_bytes
from benchscore.common.readers import error_message, loads_json, read_json_bytes, validate

from .formats import (
    CalibrationPolicy,
    Case,
    Contract,
    Deviations,
    JudgeVerdicts,
    Observation,
    RepetitionRecordDict,
)
from .formulas import governance_severity, t_hard

_RECORDS = TypeAdapter(list[RepetitionRecordDict])
_RECORD = TypeAdapter(RepetitionRecordDict)


@dataclass(frozen=True)
class LoadedContract:
    contract: Contract
    sha256: str
    path: Path
    cases: dict[str, Case]


def _field_of(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and (part.startswith(("function-", "union[")) or part in ("literal", "tagged-union")):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(root)"


def strict_loads(data: bytes, path: str | Path) -> Any:
    """One strict JSON document (finite numbers, UTF-8, no duplicate keys; see :func:`read_records_file`)."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return loads_json(data, path)  # raises the one-line message
    if b"\\u003a" in data or b"\\u003A" in data or data.count(b":") != orjson.dumps(parsed).count(b":"):
        return loads_json(data, path)  # exact slow check; names the duplicate key
    return parsed


def load_contract(path: str | Path) -> LoadedContract:
    """Read and validate a contract file; the sha256 of its bytes identifies it in every output."""
    data = read_json_bytes(path)
    parsed = strict_loads(data, path)
    try:
        contract = Contract.model_validate(parsed)
    except ValidationError as exc:
        loc = tuple(exc.errors(include_url=False)[0].get("loc", ()))
        if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
            # name the case: the message says "cases[i] (CASE-ID)" and the field inside it
            case = parsed["cases"][loc[1]]
            name = case.get("case_id") if isinstance(case, dict) else None
            where = f"cases[{loc[1]}]" + (f" ({name})" if isinstance(name, str) else "")
            validate(Case, case, source=path, record=where)
        validate(Contract, parsed, source=path)
        raise  # pragma: no cover - validate raised above
    return LoadedContract(contract, sha256_bytes(data), Path(path), {c.case_id: c for c in contract.cases})


def read_records_file(path: str | Path, *, what: str = "record",
                      allow_empty: bool = False) -> tuple[list[Any], list[int], bytes]:
    """Strict JSON Lines: parsed values, their line numbers, and the file's bytes.

    Duplicate keys are detected exactly for the whole file at once: orjson keeps the last of
    duplicate keys, and re-serialising the parsed values emits one ':' per kept key plus the
    colons inside strings, so the counts match exactly when no key was dropped (files with an
    escaped ``\\u003a`` colon are checked line by line by the slow exact parser instead).
    """
    data = read_json_bytes(path, lines=True)
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the final newline
    values: list[Any] | None = None
    if b"" not in lines:  # no empty line: parse them all at once (a whitespace-only line fails and is redone below)
        try:
            values = list(map(orjson.loads, lines))
            numbers = list(range(1, len(lines) + 1))
        except orjson.JSONDecodeError:
            values = None
    if values is None:
        values = []
        numbers = []
        loads = orjson.loads
        for i, raw in enumerate(lines, start=1):
            if not raw or raw.isspace():
                continue
            try:
                values.append(loads(raw))
            except orjson.JSONDecodeError:
                loads_json(raw, path, line=i)  # raises the one-line message
                raise  # pragma: no cover - loads_json always raises here
            numbers.append(i)
    escaped_colon = b"\\u003a" in data or b"\\u003A" in data
    if escaped_colon or data.count(b":") != orjson.dumps(values).count(b":"):
        for i, raw in zip(numbers, (lines[n - 1] for n in numbers), strict=True):
            loads_json(raw, path, line=i)
    if not values and not allow_empty:
        raise BadInput(f"no {what}s in the file", source=path)
    return values, numbers, data


def _records_error(exc: ValidationError, path: str | Path, numbers: list[int]) -> BadInput:
    err = exc.errors(include_url=False)[0]
    loc = tuple(err.get("loc", ()))
    index = loc[0] if loc and isinstance(loc[0], int) else None
    line = f"line {numbers[index]}" if index is not None else None
    msg = "required field is missing" if err.get("type") == "missing" else error_message(err)
    return BadInput(msg, source=path, record=line, field=_field_of(loc[1:]))


@dataclass
class Repetitions:
    """Validated repetition records (plain dicts), their line numbers and the file's bytes."""

    records: list[dict[str, Any]]
    lines: list[int]
    data: bytes
    path: Path


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large acyclic structures.

    On exit the objects built meanwhile are frozen (moved out of the collector's view; reference
    counting still frees them), so re-enabling does not trigger one full scan of all of them.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()
            gc.enable()


def _validated_lines(data: bytes) -> tuple[list[dict[str, Any]], list[int]] | None:
    """Fast path: parse and validate each line in one pydantic call (no intermediate objects).

    Returns None, so that the exact path of :func:`read_records_file` runs and names the problem,
    whenever this path could differ from it: a blank line, any pydantic error, a free-form
    ``raw_trajectory`` (pydantic's parser reads ``NaN``, ``Infinity`` and ``1e400`` there, which
    strict JSON refuses; typed fields refuse them anyway), the text ``NaN`` or ``Infinity``
    anywhere, an escaped colon, or a duplicate key (the same colon count as in
    :func:`read_records_file`).
    """
    if (b"raw_trajectory" in data or b"NaN" in data or b"Infinity" in data
            or b"\\u003a" in data or b"\\u003A" in data):
        return None
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    if not lines or b"" in lines:
        return None
    try:
        records = list(map(_RECORD.validator.validate_json, lines))  # the core validator: no per-call wrapper
        if data.count(b":") != orjson.dumps(records).count(b":"):
            return None
    except (ValidationError, orjson.JSONEncodeError):
        return None
    return records, list(range(1, len(lines) + 1))


def load_repetitions(path: str | Path, loaded: LoadedContract) -> Repetitions:
    """Read repetition records and check each against the contract.

    Refused (one line each): unknown case, duplicate (case, repetition), a deterministic result
    for a judge criterion or an unknown criterion, a missing deterministic result (except for an
    ``invalid`` repetition), a judge verdict on a deterministic criterion, an unknown hard-fail
    rule, a governance severity that contradicts its kind, a completed repetition without
    ``elapsed_s``, and a post-cutoff completion timed within ``T_hard`` or on an untimed case.
    """
    data = read_json_bytes(path, lines=True)
    fast = _validated_lines(data)
    if fast is not None:
        records, numbers = fast
    else:  # the exact path: names the line and field of the first problem
        # no record at all is a statement too (every planned repetition missing: incomplete), as `mira
        # from-inspect` writes it for a log whose samples were all cancelled
        values, numbers, data = read_records_file(path, what="repetition record", allow_empty=True)
        try:
            records = _RECORDS.validate_python(values)
        except ValidationError as exc:
            raise _records_error(exc, path, numbers) from None
    cases = loaded.cases
    det_ids: dict[str, frozenset[str]] = {}
    judge_ids: dict[str, frozenset[str]] = {}
    sets: dict[tuple[tuple[str, str], ...], tuple[frozenset[str], frozenset[str]]] = {}
    for cid, case in cases.items():
        owners = tuple([(c.id, c.scorer) for c in case.criteria])
        pair = sets.get(owners)
        if pair is None:
            pair = sets[owners] = (frozenset([i for i, k in owners if k == "deterministic"]),
                                   frozenset([i for i, k in owners if k == "judge"]))
        det_ids[cid], judge_ids[cid] = pair
    seen: dict[tuple[str, int], int] = {}
    for rec, line in zip(records, numbers, strict=True):
        cid = rec["case_id"]
        key = (cid, rec["repetition"])
        dets = det_ids.get(cid)
        if dets is None or key in seen:
            _check_record(rec, line, path, loaded, seen)  # raises the one-line message
        get = rec.get
        det = get("deterministic_results")
        verdicts = get("judge_verdicts")
        # fast path: the common, well-formed record passes these set comparisons; anything else
        # gets the full check, which names the problem
        if ((det.keys() != dets if det is not None else bool(dets)) and rec["execution_mode"] != "invalid"
                or det is not None and not det.keys() <= dets
                or verdicts is not None and not verdicts.keys() <= judge_ids[cid]
                or "hard_fail_events" in rec or "governance_events" in rec or get("post_cutoff_completion")
                or get("elapsed_s") is None and rec["terminal_state"] == "completed"):
            _check_record(rec, line, path, loaded, seen)
        seen[key] = line
    return Repetitions(records, numbers, data, Path(path))


def _check_record(rec: dict[str, Any], line: int, path: str | Path, loaded: LoadedContract,
                  seen: dict[tuple[str, int], int]) -> None:
    """Every cross-check of one record against the contract; raises :class:`BadInput` on the first problem."""
    where = f"line {line}"
    cid = rec["case_id"]
    case = loaded.cases.get(cid)
    if case is None:
        raise BadInput(f"unknown case {cid!r}; the contract has no such case_id", source=path, record=where, field="case_id")
    key = (cid, rec["repetition"])
    if key in seen:
        raise BadInput(
            f"repetition {rec['repetition']} of case {cid!r} appears twice (first on line {seen[key]})",
            source=path, record=where, field="repetition",
        )
    owner = {c.id: c.scorer for c in case.criteria}
    mode = rec["execution_mode"]
    det = rec.get("deterministic_results")
    for crit in det or ():
        kind = owner.get(crit)
        if kind != "deterministic":
            msg = (f"criterion {crit!r} is owned by the judge, not the deterministic scorer" if kind == "judge"
                   else f"unknown criterion {crit!r} for case {cid!r}")
            raise BadInput(msg, source=path, record=where, field=f"deterministic_results.{crit}")
    if mode != "invalid":
        for crit in (c.id for c in case.criteria if c.scorer == "deterministic"):
            if not det or crit not in det:
                raise BadInput(f"deterministic result for criterion {crit!r} is missing",
                               source=path, record=where, field="deterministic_results")
    for crit in rec.get("judge_verdicts") or ():
        kind = owner.get(crit)
        if kind != "judge":
            msg = (f"criterion {crit!r} is scored by the deterministic scorer; the judge may not answer it"
                   if kind == "deterministic" else f"unknown criterion {crit!r} for case {cid!r}")
            raise BadInput(msg, source=path, record=where, field=f"judge_verdicts.{crit}")
    rules = {r.id for r in case.hard_fail_rules}
    for j, ev in enumerate(rec.get("hard_fail_events") or ()):
        if ev["rule"] not in rules:
            raise BadInput(f"unknown hard-fail rule {ev['rule']!r} for case {cid!r}",
                           source=path, record=where, field=f"hard_fail_events[{j}].rule")
    for j, ev in enumerate(rec.get("governance_events") or ()):
        try:
            governance_severity(ev["kind"], ev.get("severity"))
        except ValueError as exc:
            raise BadInput(str(exc), source=path, record=where, field=f"governance_events[{j}].severity") from None
    elapsed = rec.get("elapsed_s")
    if rec["terminal_state"] == "completed" and elapsed is None and mode != "invalid":
        raise BadInput("a completed repetition needs elapsed_s", source=path, record=where, field="elapsed_s")
    if rec.get("post_cutoff_completion"):
        if case.scoring_class == "diagnostic_untimed":
            raise BadInput("a diagnostic_untimed case has no cutoff, so no post-cutoff completion",
                           source=path, record=where, field="post_cutoff_completion")
        if elapsed is not None and case.t_soft_s is not None and elapsed <= t_hard(case.t_soft_s):
            raise BadInput(
                f"post_cutoff_completion is true but elapsed_s {elapsed!r} is within T_hard {t_hard(case.t_soft_s)!r}",
                source=path, record=where, field="post_cutoff_completion",
            )


def require_timing(loaded: LoadedContract) -> None:
    """Scoring needs every automated_scored case calibrated (t_soft_s set)."""
    for i, case in enumerate(loaded.contract.cases):
        if case.scoring_class == "automated_scored" and case.t_soft_s is None:
            raise BadInput(
                "automated_scored case has no t_soft_s; run `benchscore mira calibrate` or mark it diagnostic_untimed",
                source=loaded.path, record=f"cases[{i}] ({case.case_id})", field="t_soft_s",
            )


def load_deviations(path: str | Path) -> tuple[list[dict[str, Any]], bytes]:
    """A deviations file: ``{"deviations": [...]}`` (or a bare list), validated, returned exactly as written."""
    data = read_json_bytes(path)
    parsed = strict_loads(data, path)
    if isinstance(parsed, list):
        parsed = {"deviations": parsed}
    validate(Deviations, parsed, source=path)
    return parsed["deviations"], data


def load_policy(path: str | Path) -> tuple[CalibrationPolicy, bytes]:
    data = read_json_bytes(path)
    return validate(CalibrationPolicy, strict_loads(data, path), source=path), data


def load_observations(path: str | Path, loaded: LoadedContract) -> tuple[list[Observation], bytes]:
    values, numbers, data = read_records_file(path, what="observation")
    out: list[Observation] = []
    seen: dict[tuple[str, str], int] = {}
    for value, line in zip(values, numbers, strict=True):
        obs = validate(Observation, value, source=path, record=f"line {line}")
        if obs.case_id not in loaded.cases:
            raise BadInput(f"unknown case {obs.case_id!r}; the contract has no such case_id",
                           source=path, record=f"line {line}", field="case_id")
        key = (obs.case_id, obs.observation_id)
        if key in seen:
            raise BadInput(f"observation {obs.observation_id!r} of case {obs.case_id!r} appears twice (first on line {seen[key]})",
                           source=path, record=f"line {line}", field="observation_id")
        seen[key] = line
        out.append(obs)
    return out, data


def load_verdicts(path: str | Path) -> tuple[JudgeVerdicts, bytes]:
    data = read_json_bytes(path)
    parsed = strict_loads(data, path)
    if isinstance(parsed, dict) and isinstance(parsed.get("verdicts"), list):
        from .formats import JudgeVerdict

        for i, v in enumerate(parsed["verdicts"]):
            validate(JudgeVerdict, v, source=path, record=f"verdicts[{i}]")
    return validate(JudgeVerdicts, parsed, source=path), data


def load_calibration(path: str | Path) -> tuple[list[Any], list[int]]:
    """A judge calibration set (JSON Lines of :class:`~benchscore.mira.formats.CalibrationPacket`): each packet
    validated, its sha256 recomputed (without ``known_verdict`` and ``reason``), and no packet given twice."""
    from .formats import CalibrationPacket
    from .judge import packet_sha256

    values, numbers, _ = read_records_file(path, what="calibration packet")
    out = []
    seen: dict[str, int] = {}
    for value, line in zip(values, numbers, strict=True):
        packet = validate(CalibrationPacket, value, source=path, record=f"line {line}")
        body = {k: v for k, v in value.items() if k not in ("known_verdict", "reason")}
        if packet_sha256(body) != packet.sha256:
            raise BadInput("packet content does not match its sha256 (the sha256 of the packet without sha256, "
                           "known_verdict and reason)", source=path, record=f"line {line}", field="sha256")
        if packet.packet_id in seen:
            raise BadInput(f"packet {packet.packet_id!r} appears twice (first on line {seen[packet.packet_id]})",
                           source=path, record=f"line {line}", field="packet_id")
        seen[packet.packet_id] = line
        out.append(packet)
    return out, numbers
