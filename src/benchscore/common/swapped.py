"""Inputs given to each other's options: a refusal that says so.

A command that takes two inputs of different formats (``mira score --contract C --repetitions R``) declares
the kind of each with :func:`swappable`. When reading one of them fails (a :class:`BadInput` whose source is
that file) and the file is recognisably of another declared kind, the one line says the two look swapped,
naming both options, instead of the first field the wrong format lacks. Recognising is cheap and only runs on
that error path: the file is read again through the readers' door (size, nesting) and its top level (a JSON
Lines file: its first record) is tested by the kind's ``recognise``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BadInput


@dataclass(frozen=True)
class Kind:
    """A format an option takes: ``name`` as a message says it (``a Mira contract``), ``recognise`` its test of
    a parsed document (for ``lines``, JSON Lines, of its first record)."""

    name: str
    recognise: Callable[[Any], bool]
    lines: bool = False


def keys(*names: str) -> Callable[[Any], bool]:
    """A document that is an object holding every key of ``names``."""
    return lambda doc: isinstance(doc, dict) and all(n in doc for n in names)


def list_of(*names: str) -> Callable[[Any], bool]:
    """A document that is a non-empty list whose first item is an object holding every key of ``names``."""
    return lambda doc: isinstance(doc, list) and bool(doc) and keys(*names)(doc[0])


def swappable(**kinds: Kind) -> Callable[[Any], Any]:
    """Declare the kind of each input parameter of a click command (put it above ``@group.command``)."""
    def mark(command: Any) -> Any:
        command.input_kinds = kinds
        return command
    return mark


def _document(path: Path, lines: bool) -> Any:
    """The file's parsed top level (its first record for JSON Lines); None when it cannot be read as JSON."""
    import orjson

    from .readers import check_nesting, read_bytes

    try:
        data = read_bytes(path)
        check_nesting(data, path, lines=lines)
        if lines:
            first = next((line for line in data.split(b"\n") if line.strip()), b"")
            return orjson.loads(first) if first else None
        return orjson.loads(data)
    except (BadInput, orjson.JSONDecodeError, ValueError, OSError):
        return None


def _recognised(kind: Kind, path: Path) -> bool:
    for lines in (kind.lines, not kind.lines):  # a JSON file given for a JSON Lines option, and back
        doc = _document(path, lines)
        if doc is not None:
            try:
                if kind.recognise(doc):
                    return True
            except Exception:  # noqa: BLE001 - a recogniser never turns a refusal into a traceback
                pass
    return False


def _paths(value: Any) -> list[Path]:
    """The paths a parameter holds (an option given many times holds a tuple)."""
    values = value if isinstance(value, tuple | list) else [value]
    return [Path(v) for v in values if isinstance(v, str | os.PathLike)]


def _same(a: str, b: Path) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


def explain(exc: BadInput, kinds: Mapping[str, Kind] | None, params: Mapping[str, Any],
            options: Mapping[str, str]) -> BadInput | None:
    """The refusal ``exc`` said as a swap, when the file it names was given for one declared parameter and is
    recognisably of another's kind (None: it is not). ``options``: each parameter's option (``--contract``)."""
    if not kinds or exc.source is None:
        return None
    source = exc.source
    given, path = next(((name, p) for name in kinds for p in _paths(params.get(name)) if _same(source, p)),
                       (None, None))
    if given is None or path is None:
        return None
    if _recognised(kinds[given], path):
        return None  # of its own kind: the refusal is about something else
    for other, kind in kinds.items():
        if other == given or not _recognised(kind, path):
            continue
        back = next((f", and {options[other]} {q} like {kinds[given].name}" for q in _paths(params.get(other))
                     if _recognised(kinds[given], q)), "")
        return BadInput(f"looks like {kind.name} (what {options[other]} takes), not {kinds[given].name}{back}: "
                        f"{options[given]} and {options[other]} look swapped", source=path)
    return None


__all__ = ["Kind", "explain", "keys", "list_of", "swappable"]
