"""Base pydantic model for every file format: strict, no extra keys, finite floats only."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Format(BaseModel):
    """Base of all input/output formats. Unknown keys and NaN/Infinity are rejected."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, populate_by_name=True)


class Interval(Format):
    """A 95 % interval written beside a number (``benchscore.stats.intervals.beside``; docs/statistics.md)."""

    ci95: list[float] | None = Field(min_length=2, max_length=2,
                                     description="[low, high], or null when the data cannot support one")
    ci_method: Literal["exact_mid_p", "cluster_wilson", "units_wilson", "skew_corrected_t", "mover"] | None = Field(
        description="how the interval was made (the method of a null interval: the one the number would have had)")
    ci_reason: str | None = Field(None, description="why ci95 is null")


_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """A docstring's text without its markup, for people reading a schema or a list: ``:func:`~a.b.name```
    becomes ``name`` and a double-backticked literal single-backticked (``x`` -> `x`)."""
    def role(m: re.Match[str]) -> str:
        target = m.group(1)
        return target.rsplit(".", 1)[-1] if "." in target and " " not in target else target

    return _LITERAL.sub(r"`\1`", _ROLE.sub(role, text))


def plain_schema(schema: Any, title: str) -> Any:
    """A JSON Schema for reading: descriptions without docstring markup (:func:`plain_text`), the format's
    own name as the title where pydantic would print a type (``RootModel[dict[str, Union[int, NoneType]]]``),
    no other title that is a type expression."""
    def walk(node: Any, root: bool) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "description" and isinstance(value, str):
                    out[key] = plain_text(value)
                elif key == "title" and isinstance(value, str) and ("[" in value or "NoneType" in value):
                    if root:
                        out[key] = title
                else:
                    out[key] = walk(value, False)
            return out
        if isinstance(node, list):
            return [walk(v, False) for v in node]
        return node

    return walk(schema, True)
