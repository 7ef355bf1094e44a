"""benchscore.mira: Mira Core v0.1 agent benchmark scoring (seed 003).

Layers: :mod:`formulas` (timing bands and credit, statuses, Task Success, Reliability, Pass@1,
Stable@3, Complete@3, Autonomy, governance severity, the T_soft calibration policy; pure
functions), :mod:`formats` (pydantic file formats), :mod:`records` (strict reading and
cross-checks at the door), :mod:`scoring` (assembles per-repetition, per-case and aggregate
results with derivations), :mod:`judge` (packets, running the judge, merging verdicts),
:mod:`calibration`, :mod:`projection` (the public allowlist), :mod:`terminal` (what the commands
print), :mod:`demo`, :mod:`cli`.

Names are imported on first use (PEP 562), so ``import benchscore.mira.cli`` does not load
pydantic or numpy.
"""

from __future__ import annotations

from benchscore.common.lazy import lazy_exports

_EXPORTS = {
    "calibrate": "calibration",
    "CalibrationPolicy": "formats",
    "Case": "formats",
    "Contract": "formats",
    "Deviation": "formats",
    "JudgePacket": "formats",
    "JudgeVerdict": "formats",
    "PublicProjection": "formats",
    "RepetitionRecord": "formats",
    "ScoreOutput": "formats",
    "autonomy": "formulas",
    "calibrate_t_soft": "formulas",
    "complete_at_3": "formulas",
    "governance_severity": "formulas",
    "official_task_success": "formulas",
    "pass_at_1": "formulas",
    "raw_success": "formulas",
    "reliability": "formulas",
    "repetition_status": "formulas",
    "stable_at_3": "formulas",
    "t_hard": "formulas",
    "timing_band": "formulas",
    "timing_band_of": "formulas",
    "timing_bands": "formulas",
    "timing_credit": "formulas",
    "weights_sum_to_one": "formulas",
    "build_packets": "judge",
    "merge_verdicts": "judge",
    "project": "projection",
    "effective_derivation": "scoring",
    "score": "scoring",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
