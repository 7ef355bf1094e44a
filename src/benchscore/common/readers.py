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
import errno
import io
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from .errors import BadInput, shown
from .guard import note_input

DEFAULT_MAX_BYTES = 2 * 1024**3  # 2 GiB: the size limit of every input file
#: the nesting limit of every JSON input: arrays and objects inside each other, at most this deep
MAX_DEPTH = 100

M = TypeVar("M", bound=BaseModel)

DUPLICATE_KEY = "key appears twice in the same JSON object (duplicate key)"

_CHUNK = 1 << 20
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _stat(p: Path) -> os.stat_result:
    """``os.stat`` of an input; every failure is one :class:`BadInput` line."""
    try:
        return os.stat(p)
    except FileNotFoundError:
        if os.path.islink(p):
            raise BadInput(f"file not found (a symbolic link to {os.readlink(p)!r}, which does not exist)",
                           source=p) from None
        raise BadInput("file not found", source=p) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadInput("symbolic link loop (too many levels of symbolic links)", source=p) from None
        raise BadInput(f"cannot read: {exc.strerror or exc}", source=p) from None


def _refuse_special(p: Path, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise BadInput("is a folder, expected a file", source=p)
    if not stat.S_ISREG(st.st_mode):
        link = f" (a symbolic link to {os.readlink(p)})" if os.path.islink(p) else ""
        raise BadInput(f"is {_not_regular(st.st_mode)}{link}, not a regular file; inputs must be regular files",
                       source=p)


def _too_large(p: Path, size: int | str, cap: int) -> BadInput:
    return BadInput(f"file is {size} bytes, larger than the limit of {cap}", source=p)


def head_of(path: str | Path, size: int) -> bytes:
    """The first ``size`` bytes of a regular file, b"" for anything else or an unreadable file (never opens a
    FIFO or a device: the readers that follow refuse those in one line). For telling a file's format."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return b""
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def check_file(path: str | Path, *, max_bytes: int | None = None) -> None:
    """Refuse, without reading it, an input that :func:`read_bytes` would refuse at the door (missing,
    not a regular file, over the size limit): for a command that reads it only after minutes of work."""
    _at_the_door(Path(path), DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)


def _at_the_door(p: Path, cap: int) -> None:
    st = _stat(p)
    _refuse_special(p, st)
    if st.st_size > cap:
        raise _too_large(p, st.st_size, cap)


def read_bytes(path: str | Path, *, max_bytes: int | None = None, existing_output: bool = False) -> bytes:
    """Read a whole input file: a regular file of at most ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`).

    Refused, each in one :class:`BadInput` line: a missing file, a dangling symbolic link, a link
    loop, a folder, and anything that is not a regular file (a FIFO would block forever, a link to
    ``/dev/zero`` never ends). It is checked before the file is opened, and again on the open file
    (opened without blocking, so a FIFO swapped in between cannot hang the read). The size limit is
    enforced while reading: at most ``max_bytes + 1`` bytes are ever read, whatever the file claims.

    Inside a command the file becomes an input that no write may replace (see ``guard``), unless
    ``existing_output``: the command reads its own output's previous content to compare with it.
    """
    cap = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    p = Path(path)
    _at_the_door(p, cap)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror or exc}", source=p) from None
    try:
        st = os.fstat(fd)
        _refuse_special(p, st)
        if not existing_output:
            note_input(p)
        data = _read_at_most(fd, st.st_size, cap)
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror or exc}", source=p) from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise _too_large(p, f"more than {cap}", cap)
    return data


def _read_at_most(fd: int, size: int, cap: int) -> bytes:
    """The file's bytes, but never more than ``cap + 1`` of them (one more tells it is too large)."""
    parts: list[bytes] = []
    total, want = 0, min(size, cap) + 1
    while total <= cap:
        chunk = os.read(fd, min(want, cap + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        want = _CHUNK  # the file was longer than it said (it grows, or a /proc file): read on in chunks
    return parts[0] if len(parts) == 1 else b"".join(parts)


_STRING = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_SHAPE = bytes(sorted(set(range(256)) - set(b'[]{}"\n')))
_SHAPE_OR_NEWLINE = re.compile(rb"[\[\]{}\n]")


def _outside_quotes(shape: bytes) -> bytes:
    """The bytes outside quote pairs (numpy: a running parity of the quotes). Exact for valid JSON; an
    unterminated string (malformed) may shift the parity, so a refusal is confirmed exactly first."""
    import numpy as np

    arr = np.frombuffer(shape, dtype=np.uint8)
    quote = arr == ord('"')
    inside = np.cumsum(quote, dtype=np.uint8) & 1  # the parity survives the uint8 wrap-around
    return arr[~(quote | inside.astype(bool))].tobytes()


def _too_deep_exactly(data: bytes, lines: bool) -> bool:
    """The same test with every string cut out by a regular expression (slower; run before refusing)."""
    shape = _STRING.sub(b"", data).translate(_SQUARE, _NOT_SHAPE).replace(b'"', b"")
    if not lines:
        shape = shape.replace(b"\n", b"")
    for _ in range(MAX_DEPTH):
        reduced = shape.replace(b"[]", b"")
        if len(reduced) == len(shape):
            return False
        shape = reduced
    return b"[]" in shape


def check_nesting(data: bytes, source: str | Path, *, lines: bool = False) -> None:
    """Refuse JSON nested deeper than :data:`MAX_DEPTH` (one limit for every input of every command).

    It runs on the bytes, before any parser or validator could recurse, at C speed (a few bytes
    operations, no Python loop over the text): escapes are dropped (``\\\\`` then ``\\"``), everything
    but brackets, quotes and newlines is deleted, the strings that remain (quotes with only brackets
    between them) are cut out, and the brackets left are reduced pair by pair (``[]`` and ``{}`` with
    nothing inside): a structure deeper than the limit still has a pair after ``MAX_DEPTH`` rounds.
    ``lines``: JSON Lines, each line on its own. Malformed JSON passes here and is named by the parser.
    """
    shape = data
    if b"\\" in shape:
        shape = shape.replace(b"\\\\", b"").replace(b'\\"', b"")
    shape = shape.translate(_SQUARE, _NOT_SHAPE)
    if shape.count(b"[") <= MAX_DEPTH:
        return
    shape = shape.replace(b'""', b"")
    if b'"' in shape:  # strings holding brackets: keep what lies outside quote pairs
        shape = _outside_quotes(shape)
    if not lines:
        shape = shape.replace(b"\n", b"")
    for _ in range(MAX_DEPTH):
        reduced = shape.replace(b"[]", b"")
        if len(reduced) == len(shape):
            return
        shape = reduced
    if b"[]" not in shape or not _too_deep_exactly(data, lines):
        return
    depth, line = 0, 1
    for m in _SHAPE_OR_NEWLINE.finditer(_STRING.sub(b"", data)):  # only to name the line: a slow scan is fine
        c = m.group()
        if c == b"\n":
            line += 1
            if lines:
                depth = 0
        elif c in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                break
        else:
            depth -= 1
    raise BadInput(f"nested deeper than {MAX_DEPTH} levels (arrays and objects inside each other); "
                   f"the limit is the same for every input", source=source, record=f"line {line}")


def read_json_bytes(path: str | Path, *, lines: bool = False, max_bytes: int | None = None,
                    existing_output: bool = False) -> bytes:
    """The bytes of a JSON (``lines``: JSON Lines) input, read by :func:`read_bytes` and refused when
    nested deeper than :data:`MAX_DEPTH`: the door every JSON input comes through, before any parser."""
    data = read_bytes(path, max_bytes=max_bytes, existing_output=existing_output)
    check_nesting(data, path, lines=lines)
    return data


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
    try:  # orjson writes each key once, followed by ':', and a ':' inside a string as it is: C speed
        parsed_colons = orjson.dumps(parsed).count(b":")
    except (orjson.JSONEncodeError, TypeError, OverflowError):
        keys, colons = _count_parsed(parsed)
        parsed_colons = keys + colons
    return raw.count(b":") == parsed_colons


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


def read_json(path: str | Path, *, max_bytes: int | None = None) -> Any:
    """Read one strict JSON document from ``path``."""
    return loads_json(read_json_bytes(path, max_bytes=max_bytes), path)


def read_jsonl(path: str | Path, *, max_bytes: int | None = None) -> list[Any]:
    """Read strict JSON Lines: one JSON value per non-blank line."""
    data = read_json_bytes(path, lines=True, max_bytes=max_bytes)
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


def read_csv_table(path: str | Path, *, max_bytes: int | None = None) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Read a strict CSV: its header and its rows as ``(line number, fields)``, values stripped.

    Refuses, in one line each: not UTF-8 (a BOM is allowed), an empty file, an empty or repeated
    column name, a row with a different number of fields than the header, and anything Python's
    ``csv`` module calls malformed (an unterminated quote, a cell over its field size limit of
    131,072 characters). Empty lines are skipped. For a CSV whose columns are not fixed in advance
    (``rxn convert-csv``); :func:`read_csv` checks a fixed header on top.
    """
    return parse_csv_table(read_bytes(path, max_bytes=max_bytes), path)


def parse_csv_table(data: bytes, source: str | Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """:func:`read_csv_table` on bytes already read (a CSV inside an archive); ``source`` names it."""
    path = source
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
    seen: set[str] = set()
    for number, name in enumerate(header, start=1):
        if not name:
            raise BadInput(f"empty column name (column {number})", source=path, record="line 1")
        if name in seen:
            raise BadInput("column appears twice in the header", source=path, record="line 1", field=name)
        seen.add(name)
    rows: list[tuple[int, list[str]]] = []
    try:
        for fields in reader:
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if len(fields) != len(header):
                raise BadInput(f"has {len(fields)} fields, the header has {len(header)}", source=path,
                               record=f"line {reader.line_num}")
            rows.append((reader.line_num, [v.strip() for v in fields]))
    except csv.Error as exc:
        raise BadInput(f"malformed CSV: {exc}", source=path, record=f"line {reader.line_num}") from None
    return header, rows


def read_csv(
    path: str | Path,
    *,
    required: Sequence[str],
    optional: Sequence[str] = (),
    max_bytes: int | None = None,
) -> list[dict[str, str]]:
    """Read a strict CSV with a fixed header: returns one dict per row, keyed by column name.

    Refuses what :func:`read_csv_table` refuses, and a missing required column or an unknown
    column. Values are returned as stripped strings; ``__line__`` is the row's line number in the
    file (the record number in messages).
    """
    header, table = read_csv_table(path, max_bytes=max_bytes)
    allowed = set(required) | set(optional)
    for name in header:
        if name not in allowed:
            raise BadInput(
                f"unknown column; expected columns {', '.join(list(required) + list(optional))}",
                source=path,
                record="line 1",
                field=name,
            )
    for name in required:
        if name not in header:
            raise BadInput("required column is missing from the header", source=path, record="line 1", field=name)
    rows: list[dict[str, str]] = []
    for line, fields in table:
        row = dict(zip(header, fields, strict=True))
        row["__line__"] = str(line)
        rows.append(row)
    return rows


_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def parse_finite_float(value: Any, *, source: str | Path, record: str | int | None, field: str) -> float:
    """A finite float from a number or a plain decimal string (``12``, ``-0.5``, ``1e-3``).

    Anything else is :class:`BadInput`: booleans, ``nan``/``inf``, and the spellings Python's
    ``float()`` would also accept but a table should not contain (``1_0``, surrounding blanks).
    """
    if isinstance(value, bool) or (isinstance(value, str) and not _DECIMAL.fullmatch(value)):
        raise BadInput(f"expected a finite number, got {shown(value)}", source=source, record=record, field=field)
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise BadInput(f"expected a finite number, got {shown(value)}", source=source, record=record, field=field) from None
    if not math.isfinite(out):
        raise BadInput(f"expected a finite number, got {shown(value)}", source=source, record=record, field=field)
    return out


def _loc_to_field(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(root)"


#: pydantic's messages that name a Python class or type, in the words of a JSON file
_PLAIN_MESSAGES = {
    "model_type": "Input should be an object ({...})",
    "model_attributes_type": "Input should be an object ({...})",
    "dataclass_type": "Input should be an object ({...})",
    "dict_type": "Input should be an object ({...})",
    "list_type": "Input should be an array ([...])",
    "tuple_type": "Input should be an array ([...])",
}


def error_message(err: Any) -> str:
    """One pydantic error in a reader's words (``Input should be an object ({...})``, never "a valid
    dictionary or instance of Metric"), with the offending value when it is a scalar."""
    msg = _PLAIN_MESSAGES.get(err.get("type", ""), err.get("msg", "invalid value"))
    if "input" in err and not isinstance(err["input"], dict | list) and err.get("type") != "missing":
        msg += f" (got {shown(err['input'])})"
    return msg


def validate(model: type[M], data: Any, *, source: str | Path, record: str | int | None = None) -> M:
    """Validate ``data`` against a pydantic model; the first error becomes one :class:`BadInput` line."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = list(err.get("loc", ()))
        # pydantic puts the failing union member or validator name in loc; keep only data keys
        field = _loc_to_field([p for p in loc if not (isinstance(p, str) and p.startswith(("function-", "union[")))])
        raise BadInput(error_message(err), source=source, record=record, field=field) from None
