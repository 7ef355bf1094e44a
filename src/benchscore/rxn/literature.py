"""Condition tables from a literature-style CSV: raw text such as ``>99%``, ``92:8``, ``rt`` parsed by :mod:`parsers`.

CSV columns: ``table_id`` (required); ``yield``, ``ee``, ``dr`` (optional outcome columns, raw text);
``dataset``, ``doi``, ``file`` (optional source columns, constant within a table); ``reaction.<role>``
(substrates); every other column is a condition key. A ``temperature`` column is normalised to
``"<number> °C"`` or ``reflux``; a ``time`` column to ``"<number> h"``. Without a ``yield`` column the
tables have ``yield_measure = null`` (scored on selectivity), and the file says so: ``fallback_measure`` is
``"selectivity"``.

A column that is none of these names but reads as an outcome once units, case, spacing and punctuation are
set aside (``Yield (%)``, ``yield_%``, ``isolated yield``, ``EE``, ``e.e.``, ``d.r.``, ``er``, ``conversion``)
is refused in one line naming the accepted names: read as a condition key it would put the outcome among
the options and score the set on another measure.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchscore.common.errors import BadInput
from benchscore.common.readers import read_csv_table

from .formats import ConditionTable, ConditionTableFile
from .parsers import parse_dr, parse_ee, parse_temperature, parse_time, parse_yield

SOURCE_COLUMNS = ("dataset", "doi", "file")
OUTCOMES = {"yield": parse_yield, "ee": parse_ee, "dr": parse_dr}
#: the measure a table without a yield column is scored on (``yield_measure`` null)
FALLBACK_MEASURE = "selectivity"
#: words (letters only, lower case) that name an outcome, and the outcome column they mean
_MEASURE_WORDS = {"yield": "yield", "yields": "yield", "conversion": "yield", "conv": "yield", "ee": "ee",
                  "enantiomericexcess": "ee", "er": "ee", "enantiomericratio": "ee", "dr": "dr", "de": "dr",
                  "diastereomericratio": "dr", "diastereomericexcess": "dr", "selectivity": "ee or dr"}
#: qualifiers a printed outcome heading carries before or after its word (``isolated yield``, ``ee percent``)
_QUALIFIER = re.compile(r"^(?:isolated|nmr|gc|hplc|lc|sfc|crude|combined|total|overall|average|avg|mean)*|"
                        r"(?:percent|pct|perc)$")


def measure_like(column: str) -> str | None:
    """The outcome column a heading means when it reads as one once its units (bracketed parts), case,
    spacing, digits and punctuation are set aside (``Yield (%)`` -> ``yield``, ``d.r.`` -> ``dr``); None
    when it reads as no outcome (a condition key)."""
    text = re.sub(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}", " ", column).lower()
    letters = re.sub(r"[^a-z]", "", text)
    core = _QUALIFIER.sub("", letters) or letters
    return _MEASURE_WORDS.get(core) or _MEASURE_WORDS.get(letters)


def _condition(key: str, raw: str) -> str:
    if key == "temperature":
        t = parse_temperature(raw)
        return t if isinstance(t, str) else f"{t:g} °C"
    if key == "time":
        return f"{parse_time(raw):g} h"
    return " ".join(raw.split())


def read_literature_csv(path: Path) -> ConditionTableFile:
    """Parse a literature-style CSV into condition tables (one BadInput line on any problem)."""
    header, lines = read_csv_table(path)
    if "table_id" not in header:
        raise BadInput("required column is missing from the header", source=path, record="line 1", field="table_id")
    keys = [h for h in header if h != "table_id" and h not in OUTCOMES and h not in SOURCE_COLUMNS
            and not h.startswith("reaction.")]
    for key in keys:
        meant = measure_like(key)
        if meant is not None:
            raise BadInput(f"looks like an outcome ({meant}) but is not named as one, so it would be read as a condition "
                           f"key (the outcome among the options, the set scored on another measure); accepted names: "
                           f"outcomes {', '.join(OUTCOMES)} (raw text as printed: 85%, 92% ee, 20:1); identifiers "
                           f"table_id, {', '.join(SOURCE_COLUMNS)}, reaction.<role>; any other column is a condition "
                           "key", source=path, record="line 1", field=key)
    if not keys:
        raise BadInput("no condition columns", source=path, record="line 1")
    tables: dict[str, dict[str, Any]] = {}
    first: dict[str, dict[str, str]] = {}
    for line, fields in lines:
        if not any(fields):
            continue
        row = dict(zip(header, fields, strict=True))
        tid = row["table_id"]
        fresh = tid not in tables
        table = tables.setdefault(tid, {
            "table_id": tid,
            "source": {"dataset": row.get("dataset") or path.name, "file": row.get("file") or path.name,
                       "doi": row.get("doi") or None},
            "reaction": {h.removeprefix("reaction."): row[h] for h in header if h.startswith("reaction.")},
            "condition_keys": keys,
            "yield_measure": "yield" if "yield" in header else None,
            "rows": [],
        })
        if not fresh:
            for h in header:
                if (h in SOURCE_COLUMNS or h.startswith("reaction.")) and row[h] != first[tid][h]:
                    raise BadInput(f"differs from the first row of table {tid!r} ({first[tid][h]!r})",
                                   source=path, record=f"line {line}", field=h)
        else:
            first[tid] = row
        out: dict[str, Any] = {"conditions": {}}
        for key in keys:
            try:
                out["conditions"][key] = _condition(key, row[key])
            except ValueError as exc:
                raise BadInput(str(exc), source=path, record=f"line {line}", field=key) from None
        for col, parse in OUTCOMES.items():
            if col in row:
                try:
                    out[col] = parse(row[col])
                except ValueError as exc:
                    raise BadInput(str(exc), source=path, record=f"line {line}", field=col) from None
                out[f"{col}_raw"] = row[col]
        table["rows"].append(out)
    if not tables:
        raise BadInput("no rows", source=path)
    parsed = []
    for tid, data in tables.items():
        try:
            parsed.append(ConditionTable.model_validate(data))
        except ValidationError as exc:
            msg = exc.errors(include_url=False)[0]["msg"]
            raise BadInput(msg, source=path, record=f"table {tid!r}") from None
    return ConditionTableFile(tables=parsed, fallback_measure=None if "yield" in header else FALLBACK_MEASURE)
