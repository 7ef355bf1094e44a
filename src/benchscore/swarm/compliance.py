"""Swarmness and minimal compliance scores, hard caps and grade bands (seed section 12)."""

from __future__ import annotations

from collections.abc import Mapping

from benchscore.common.models import Format

FEATURES = ("F01", "F02", "F03", "F04", "F05", "F06")
SCENARIOS = ("S07", "S08", "S09")
LOCAL = ("L01", "L02")
#: seed section 12 weights: 10 per feature, S07 10, S08 5, S09 10, L01 7, L02 8 (total 100)
WEIGHTS: dict[str, int] = {**{f: 10 for f in FEATURES}, "S07": 10, "S08": 5, "S09": 10, "L01": 7, "L02": 8}

#: (name, triggering items, cap) in the order the seed lists them
CAPS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("any_feature_failed", FEATURES, 59),
    ("any_scenario_failed", SCENARIOS, 84),
    ("any_local_failed", LOCAL, 94),
)

#: grade bands of seed section 12: (lower bound inclusive, grade id, the seed's label)
GRADES: tuple[tuple[float, str, str], ...] = (
    (95.0, "strong_local_minimal_swarm_compliance", "极强本地最小蜂群合规"),
    (85.0, "compliant_swarm_prototype", "合规蜂群原型"),
    (75.0, "minimal_acceptable_swarm", "最小可验收蜂群"),
    (60.0, "partial_swarm_not_acceptable", "部分蜂群，不可验收"),
    (float("-inf"), "not_a_swarm", "不满足蜂群"),
)


class AppliedCap(Format):
    name: str
    failed_items: tuple[str, ...]
    cap: int
    lowered_score: bool


class ComplianceScore(Format):
    swarmness_score: float
    raw_minimal_compliance_score: int
    minimal_compliance_score: float
    caps_applied: tuple[AppliedCap, ...]
    grade: str
    grade_label: str
    inputs: dict[str, int]


def _bits(values: Mapping[str, bool | int], names: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for name in names:
        if name not in values:
            raise ValueError(f"missing {name}")
        v = values[name]
        if v not in (0, 1) or (not isinstance(v, bool | int)):
            raise ValueError(f"{name} must be 0/1 or a bool, got {v!r}")
        out[name] = int(v)
    return out


def swarmness_score(features: Mapping[str, bool | int]) -> float:
    """``swarmness_score = 100 * (10 F01 + ... + 10 F06) / 60`` with ``F_i in {0, 1}`` (seed section 12)."""
    f = _bits(features, FEATURES)
    return 100.0 * sum(10 * f[k] for k in FEATURES) / 60.0


def grade(score: float) -> tuple[str, str]:
    """Grade band of seed section 12: <60, [60,75), [75,85), [85,95), >=95 -> (grade id, seed label)."""
    for lower, gid, label in GRADES:
        if score >= lower:
            return gid, label
    raise AssertionError("unreachable")


def minimal_compliance_score(items: Mapping[str, bool | int]) -> ComplianceScore:
    """Minimal compliance score with the hard caps (seed section 12).

    ``raw = 10(F01+...+F06) + 10 S07 + 5 S08 + 10 S09 + 7 L01 + 8 L02`` (weights sum to 100);
    then ``score = min(raw, 59)`` if any F is 0, ``min(., 84)`` if any of S07/S08/S09 is 0,
    ``min(., 94)`` if L01 or L02 is 0. Every cap whose condition holds is reported in
    ``caps_applied`` with ``lowered_score`` saying whether it changed the number.
    """
    bits = _bits(items, FEATURES + SCENARIOS + LOCAL)
    raw = sum(WEIGHTS[k] * bits[k] for k in bits)
    score = float(raw)
    applied = []
    for name, names, cap in CAPS:
        failed = tuple(k for k in names if bits[k] == 0)
        if failed:
            applied.append(AppliedCap(name=name, failed_items=failed, cap=cap, lowered_score=score > cap))
            score = min(score, float(cap))
    gid, label = grade(score)
    return ComplianceScore(
        swarmness_score=swarmness_score(bits), raw_minimal_compliance_score=raw, minimal_compliance_score=score,
        caps_applied=tuple(applied), grade=gid, grade_label=label, inputs=bits,
    )
