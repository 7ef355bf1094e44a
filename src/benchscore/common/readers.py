"""Strict readers for JSON, JSONL and CSV inputs.

Every reader refuses, with one :class:`BadInput` line naming file, record and field:
files that are not UTF-8, larger than ``max_bytes``, malformed, with duplicate object keys,
with ``NaN``/``Infinity``, or (for CSV) with a bad header or ragged rows.

JSON is parsed with orjson (which already rejects ``NaN`` and ``Infinity``). orjson keeps
the last of duplicate keys silently, so duplicates are detected by a counting argument:
every key in the text is followed by exactly one structural ``:``, so
``raw colons == sum(len(object)) + colons inside parsed strings`` holds exactly when no key
was dropped (escaped ``\\u003a`` colons are the only exception and send the file to a slow,
exact parser). Only a mismatch pays for the slow parse, which then names the duplicate.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from .errors import BadInput
from .guard import note_input

DEFAULT_MAX_BYTES = 2 * 1024**3  # 2 GiB

M = TypeVar("M", bound=BaseModel)

DUPLICATE_KEY = "key appears twice in the same JSON object (duplicate key)"


def read_bytes(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES, existing_output: bool = False) -> bytes:
    """Read a whole input file, refusing missing files, folders and files over ``max_bytes``.

    Inside a command the file becomes an input that no write may replace (see ``guard``), unless
    ``existing_output``: the command reads its own output's previous content to compare with it.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise BadInput("file not found", source=p) from None
    if p.is_dir():
        raise BadInput("is a folder, expected a file", source=p)
    if size > max_bytes:
        raise BadInput(f"file is {size} bytes, larger than the limit of {max_bytes}", source=p)
    if not existing_output:
        note_input(p)
    return p.read_bytes()


def _decode_utf8(data: bytes, source: str | Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInput(f"not valid UTF-8 (byte {exc.start})", source=source, record=f"line {line}") from None


def _count_parsed(obj: Any) -> tuple[int, int]:
    """(number of object keys, number of ':' inside all strings, keys included)."""
    keys = 0
    colons = 0
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            keys += len(cur)
            for k, v in cur.items():
                if ":" in k:
                    colons += k.count(":")
                if isinstance(v, str):
                    if ":" in v:
                        colons += v.count(":")
                elif isinstance(v, dict | list):
                    stack.append(v)
        elif isinstance(cur, list):
            for v in cur:
                if isinstance(v, str):
                    if ":" in v:
                        colons += v.count(":")
                elif isinstance(v, dict | list):
                    stack.append(v)
        elif isinstance(cur, str):
            colons += cur.count(":")
    return keys, colons


def reject_duplicate_keys(text: str, source: str | Path) -> None:
    """Exact duplicate-key check with the stdlib parser; names the record (1-based) of a top-level list."""

    def hook(pairs: list[tuple[str, Any]]) -> dict:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
        return dict(pairs)

    decoder = json.JSONDecoder(object_pairs_hook=hook)
    body = text.strip()
    if not body.startswith("["):
        try:
            decoder.decode(body)
        except _Duplicate as dup:
            raise BadInput(DUPLICATE_KEY, source=source, field=dup.key) from None
        return
    # a list: decode element by element so the message can name the record
    pos, number = 1, 0
    ws = " \t\n\r"
    while True:
        while pos < len(body) and body[pos] in ws:
            pos += 1
        if pos >= len(body) or body[pos] == "]":
            return
        number += 1
        try:
            _, pos = decoder.raw_decode(body, pos)
        except _Duplicate as dup:
            raise BadInput(DUPLICATE_KEY, source=source, record=number, field=dup.key) from None
        while pos < len(body) and body[pos] in ws:
            pos += 1
        if pos < len(body) and body[pos] == ",":
            pos += 1


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _no_duplicate_keys(raw: bytes, parsed: Any) -> bool:
    """Fast exact test (see module docstring); False means 'maybe duplicates, check slowly'."""
    if b"\\u003a" in raw or b"\\u003A" in raw:
        return False
    keys, colons = _count_parsed(parsed)
    return raw.count(b":") == keys + colons


def loads_json(data: bytes, source: str | Path, *, line: int | None = None) -> Any:
    """Parse JSON bytes strictly (UTF-8, finite numbers, no duplicate keys)."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        _decode_utf8(data, source)  # a clearer message when the problem is the encoding
        where = f"line {line}" if line is not None else f"line {exc.lineno} column {exc.colno}"
        msg = str(exc).split(":")[0]
        if b"NaN" in data or b"Infinity" in data:
            msg += " (NaN and Infinity are not allowed; write finite numbers or null)"
        raise BadInput(f"malformed JSON: {msg}", source=source, record=where) from None
    if not _no_duplicate_keys(data, parsed):
        try:
            reject_duplicate_keys(data.decode("utf-8"), source)
        except BadInput as exc:
            if line is not None:
                raise BadInput(exc.detail, source=source, record=f"line {line}", field=exc.field) from None
            raise
    return parsed


def read_json(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """Read one strict JSON document from ``path``."""
    return loads_json(read_bytes(path, max_bytes=max_bytes), path)


def read_jsonl(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Any]:
    """Read strict JSON Lines: one JSON value per non-blank line."""
    data = read_bytes(path, max_bytes=max_bytes)
    _decode_utf8(data, path)
    out = []
    for i, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            out.append(loads_json(raw, path, line=i))
        except BadInput:
            _refuse_a_json_document(data, path, i)
            raise
    return out


def _refuse_a_json_document(data: bytes, path: str | Path, line: int) -> None:
    """A line that fails to parse in a file that is one JSON document spread over lines: say so."""
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    kind = "an array" if isinstance(whole, list) else "an object" if isinstance(whole, dict) else "a value"
    raise BadInput(f"expected one JSON object per line (JSON Lines), but the file is one JSON document "
                   f"({kind} over several lines)", source=path, record=f"line {line}")


def read_csv(
    path: str | Path,
    *,
    required: Sequence[str],
    optional: Sequence[str] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[dict[str, str]]:
    """Read a strict CSV with a header: returns one dict per row, keyed by column name.

    Refuses: not UTF-8, a missing required column, an unknown or repeated column, a row with
    a different number of fields than the header. Values are returned as stripped strings;
    record numbers in messages are file line numbers.
    """
    data = read_bytes(path, max_bytes=max_bytes)
    text = _decode_utf8(data, path)
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise BadInput("empty file, expected a header row", source=path, record="line 1") from None
    except csv.Error as exc:
        raise BadInput(f"malformed CSV: {exc}", source=path, record="line 1") from None
    header = [h.strip() for h in header]
    allowed = set(required) | set(optional)
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise BadInput("column appears twice in the header", source=path, record="line 1", field=name)
        if name not in allowed:
            raise BadInput(
                f"unknown column; expected columns {', '.join(list(required) + list(optional))}",
                source=path,
                record="line 1",
                field=name,
            )
        seen.add(name)
    for name in required:
        if name not in seen:
            raise BadInput("required column is missing from the header", source=path, record="line 1", field=name)
    rows: list[dict[str, str]] = []
    try:
        for fields in reader:
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if len(fields) != len(header):
                raise BadInput(
                    f"has {len(fields)} fields, the header has {len(header)}",
                    source=path,
                    record=f"line {reader.line_num}",
                )
            row = {h: v.strip() for h, v in zip(header, fields, strict=True)}
            row["__line__"] = str(reader.line_num)
            rows.append(row)
    except csv.Error as exc:
        raise BadInput(f"malformed CSV: {exc}", source=path, record=f"line {reader.line_num}") from None
    return rows


_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def parse_finite_float(value: Any, *, source: str | Path, record: str | int | None, field: str) -> float:
    """A finite float from a number or a plain decimal string (``12``, ``-0.5``, ``1e-3``).

    Anything else is :class:`BadInput`: booleans, ``nan``/``inf``, and the spellings Python's
    ``float()`` would also accept but a table should not contain (``1_0``, surrounding blanks).
    """
    if isinstance(value, bool) or (isinstance(value, str) and not _DECIMAL.fullmatch(value)):
        raise BadInput(f"expected a finite number, got {value!r}", source=source, record=record, field=field)
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise BadInput(f"expected a finite number, got {value!r}", source=source, record=record, field=field) from None
    if not math.isfinite(out):
        raise BadInput(f"expected a finite number, got {value!r}", source=source, record=record, field=field)
    return out


def _loc_to_field(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(root)"


def validate(model: type[M], data: Any, *, source: str | Path, record: str | int | None = None) -> M:
    """Validate ``data`` against a pydantic model; the first error becomes one :class:`BadInput` line."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = list(err.get("loc", ()))
        # pydantic puts the failing union member or validator name in loc; keep only data keys
        field = _loc_to_field([p for p in loc if not (isinstance(p, str) and p.startswith(("function-", "union[")))])
        msg = err.get("msg", "invalid value")
        if "input" in err and not isinstance(err["input"], dict | list):
            msg += f" (got {err['input']!r})"
        raise BadInput(msg, source=source, record=record, field=field) from None
