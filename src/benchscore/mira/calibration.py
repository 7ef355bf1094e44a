"""Calibration: set each case's T_soft from controlled reference observations (seed "Timing 与晚完成")."""

from __future__ import annotations

from typing import Any

from .formats import CalibrationPolicy, Contract, Observation
from .formulas import calibrate_t_soft


def calibrate(contract: Contract, observations: list[Observation], policy: CalibrationPolicy) -> dict[str, Any]:
    """The contract with every case's ``t_soft_s`` set by ``policy`` (as a JSON-ready dict).

    Only completed, comparable observations count. A case the policy cannot give a fair, stable
    budget becomes ``diagnostic_untimed`` with ``t_soft_s`` null; a case that gets a budget becomes
    ``automated_scored``. Each case records what calibration found; the policy and its
    parameters are written into the contract as ``calibration_policy``.
    """
    by_case: dict[str, list[float]] = {c.case_id: [] for c in contract.cases}
    left_out: dict[str, int] = {c.case_id: 0 for c in contract.cases}
    for obs in observations:
        if obs.completed and obs.comparable:
            by_case[obs.case_id].append(obs.elapsed_s)
        else:
            left_out[obs.case_id] += 1
    cases = []
    for case in contract.cases:
        values = by_case[case.case_id]
        t_soft, note = calibrate_t_soft(
            values,
            min_observations=policy.min_observations,
            max_cv=policy.max_cv,
            multiplier=policy.multiplier,
            round_up_to_s=policy.round_up_to_s,
        )
        if left_out[case.case_id]:
            note += f"; {left_out[case.case_id]} observations left out (not completed or not comparable)"
        d = case.model_dump(mode="json")
        d["t_soft_s"] = t_soft
        d["scoring_class"] = "automated_scored" if t_soft is not None else "diagnostic_untimed"
        d["calibration"] = {"observations": len(values), "t_soft_s": t_soft, "note": note}
        cases.append(d)
    out = contract.model_dump(mode="json", exclude={"provenance"})
    out["calibration_policy"] = policy.model_dump(mode="json")
    out["cases"] = cases
    return out
