"""Outputs read back: every output a command reads (``benchscore report``, ``benchscore compare``, the
report's summary table and figures) is checked against the typed model of its kind before anything
uses a value of it.

Each domain (and ``benchscore compare`` for its own outputs) supplies one small hook, a module with
``kind_of(doc) -> str | None`` (which of its kinds a document is, from its shape) and
``output_formats() -> {kind: model}`` (the pydantic model of every field that kind writes); the
umbrella wires the hooks into a :class:`Registry`, as it wires verify's kinds. :func:`check`
validates strictly: a number stored as a string, a boolean where a number belongs, an unknown key or
a missing field is one line naming the file and the JSON path of the field (exit 2), never a
traceback or a wrong drawing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import BadInput, shown
from .readers import error_message

M = TypeVar("M", bound=BaseModel)


class Hook(Protocol):
    """What a domain supplies: which of its kinds a document is, and each kind's model."""

    def kind_of(self, doc: Any) -> str | None: ...

    def output_formats(self) -> dict[str, type[BaseModel]]: ...


def json_path(doc: Any, loc: tuple[Any, ...], *, missing: bool = False) -> str:
    """The JSON path (``models.synthetic-model-a.index``, ``overall.per_sample.all[3].status``) of a
    pydantic error location, walked along the document itself: the parts pydantic adds that are no
    key of the document (a union member's name or tag, a validator's name) are left out. A ``missing``
    field's own name (the last part) is kept."""
    out = ""
    node = doc
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif not (last and missing):
            continue
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(root)"


def _category(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array" if isinstance(value, list | tuple) else "value"


def coerced(doc: Any, typed: Any, path: str = "") -> tuple[str, str, Any] | None:
    """The first place where the model's value (``typed``: the validated model written back as JSON)
    is of another JSON type than the document's: a value pydantic's lax mode converted (``"0.5"`` into
    a number, ``true`` into 1). ``(JSON path, the type the model holds, the document's value)``."""
    if isinstance(doc, dict) and isinstance(typed, dict):
        for key, value in doc.items():
            if key in typed:
                found = coerced(value, typed[key], f"{path}.{key}" if path else str(key))
                if found:
                    return found
        return None
    if isinstance(doc, list) and isinstance(typed, list | tuple):
        for i, (value, kept) in enumerate(zip(doc, typed, strict=False)):
            found = coerced(value, kept, f"{path}[{i}]")
            if found:
                return found
        return None
    if _category(doc) != _category(typed):
        return path or "(root)", _category(typed), doc
    return None


_EXPECTED = {"number": "a valid number", "boolean": "a valid boolean", "string": "a valid string",
             "null": "null", "object": "an object ({...})", "array": "an array ([...])"}


def check(model: type[M], doc: Any, *, source: str | Path) -> M:
    """``doc`` validated against ``model``, strictly: a value of the wrong JSON type (a number
    written as text, a boolean where a number belongs) is refused even where pydantic's lax mode
    would convert it. The first error is one :class:`BadInput` line naming ``source`` and the JSON
    path of the field."""
    try:
        obj = model.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = json_path(doc, tuple(err.get("loc", ())), missing=err.get("type") == "missing")
        raise BadInput(error_message(err), source=source, field=field) from None
    found = coerced(doc, obj.model_dump(mode="json", by_alias=True))
    if found:
        where, expected, value = found
        raise BadInput(f"Input should be {_EXPECTED.get(expected, expected)} (got {shown(value)})",
                       source=source, field=where)
    return obj


@dataclass(frozen=True)
class Registry:
    """Output kinds -> their models, from each domain's hook (``hooks``: name -> hook)."""

    hooks: Mapping[str, Hook]

    @cached_property
    def formats(self) -> dict[str, dict[str, type[BaseModel]]]:
        return {name: hook.output_formats() for name, hook in self.hooks.items()}

    def kind_of(self, doc: Any) -> tuple[str, str] | None:
        """``(domain, kind)`` of a document, or None when no hook recognises it."""
        for name, hook in self.hooks.items():
            kind = hook.kind_of(doc)
            if kind is not None:
                return name, kind
        return None

    def check(self, doc: Any, *, source: str | Path) -> tuple[str, str] | None:
        """``(domain, kind)`` of a document after checking it against its kind's model (one line, exit
        2, when a field is not what the model says); None when no hook recognises it (the caller says
        what it reads)."""
        found = self.kind_of(doc)
        if found is not None:
            check(self.formats[found[0]][found[1]], doc, source=source)
        return found
