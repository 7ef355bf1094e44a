"""Output quality: named checks, the raw quality score ``Q`` and the quality gate (seed section 2).

A step's output is judged by a list of named checks, each passed or not and each marked
critical or not. ``Q = passed / N`` and ``quality_pass = Q >= 0.72 and every critical check
passed``. :func:`detect_quality_risk` is the seed's ``R(content)`` (section 3): refusal, role
refusal, off-topic or quality-failure markers. :func:`s07_quality_checks` builds the S07
checks of section 2 (the seven critical ones plus three non-critical ones, see its docstring).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import Field

from benchscore.common.models import Format

from .scoring import at_least

QUALITY_THRESHOLD = 0.72


class QualityCheck(Format):
    """One named quality check of one output: passed or not, critical or not."""

    name: str = Field(min_length=1)
    passed: bool
    critical: bool = False
    detail: str = ""


class QualityAssessment(Format):
    """The result of :func:`assess_output_quality`: every check, ``Q`` and ``quality_pass``."""

    checks: tuple[QualityCheck, ...]
    passed: int
    total: int
    Q: float
    threshold: float
    critical_failed: tuple[str, ...]
    quality_pass: bool


def assess_output_quality(checks: Sequence[QualityCheck], *, threshold: float = QUALITY_THRESHOLD) -> QualityAssessment:
    """Raw quality score and quality gate (seed section 2).

    ``Q = (sum c_i) / N`` with ``c_i in {0, 1}`` over the ``N`` checks of the step, and
    ``quality_pass = Q >= threshold (0.72) and every critical check passed``, ``>=`` through
    :func:`~benchscore.swarm.scoring.at_least` (a tolerance of 1e-9 for float rounding).
    Check names must be unique and there must be at least one check.
    """
    if not checks:
        raise ValueError("assess_output_quality needs at least one check (N >= 1)")
    names = [c.name for c in checks]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"check names must be unique; {dup!r} appears twice")
    passed = sum(1 for c in checks if c.passed)
    total = len(checks)
    q = passed / total
    critical_failed = tuple(c.name for c in checks if c.critical and not c.passed)
    return QualityAssessment(
        checks=tuple(checks),
        passed=passed,
        total=total,
        Q=q,
        threshold=threshold,
        critical_failed=critical_failed,
        quality_pass=at_least(q, threshold) and not critical_failed,
    )


# -- R(content): refusal, role refusal, off-topic, quality-failure markers (seed section 3) -----

RISK_MARKERS: dict[str, tuple[str, ...]] = {
    "refusal": (
        r"\bI(?:'m| am)? (?:cannot|can't|can ?not|won't|will not|am unable to|'m unable to) "
        r"(?:help|assist|comply|do that|provide)",
        r"\bI (?:must|have to) (?:decline|refuse)\b",
        r"无法(?:协助|帮助|回答|完成)",
        r"拒绝(?:回答|执行)",
    ),
    "role_refusal": (
        r"\bas an? (?:AI|language model)\b.{0,40}\b(?:cannot|can't|not able|unable)\b",
        r"作为(?:一个)?(?:AI|人工智能|语言模型).{0,20}(?:不能|无法)",
        r"\bnot (?:my|within my) role\b",
    ),
    "off_topic": (r"\bOFF[-_ ]TOPIC\b", r"偏题"),
    "quality_failure": (r"\bQUALITY[-_ ]FAILURE\b", r"质量失败"),
}
_RISK_RE = {kind: [re.compile(p, re.IGNORECASE | re.DOTALL) for p in pats] for kind, pats in RISK_MARKERS.items()}


def detect_quality_risk(content: str) -> tuple[str, ...]:
    """``R(content)`` of seed section 3: the risk kinds found in ``content`` (empty tuple: no risk).

    Kinds are ``refusal``, ``role_refusal``, ``off_topic`` and ``quality_failure``; each is a
    fixed list of case-insensitive patterns (English and Chinese) in :data:`RISK_MARKERS`.
    An empty or blank output is treated as a ``quality_failure``.
    """
    if not content.strip():
        return ("quality_failure",)
    return tuple(kind for kind, pats in _RISK_RE.items() if any(p.search(content) for p in pats))


# -- the S07 checks (seed section 2) ------------------------------------------------------------

S07_STEP_COUNT = 7
FASTAPI_SEMANTICS = ("APIRouter", "Depends", "FastAPI(", "@app.", "Request", "BaseModel", "HTTPException",
                     "dependant", "routing.py", "Starlette")


def step_marker(step: int) -> str:
    """``STEP-01`` ... ``STEP-07``; ``STEP-00`` is the chain's brief, the 'previous step' of STEP-01."""
    return f"STEP-{step:02d}"


def s07_quality_checks(
    content: str,
    *,
    step: int,
    repository: str,
    pinned_ref: str,
    local_project: str = "benchscore",
    source_files: Sequence[str] = (),
) -> list[QualityCheck]:
    """The named checks of one S07 chain step (seed section 2); ``step`` is 1-based.

    Critical (the seven the seed lists): ``current_step_marker`` (``STEP-0k``),
    ``previous_step_marker`` (``STEP-0(k-1)``; ``STEP-00`` is the brief), ``external_repository``
    (``repository``, e.g. ``fastapi/fastapi``), ``pinned_ref`` (the fixed version/commit),
    ``no_drift_to_local_project`` (does not name ``local_project``), ``no_quality_risk``
    (``R(content)`` empty) and ``fastapi_code_semantics`` (at least two FastAPI code terms).
    Non-critical (so that ``Q >= 0.72`` is a real gate and not implied by the critical ones):
    ``references_source_file`` (names a file of the pinned source), ``structured_findings``
    (at least two list lines) and ``adequate_length`` (at least 40 words).
    With N = 10, passing the seven critical checks gives Q >= 0.7 only, so at least one
    non-critical check must also pass.
    """
    lowered = content.lower()
    semantics = [t for t in FASTAPI_SEMANTICS if t.lower() in lowered]
    files = [f for f in source_files if f in content]
    list_lines = [ln for ln in content.splitlines() if re.match(r"\s*(?:[-*•]|\d+[.)])\s+\S", ln)]
    risk = detect_quality_risk(content)
    return [
        QualityCheck(name="current_step_marker", critical=True, passed=step_marker(step) in content),
        QualityCheck(name="previous_step_marker", critical=True, passed=step_marker(step - 1) in content),
        QualityCheck(name="external_repository", critical=True, passed=repository.lower() in lowered),
        QualityCheck(name="pinned_ref", critical=True, passed=pinned_ref in content),
        QualityCheck(name="no_drift_to_local_project", critical=True, passed=local_project.lower() not in lowered),
        QualityCheck(name="no_quality_risk", critical=True, passed=not risk, detail=",".join(risk)),
        QualityCheck(name="fastapi_code_semantics", critical=True, passed=len(semantics) >= 2,
                     detail=",".join(semantics)),
        QualityCheck(name="references_source_file", passed=bool(files), detail=",".join(files[:5])),
        QualityCheck(name="structured_findings", passed=len(list_lines) >= 2),
        QualityCheck(name="adequate_length", passed=len(content.split()) >= 40),
    ]
