"""Hand-built condition tables for the rxn tests."""

from __future__ import annotations

from typing import Any

import pytest

from benchscore.rxn.formats import ConditionTable


def make_table(rows: list[tuple[dict[str, str], float | None]], *, table_id: str = "t1", measure: str | None = "yield",
               ee: list[float | None] | None = None, dr: list[float | None] | None = None) -> ConditionTable:
    """A table from (conditions, yield) pairs; the condition keys are those of the first row."""
    keys = list(rows[0][0])
    data: dict[str, Any] = {
        "table_id": table_id,
        "source": {"dataset": "hand-built", "file": "hand.csv"},
        "reaction": {"substrate": "c1ccccc1Br"},
        "condition_keys": keys,
        "yield_measure": measure,
        "rows": [],
    }
    for i, (cond, y) in enumerate(rows):
        row: dict[str, Any] = {"conditions": cond}
        if y is not None:
            row["yield"] = y
        if ee is not None and ee[i] is not None:
            row["ee"] = ee[i]
        if dr is not None and dr[i] is not None:
            row["dr"] = dr[i]
        data["rows"].append(row)
    return ConditionTable.model_validate(data)


def grid(yields: dict[tuple[str, str], float], keys: tuple[str, str] = ("solvent", "base")) -> list:
    return [({keys[0]: a, keys[1]: b}, y) for (a, b), y in yields.items()]


@pytest.fixture
def table_factory():
    return make_table


@pytest.fixture
def grid_factory():
    return grid
