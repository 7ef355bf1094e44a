"""The shape of acceptance results: named checks with the evidence they read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, field_validator

from benchscore.common.models import Format


class Check(Format):
    """One acceptance condition: PASS/FAIL and what it read to decide."""

    name: str
    passed: bool
    evidence: dict[str, Any] = Field(default_factory=dict)

    @field_validator("evidence")
    @classmethod
    def _string_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _jsonable(value)

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"


class ScenarioResult(Format):
    """One scenario (S07, S08, S09, S10, L01, L02, A01-A07): its checks and its PASS.

    ``mode``: ``live`` (real gateway), ``replay`` (local test server), ``local`` (no model),
    or ``not_run`` (with ``reason``).
    """

    scenario: str
    mode: str
    passed: bool
    checks: tuple[Check, ...] = ()
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


def all_passed(checks: Sequence[Check]) -> bool:
    """A conjunction of checks; an empty list is never a PASS."""
    return bool(checks) and all(c.passed for c in checks)


def _jsonable(value: Any) -> Any:
    """Evidence as JSON: mapping keys become strings (step numbers, task ids), tuples lists."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
