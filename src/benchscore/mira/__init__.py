"""benchscore.mira: Mira Core v0.1 agent benchmark scoring (seed 003).

Layers: :mod:`formulas` (timing bands and credit, statuses, Task Success, Reliability, Pass@1,
Stable@3, Complete@3, Autonomy, governance severity, the T_soft calibration policy; pure
functions), :mod:`formats` (pydantic file formats), :mod:`records` (strict reading and
cross-checks at the door), :mod:`scoring` (assembles per-repetition, per-case and aggregate
results with derivations), :mod:`judge` (packets, running the judge, merging verdicts),
:mod:`calibration`, :mod:`projection` (the public allowlist), :mod:`demo`, :mod:`cli`.
"""

from .calibration import calibrate
from .formats import (
    CalibrationPolicy,
    Case,
    Contract,
    Deviation,
    JudgePacket,
    JudgeVerdict,
    PublicProjection,
    RepetitionRecord,
    ScoreOutput,
)
from .formulas import (
    autonomy,
    calibrate_t_soft,
    complete_at_3,
    governance_severity,
    official_task_success,
    pass_at_1,
    raw_success,
    reliability,
    repetition_status,
    stable_at_3,
    t_hard,
    timing_band,
    timing_band_of,
    timing_bands,
    timing_credit,
)
from .judge import build_packets, merge_verdicts
from .projection import project
from .scoring import effective_derivation, score

__all__ = [
    "CalibrationPolicy",
    "Case",
    "Contract",
    "Deviation",
    "JudgePacket",
    "JudgeVerdict",
    "PublicProjection",
    "RepetitionRecord",
    "ScoreOutput",
    "autonomy",
    "build_packets",
    "calibrate",
    "calibrate_t_soft",
    "complete_at_3",
    "effective_derivation",
    "governance_severity",
    "merge_verdicts",
    "official_task_success",
    "pass_at_1",
    "project",
    "raw_success",
    "reliability",
    "repetition_status",
    "score",
    "stable_at_3",
    "t_hard",
    "timing_band",
    "timing_band_of",
    "timing_bands",
    "timing_credit",
]
