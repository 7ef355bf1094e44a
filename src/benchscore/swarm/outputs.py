"""The models of swarm's output files as written (without matplotlib: ``benchscore verify`` tells kinds by them,
the report's hook :func:`benchscore.swarm.figures.output_formats` returns them)."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def output_formats() -> dict[str, type]:
    """kind -> the model of that output file.

    The files carry a little more (or less) than their models say: ``swarm run`` writes its report
    without the two timing fields (the same inputs give the same file), ``swarm audit`` adds
    provenance, ``swarm accept`` a scenario's ``verdict`` and provenance. The models below describe
    the files as written.
    """
    from typing import Literal

    from pydantic import model_validator

    from .accept.evidence import ScenarioResult, scenario_verdict
    from .accept.matrix import AcceptanceMatrix
    from .audit import AuditReport
    from .budget import BudgetReport
    from .gateway import ModelIOReport
    from .run import RunReport
    from .stress import StressReport

    class RunReportFile(RunReport):
        wall_time_s: float | None = None
        tasks_per_second: float | None = None

    class AuditReportFile(AuditReport):
        provenance: dict[str, Any] | None = None

    class ScenarioFile(ScenarioResult):
        verdict: Literal["PASS", "FAIL"]
        verdict_reason: str = ""
        provenance: dict[str, Any] | None = None

        @model_validator(mode="after")
        def _verdict_is_the_scenarios(self) -> ScenarioFile:
            verdict, _ = scenario_verdict(self)
            if self.verdict != verdict:
                raise ValueError(f"verdict {self.verdict} contradicts the scenario's checks and mode ({verdict})")
            return self

    return {"acceptance-matrix": AcceptanceMatrix, "scenario": ScenarioFile, "model-io": ModelIOReport,
            "run": RunReportFile, "audit": AuditReportFile, "L01": StressReport, "L02": BudgetReport}
