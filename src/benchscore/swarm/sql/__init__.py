"""SQL of the stores, kept in files as procrastinate does: a schema file and named queries.

A queries file is a sequence of blocks, each starting with a ``-- name: NAME`` line; the Python
side calls a query by its name.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def read_sql(filename: str) -> str:
    return resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")


@cache
def queries(filename: str) -> dict[str, str]:
    """NAME -> SQL text of every ``-- name: NAME`` block of ``filename``."""
    out: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    for line in read_sql(filename).splitlines():
        if line.startswith("-- name:"):
            if name is not None:
                out[name] = "\n".join(lines).strip().rstrip(";")
            name = line.split(":", 1)[1].strip()
            if name in out:
                raise ValueError(f"{filename}: query {name!r} defined twice")
            lines = []
        elif name is not None and not line.startswith("--"):
            lines.append(line)
    if name is not None:
        out[name] = "\n".join(lines).strip().rstrip(";")
    return out
