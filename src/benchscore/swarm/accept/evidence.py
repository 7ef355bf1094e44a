"""The shape of acceptance results: named checks with the condition they test and the evidence they read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from pydantic import Field, ModelWrapValidatorHandler, computed_field, field_validator, model_validator

from benchscore.common.models import Format
from benchscore.common.terminal import rounded

from ..consensus import ConsensusResult


class Check(Format):
    """One acceptance condition: PASS/FAIL, the rule it tests and what it read to decide.

    ``reason`` (in every JSON output) is empty for a PASS; for a FAIL it is one line: the
    condition, the parts of it that did not hold (the ``false`` entries of the evidence's
    boolean maps such as ``conditions`` or ``per_step``) and the whole evidence, its floats to four
    significant digits for reading (``evidence`` keeps every digit).
    """

    name: str
    passed: bool
    condition: str = Field(min_length=1, description="the rule this check tests, with its thresholds")
    evidence: dict[str, Any] = Field(default_factory=dict)

    @field_validator("evidence")
    @classmethod
    def _string_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _jsonable(value)

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    @model_validator(mode="wrap")
    @classmethod
    def _read_back(cls, data: Any, handler: ModelWrapValidatorHandler[Check]) -> Check:
        return _computed_read_back(data, handler, "reason")

    @computed_field(description="empty for a PASS; for a FAIL: condition, failing parts and evidence, one line")
    @property
    def reason(self) -> str:
        if self.passed:
            return ""
        parts = failing_parts(self.evidence)
        return (f"not met: {self.condition}" + (f"; failing: {', '.join(parts)}" if parts else "")
                + f"; evidence: {evidence_line(rounded(self.evidence))}")


class ScenarioResult(Format):
    """One scenario (S07, S08, S09, S10, L01, L02, A01-A07): its checks and its PASS.

    ``mode``: ``live`` (the real gateway given by ``--base-url``), ``replay`` (the built-in local
    test server with a deterministic responder), ``local`` (no model), or ``not_run`` (with
    ``reason``). ``consensus`` holds every round of the scenario's consensus (S07, S09).
    ``failures`` (in every JSON output) maps each failed check to its one-line reason; a scenario
    that failed without running a check is listed under ``scenario``.
    """

    scenario: str
    mode: str
    passed: bool
    checks: tuple[Check, ...] = ()
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    consensus: ConsensusResult | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _read_back(cls, data: Any, handler: ModelWrapValidatorHandler[ScenarioResult]) -> ScenarioResult:
        return _computed_read_back(data, handler, "failures")

    @computed_field(description="failed check name -> its one-line reason")
    @property
    def failures(self) -> dict[str, str]:
        out = {c.name: c.reason for c in self.checks if not c.passed}
        if not self.passed and not self.checks:
            out["scenario"] = f"{self.mode}: {self.reason or 'no check ran'}"
        return out


#: scenarios that count only when they ran live against a real gateway (seed sections 8, 12 and 13)
LIVE_ONLY = ("S07", "S08")


def scenario_verdict(result: ScenarioResult) -> tuple[str, str]:
    """The one verdict of a scenario and the reason that decides it (empty for a PASS).

    A scenario is PASS when its checks pass and, for S07 and S08, it ran live: a replay against the
    local test server shows the code works but is not evidence about a real gateway, so it is FAIL
    with that reason. Every place that shows a scenario's verdict (the JSON outputs, the terminal,
    the compliance inputs, the closed loop, the report's tables and figure) takes it from here.
    """
    failed = "; ".join(f"{k}: {v}" for k, v in result.failures.items())
    if result.scenario in LIVE_ONLY and result.mode != "live":
        where = f"{result.mode}" + (f" ({result.reason})" if result.reason else "")
        checks = "passed" if result.passed else f"failed ({failed})" if failed else "failed"
        return "FAIL", f"{where}: its checks {checks}, but only a live run against a real gateway counts"
    if not result.passed:
        return "FAIL", failed or f"{result.mode}: {result.reason or 'no check ran'}"
    return "PASS", ""


def _computed_read_back(data: Any, handler: Any, name: str) -> Any:
    """A file written from this model carries the computed field ``name``; read back, the field is
    recomputed from the others and must equal what the file says (a hand-edited reason is refused)."""
    if not isinstance(data, dict) or name not in data:
        return handler(data)
    written = data[name]
    obj = handler({k: v for k, v in data.items() if k != name})
    if written != obj.model_dump(mode="json", include={name})[name]:
        raise ValueError(f"{name} {written!r} is not the one the other fields give")
    return obj


def all_passed(checks: Sequence[Check]) -> bool:
    """A conjunction of checks; an empty list is never a PASS."""
    return bool(checks) and all(c.passed for c in checks)


def failing_parts(evidence: Mapping[str, Any]) -> list[str]:
    """``KEY.PART`` for every ``false`` entry of the evidence's maps of booleans (``conditions``,
    ``per_step``, ``per_n``, ...): the parts of a condition that did not hold."""
    out = []
    for key, value in evidence.items():
        if isinstance(value, dict) and value and all(isinstance(v, bool) for v in value.values()):
            out += [f"{key}.{k}" for k, v in value.items() if not v]
    return out


def one_line(value: Any) -> str:
    """A value on one line: strings as they are (newlines as ``\\n``), anything else as compact JSON."""
    if isinstance(value, str):
        return value.replace("\r", "\\r").replace("\n", "\\n")
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def evidence_line(evidence: Mapping[str, Any]) -> str:
    """``key=value; key=value`` with every value in full on one line (see :func:`one_line`)."""
    return "; ".join(f"{k}={one_line(v)}" for k, v in evidence.items())


def _jsonable(value: Any) -> Any:
    """Evidence as JSON: mapping keys become strings (step numbers, task ids), tuples lists."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def consensus_evidence(result: ConsensusResult) -> dict[str, Any]:
    """A consensus as check evidence: its parameters and, per round, the leader, ``leader_share``
    and ``margin`` (what ``threshold`` and ``min_margin`` are compared with), converged, the scores."""
    return {"preset": result.preset, "threshold": result.threshold, "min_margin": result.min_margin,
            "evaporation": result.evaporation, "min_rounds": result.min_rounds,
            "rounds": [{"round": r.round, "leader": r.leader, "leader_share": r.leader_share, "margin": r.margin,
                        "converged": r.converged, "scores": r.scores} for r in result.rounds]}
