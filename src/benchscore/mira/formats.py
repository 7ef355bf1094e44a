"""Mira file formats (pydantic): contract, repetition records, deviations, observations,
calibration policy, judge packets and verdicts, score output and its public projection.

Every model is strict (unknown keys, NaN and Infinity are refused). Names follow seed 003.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, Required

from pydantic import ConfigDict, Field, StringConstraints, WrapValidator, field_validator, model_validator
from typing_extensions import TypedDict

from benchscore.common.models import Format as _BaseFormat

from .formulas import WEIGHT_SUM_TOLERANCE, governance_severity, weight_sum, weights_sum_to_one


class Format(_BaseFormat):
    """Strict mira format: no type coercion ("3" is not a number, "yes" is not a boolean)."""

    model_config = ConfigDict(strict=True)


Id = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")]
Text = Annotated[str, StringConstraints(min_length=1)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]

ScoringClass = Literal["automated_scored", "diagnostic_untimed"]
ExecutionMode = Literal["canonical", "adapted", "noncanonical", "invalid"]
TerminalState = Literal["completed", "failed", "cancelled"]
Verdict = Literal["pass", "fail"]
InterventionKind = Literal[
    "task_solving_help", "approval", "resume", "allowed_user_reply", "executor_mechanical_control"
]
GovernanceKind = Literal[
    "conservative_approval",
    "forbidden_side_effect",
    "bypassed_approval",
    "stale_approval_changed_invocation",
    "user_constraint_violation",
    "workspace_boundary_violation",
    "network_boundary_violation",
    "other_boundary_violation",
]
Severity = Literal["none", "minor", "serious"]

#: Keys a judge result may never carry: the judge does not decide these (seed "Judge 不得覆盖").
JUDGE_FORBIDDEN_KEYS: dict[str, str] = {
    "terminal_state": "terminal state",
    "elapsed_s": "timing",
    "timing_credit": "timing",
    "t_soft_s": "timing",
    "status": "terminal state",
    "tool_calls": "tool calls",
    "approvals": "approvals",
    "resumes": "resumes",
    "interventions": "tool call / approval / resume",
    "hard_fail_events": "hard-fail outcomes",
    "hard_fail": "hard-fail outcomes",
    "side_effects": "side effects",
    "governance_events": "side effects / governance",
    "deterministic_results": "deterministic criteria",
    "post_cutoff_completion": "timing",
}


# --------------------------------------------------------------------------- contract


class Criterion(Format):
    """One acceptance criterion of a case, owned by the deterministic scorer or by the judge."""

    id: Id
    weight: float = Field(gt=0, le=1, description="Weight in raw_success; a case's weights sum to 1 "
                          "(their decimal sum as written, within 1e-9).")
    scorer: Literal["deterministic", "judge"]
    question: Text | None = Field(
        None, description="The frozen binary pass|fail question; required for scorer 'judge', absent otherwise."
    )
    hidden_evaluator: str | None = Field(None, description="PRIVATE: how the deterministic scorer checks it.")

    @model_validator(mode="after")
    def _question_matches_scorer(self) -> Criterion:
        if self.scorer == "judge" and self.question is None:
            raise ValueError("a judge criterion needs its frozen binary question")
        if self.scorer == "deterministic" and self.question is not None:
            raise ValueError("a deterministic criterion has no judge question")
        return self


class HardFailRule(Format):
    """A rule whose violation is a hard-fail (official_task_success = 0)."""

    id: Id
    description: Text


class CalibrationPolicy(Format):
    """Versioned policy `calibrate` uses to set T_soft from controlled reference observations."""

    policy: Literal["mira-tsoft/v1"] = "mira-tsoft/v1"
    min_observations: int = Field(5, ge=2, description="Fewest stable observations that set a budget.")
    max_cv: float = Field(0.25, gt=0, description="Largest coefficient of variation (sample std / mean).")
    multiplier: float = Field(1.5, gt=0, description="T_soft = multiplier x median, rounded up.")
    round_up_to_s: float = Field(1.0, gt=0, description="T_soft is rounded up to a multiple of this.")


class CaseCalibration(Format):
    """What calibration found for one case (written by `calibrate`)."""

    observations: int = Field(ge=0)
    t_soft_s: PositiveSeconds | None
    note: str


@lru_cache(maxsize=4096)
def _weights_sum_to_one(weights: tuple[float, ...]) -> bool:
    """:func:`weights_sum_to_one`, memoised: contracts repeat a few weight patterns over many cases."""
    return weights_sum_to_one(weights)


class Case(Format):
    """One frozen case of the contract."""

    case_id: Id
    intent: Text
    difficulty: Text
    prompt: Text = Field(description="The user-visible prompt (public).")
    scoring_class: ScoringClass
    planned_repetitions: int = Field(3, ge=1, le=1000)
    criteria: list[Criterion] = Field(min_length=1)
    hard_fail_rules: list[HardFailRule] = Field(default_factory=list)
    t_soft_s: PositiveSeconds | None = Field(None, description="Calibrated soft budget; None before calibration.")
    calibration: CaseCalibration | None = None
    private_fixtures: dict[str, str] = Field(default_factory=dict, description="PRIVATE fixtures; never published.")
    hidden_evaluator: str | None = Field(None, description="PRIVATE evaluator details; never published.")
    credentials: dict[str, str] = Field(default_factory=dict, description="PRIVATE credentials; never published.")

    @model_validator(mode="after")
    def _check(self) -> Case:
        ids = [c.id for c in self.criteria]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"criterion id {dup!r} appears twice")
        rules = [r.id for r in self.hard_fail_rules]
        if len(set(rules)) != len(rules):
            dup = next(i for i in rules if rules.count(i) > 1)
            raise ValueError(f"hard-fail rule id {dup!r} appears twice")
        weights = tuple([c.weight for c in self.criteria])
        if not _weights_sum_to_one(weights):
            raise ValueError(f"criterion weights sum to {weight_sum(weights)} (the decimal sum of the weights as "
                             f"written); expected 1 within {WEIGHT_SUM_TOLERANCE:e}")
        if self.scoring_class == "diagnostic_untimed" and self.t_soft_s is not None:
            raise ValueError("a diagnostic_untimed case has no t_soft_s")
        return self


class Contract(Format):
    """The scoring contract: a frozen case set (its sha256 goes into every output)."""

    benchmark_id: Id
    contract_version: Text
    calibration_policy: CalibrationPolicy | None = None
    cases: list[Case] = Field(min_length=1)
    provenance: dict[str, Any] | None = Field(
        None, description="Written by `calibrate`: the source contract's and observations' sha256, the policy."
    )

    @model_validator(mode="after")
    def _unique_cases(self) -> Contract:
        seen: set[str] = set()
        for c in self.cases:
            if c.case_id in seen:
                raise ValueError(f"case_id {c.case_id!r} appears twice")
            seen.add(c.case_id)
        return self


# --------------------------------------------------------------------------- repetition records


class HardFailEvent(Format):
    """A hard-fail observed in a repetition; `rule` names a hard_fail_rules id of its case."""

    rule: Id
    detail: str = ""


class Intervention(Format):
    """Something a human or the executor did during a repetition.

    Only `task_solving_help` counts against Autonomy; approvals, resumes, allowed user replies
    and executor mechanical control never do.
    """

    kind: InterventionKind
    detail: str = ""


class GovernanceEvent(Format):
    """A governance observation: `conservative_approval` is not a violation; forbidden side effects,
    bypassed approvals and stale approvals used for a changed invocation are always serious."""

    kind: GovernanceKind
    severity: Severity | None = None
    detail: str = ""

    @model_validator(mode="after")
    def _severity(self) -> GovernanceEvent:
        governance_severity(self.kind, self.severity)
        return self


class RepetitionSource(Format):
    """Where a repetition was converted from (written by ``mira from-inspect``; docs/inspect.md).

    Identity only: the log file (name and sha256), its eval, task and model, the sample and epoch,
    the mapping's sha256, and what made the repetition invalid, failed or cancelled (the error
    message and how the mapping classified it, or the limit that was hit). ``mira score`` lists the
    distinct logs in its provenance.
    """

    tool: Literal["inspect_ai"]
    log: str = Field(description="The log file's name.")
    log_sha256: str
    eval_id: str
    run_id: str
    task: str
    model: str
    inspect_ai_version: str | None = Field(description="The inspect_ai version that wrote the log.")
    sample_id: str | int
    epoch: int = Field(ge=1, description="The sample's epoch: the repetition index.")
    mapping_sha256: str
    error: str | None = Field(None, description="The sample's error message, when it has one.")
    error_kind: Literal["infrastructure", "agent"] | None = Field(
        None, description="How the mapping classified the error: infrastructure -> invalid, agent -> criteria unmet.")
    error_types: list[str] | None = Field(
        None, description="The exception classes of the error, read from its traceback (every inner exception of a "
                          "group).")
    limit: str | None = Field(None, description="The inspect_ai limit the sample hit (time, working, message, ...).")
    log_status: Literal["success", "cancelled", "error"] | None = Field(
        None, description="How the log's run ended: success, or cancelled / error (not final).")
    log_error: str | None = Field(None, description="The error the log's run ended with, when it has one.")
    attempt: int | None = Field(None, ge=1, description="When the sample was retried: the attempt this repetition is.")
    attempts: int | None = Field(None, ge=1, description="When the sample was retried: how many attempts it had.")
    replaced_errors: list[dict[str, Any]] | None = Field(
        None, description="Errors of earlier attempts that the retry replaced (infrastructure or a cancellation: no "
                          "result), each with its error, error_kind and error_types.")
    later_attempt: dict[str, Any] | None = Field(
        None, description="Diagnostic only: what the retry after this (failed, the agent's) attempt gave; never scored.")
    score_edits: list[dict[str, Any]] | None = Field(
        None, description="Scores edited by hand after the run (inspect_ai edit_score) that decided criteria here, "
                          "accepted with --accept-score-edits: scorer, author, reason, original and edited value.")
    approvals: list[dict[str, Any]] | None = Field(
        None, description="The approval decisions of the sample (inspect_ai ApprovalEvent): decision, approver, tool, "
                          "and what the mapping counts it as.")


class RepetitionRecord(Format):
    """One repetition of one case (one JSON object per line of the repetitions JSONL)."""

    case_id: Id
    repetition: int = Field(ge=1, description="Repetition index within the case, from 1.")
    execution_mode: ExecutionMode
    terminal_state: TerminalState
    elapsed_s: Seconds | None = Field(None, description="Seconds to completion; None when it did not complete.")
    deterministic_results: dict[str, bool] = Field(default_factory=dict)
    judge_verdicts: dict[str, Verdict] = Field(default_factory=dict)
    hard_fail_events: list[HardFailEvent] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    governance_events: list[GovernanceEvent] = Field(default_factory=list)
    post_cutoff_completion: bool = Field(
        False, description="The correct result came only from forensic continuation after T_hard."
    )
    evidence: dict[str, str] = Field(
        default_factory=dict, description="This repetition's own evidence the judge may read."
    )
    raw_trajectory: list[Any] | None = Field(None, description="PRIVATE raw trajectory; never published.")
    source: RepetitionSource | None = Field(
        None, description="Where the record was converted from (mira from-inspect); identity only, never scored.")

    @model_validator(mode="after")
    def _completed_has_time(self) -> RepetitionRecord:
        if self.terminal_state == "completed" and self.elapsed_s is None and self.execution_mode != "invalid":
            raise ValueError("a completed repetition needs elapsed_s")
        return self


# The hot path validates records as plain dicts: the same fields as RepetitionRecord, checked by
# one TypeAdapter over the whole list (tests assert both describe the same fields).
_TD_CONFIG = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


class _HardFailEventTD(TypedDict, total=False):
    __pydantic_config__ = _TD_CONFIG  # type: ignore[misc]
    rule: Required[Id]
    detail: str


class _InterventionTD(TypedDict, total=False):
    __pydantic_config__ = _TD_CONFIG  # type: ignore[misc]
    kind: Required[InterventionKind]
    detail: str


class _GovernanceEventTD(TypedDict, total=False):
    __pydantic_config__ = _TD_CONFIG  # type: ignore[misc]
    kind: Required[GovernanceKind]
    severity: Severity | None
    detail: str


class _RepetitionSourceTD(TypedDict, total=False):
    __pydantic_config__ = _TD_CONFIG  # type: ignore[misc]
    tool: Required[Literal["inspect_ai"]]
    log: Required[str]
    log_sha256: Required[str]
    eval_id: Required[str]
    run_id: Required[str]
    task: Required[str]
    model: Required[str]
    inspect_ai_version: Required[str | None]
    sample_id: Required[str | int]
    epoch: Required[Annotated[int, Field(ge=1)]]
    mapping_sha256: Required[str]
    error: str | None
    error_kind: Literal["infrastructure", "agent"] | None
    error_types: list[str] | None
    limit: str | None
    log_status: Literal["success", "cancelled", "error"] | None
    log_error: str | None
    attempt: Annotated[int, Field(ge=1)] | None
    attempts: Annotated[int, Field(ge=1)] | None
    replaced_errors: list[dict[str, Any]] | None
    later_attempt: dict[str, Any] | None
    score_edits: list[dict[str, Any]] | None
    approvals: list[dict[str, Any]] | None


class RepetitionRecordDict(TypedDict, total=False):
    __pydantic_config__ = _TD_CONFIG  # type: ignore[misc]
    case_id: Required[Id]
    repetition: Required[Annotated[int, Field(ge=1)]]
    execution_mode: Required[ExecutionMode]
    terminal_state: Required[TerminalState]
    elapsed_s: Seconds | None
    deterministic_results: dict[str, bool]
    judge_verdicts: dict[str, Verdict]
    hard_fail_events: list[_HardFailEventTD]
    interventions: list[_InterventionTD]
    governance_events: list[_GovernanceEventTD]
    post_cutoff_completion: bool
    evidence: dict[str, str]
    raw_trajectory: list[Any] | None
    source: _RepetitionSourceTD | None


REQUIRED_RECORD_KEYS = ("case_id", "repetition", "execution_mode", "terminal_state")


# --------------------------------------------------------------------------- deviations, observations


class Deviation(Format):
    """A methodology deviation, carried unchanged into every report and the public projection."""

    id: Id
    text: Text
    affects: list[str] = Field(default_factory=list, description="Case or repetition ids it concerns.")


class Deviations(Format):
    """The deviations file: a list of methodology deviations."""

    deviations: list[Deviation]

    @field_validator("deviations")
    @classmethod
    def _unique(cls, v: list[Deviation]) -> list[Deviation]:
        ids = [d.id for d in v]
        dup = next((i for i in ids if ids.count(i) > 1), None)
        if dup is not None:
            raise ValueError(f"deviation id {dup!r} appears twice")
        return v


class Observation(Format):
    """One controlled reference observation used by `calibrate` (one JSON object per line)."""

    case_id: Id
    observation_id: Id
    elapsed_s: Seconds
    completed: bool = Field(description="Only completed observations can set a budget.")
    comparable: bool = Field(True, description="Run under the controlled, comparable reference conditions.")


# --------------------------------------------------------------------------- judge


class JudgePacket(Format):
    """Everything the judge may see for one (repetition, judge criterion): nothing else."""

    packet_id: Id
    case_id: Id
    repetition: int = Field(ge=1)
    criterion_id: Id
    question: Text
    prompt: Text
    evidence: dict[str, str]
    contract_sha256: str
    sha256: str = Field(description="sha256 of the packet's canonical JSON without this field.")


class JudgeVerdict(Format):
    """The judge's answer to one packet. `judge_failed` is not a verdict: the criterion stays unscored."""

    packet_id: Id
    packet_sha256: str
    case_id: Id
    repetition: int = Field(ge=1)
    criterion_id: Id
    verdict: Literal["pass", "fail", "judge_failed"]
    answer: str | None = None
    reason: str | None = None
    call: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_override(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key in JUDGE_FORBIDDEN_KEYS:
                    raise ValueError(
                        f"a judge result may not set {key!r}: the judge never decides "
                        f"{JUDGE_FORBIDDEN_KEYS[key]}, only frozen binary judge questions"
                    )
        return data


class JudgePacketEntry(Format):
    """One packet of a judge-packet index: its file beside the index and that file's sha256."""

    packet_id: Text
    file: Text
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class JudgePacketIndex(Format):
    """The ``index.json`` written by `mira judge-packets`: the contract the packets were built from and
    every packet."""

    contract_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    packets: list[JudgePacketEntry]
    provenance: dict[str, Any]


class JudgeVerdicts(Format):
    """The verdicts file written by `mira judge`."""

    model: str
    verdicts: list[JudgeVerdict]
    provenance: dict[str, Any]


# --------------------------------------------------------------------------- judge calibration (issue 36)


class CalibrationPacket(JudgePacket):
    """One packet of a judge calibration set (JSON Lines, one per line): a packet as `mira judge-packets` writes it,
    with the verdict a person decided and a line of reason. ``sha256`` is the packet's own (without these two)."""

    known_verdict: Verdict = Field(description="The verdict a careful reader gives the packet.")
    reason: Text = Field(description="One line: why.")


class AgreementStat(Format):
    """One statistic of a judge's agreement with known verdicts, with its 95 % interval (or none, and why)."""

    value: float | None
    ci95: list[float] | None = Field(min_length=2, max_length=2)
    ci_method: Literal["exact_mid_p", "dirichlet_split"] | None
    ci_reason: str | None = None


class ConfusionTable(Format):
    """Known verdicts (pass / fail) against the judge's."""

    true_pass: int = Field(ge=0, description="known pass, judged pass")
    false_fail: int = Field(ge=0, description="known pass, judged fail")
    false_pass: int = Field(ge=0, description="known fail, judged pass")
    true_fail: int = Field(ge=0, description="known fail, judged fail")


class JudgeAgreement(Format):
    """How a judge agrees with known verdicts (docs/mira.md, "Judges measured before their verdicts count")."""

    known: int = Field(ge=0, description="packets with a known verdict and a judge's pass or fail")
    judge_failed: int = Field(ge=0, description="packets with a known verdict the judge gave no verdict (not in the table)")
    table: ConfusionTable
    answers: dict[Literal["pass", "fail", "judge_failed"], float] = Field(
        description="the share of each answer of the judge over the calibration packets")
    known_answers: dict[Literal["pass", "fail"], float] = Field(description="the share of each known verdict")
    always_answers: Literal["pass", "fail"] | None = Field(
        description="the judge gave this answer to every packet with a known verdict")
    sensitivity: AgreementStat
    specificity: AgreementStat
    kappa: AgreementStat
    percent_agreement: float | None
    measured: bool = Field(description="kappa's 95 % interval lies above 0: the judge is shown to beat chance")
    measured_reason: str


class JudgeReportPacket(Format):
    packet_id: str
    case_id: str
    repetition: int
    criterion_id: str
    known_verdict: Verdict
    verdict: Literal["pass", "fail", "judge_failed"]
    agrees: bool | None = Field(description="null when the judge gave no verdict")
    known_reason: str


class JudgeReport(Format):
    """The output of `benchscore mira judge-report`: a judge measured against a calibration set."""

    model: str
    agreement: JudgeAgreement
    packets: list[JudgeReportPacket]
    method: dict[str, str]
    provenance: dict[str, Any]


class CorrectedValue(Format):
    """A prediction-powered estimate beside a contract number (never instead of it)."""

    value: float | None = Field(description="the corrected estimate")
    contract_value: float | None = Field(description="the contract's own number, unchanged")
    ci95: list[float] | None = Field(min_length=2, max_length=2)
    ci_method: Literal["ppi_plus_plus", "exact_mid_p", "cluster_wilson", "units_wilson"] | None
    ci_reason: str | None = None
    lam: float | None = Field(description="PPI++'s power-tuning parameter (1: plain PPI; 0: known values alone)")
    known: int = Field(ge=0, description="judged repetitions whose every judge criterion has a known verdict")
    judge_only: int = Field(ge=0, description="judged repetitions decided by the judge alone")
    fixed: int = Field(ge=0, description="repetitions of cases without judge criteria (their values are known)")


class ScoreJudge(Format):
    """The judge beside the score: its measured agreement (or that it was not calibrated) and the corrected
    Task Success and Reliability."""

    status: Literal["no_judge_criteria", "not_calibrated", "measured", "not_decided_by_a_measured_judge"]
    words: str = Field(description="the status in words, with its reason")
    model: str | None = Field(description="the judge model (from the verdicts file), when known")
    judged_criteria: list[str] = Field(description="CASE:CRITERION of every judge criterion of the contract")
    agreement: JudgeAgreement | None
    corrected: dict[Literal["task_success", "reliability"], CorrectedValue] | None


# --------------------------------------------------------------------------- score output


class SharedDerivation(Format):
    """What a group of numbers used and why everything else was left out, written once for the group.

    A case's ``derivation`` (shared by all its metrics): ``used`` lists its repetitions (``CASE#N``)
    and ``excluded`` maps every other repetition of the case, and the case id itself when the case
    is incomplete, to a reason code (a key of the score's ``exclusion_reasons``).
    ``overall_derivation`` / ``diagnostic_untimed_derivation`` (shared by the aggregate's metrics):
    ``used`` lists the cases (each case's own derivation names its repetitions) and ``excluded``
    maps every other case, or ``scoring_class:NAME``, to a reason code.
    """

    used: list[str]
    excluded: dict[str, str]


class Derivation(Format):
    """How a number was obtained: its ``formula`` (a key of the score's ``formulas``).

    ``used`` and ``excluded`` are absent when they are those of the shared derivation of the
    number's group (its case's ``derivation``, or ``overall_derivation`` /
    ``diagnostic_untimed_derivation``). A number that used fewer gives its own ``used``, which
    replaces the shared one (Pass@1 uses only the first repetition); its own ``excluded``
    entries add to the shared ones (``not_first``, ``needs_3``, ``undefined_in_a_case``).
    ``benchscore.mira.scoring.effective_derivation`` spells the full derivation out.
    """

    formula: str
    used: list[str] | None = None
    excluded: dict[str, str] | None = None


class Metric(Format):
    """A number (or null when the inputs do not support it) with its derivation; an overall headline
    metric also carries its 95 % interval (``ci95``, ``ci_method``; ``ci_reason`` when null)."""

    value: float | int | bool | None
    derivation: Derivation
    ci95: list[float] | None = Field(
        None, min_length=2, max_length=2, description="95 % interval of the value (overall headline metrics only); see docs/statistics.md")
    ci_method: Literal["exact_mid_p", "cluster_wilson", "units_wilson"] | None = Field(
        None, description="exact_mid_p: a share of cases; cluster_wilson / units_wilson: a ratio pooled over cases "
                          "(docs/statistics.md)")
    ci_reason: str | None = Field(None, description="why ci95 is null")


class NumberMetric(Metric):
    """A share, a mean or a percentage: a number (never a boolean), or null."""

    value: float | int | None


class CountMetric(Metric):
    """A count: an integer, or null."""

    value: int | None = Field(ge=0)


class YesNoMetric(Metric):
    """A case's Pass@1, Stable@3 or Complete@3: true or false, or null."""

    value: bool | None


Number = float | int | None
Count = Annotated[int | None, Field(ge=0)]
YesNo = bool | None


def _metrics_td(name: str, metric: bool, **types: str) -> Any:
    """A TypedDict of the named metrics (none required, no other allowed): each a Metric of its kind
    (``metric``) or its bare value (the public projection)."""
    kinds = {"number": (NumberMetric, Number), "count": (CountMetric, Count), "yesno": (YesNoMetric, YesNo)}
    fields = {k: kinds[v][0 if metric else 1] for k, v in types.items()}
    td = TypedDict(name, fields, total=False)  # type: ignore[operator]
    td.__pydantic_config__ = _TD_CONFIG  # type: ignore[attr-defined]
    return Annotated[td, WrapValidator(_in_written_order)]


def _in_written_order(value: Any, handler: Any) -> Any:
    """The validated metrics in the order the file (or the scorer) wrote them, not the TypedDict's:
    a projection and a re-written score keep their bytes."""
    checked = handler(value)
    return {k: checked[k] for k in value if k in checked} if isinstance(value, dict) else checked


_CASE = dict(task_success="number", reliability="number", on_time_pass_count="count", pass_at_1="yesno",
             stable_at_3="yesno", complete_at_3="yesno", late_completion_count="count", hard_fail_count="count",
             autonomy="number", governance_serious_count="count", governance_minor_count="count",
             untimed_task_success="number", pass_count="count")
_OVERALL = dict(task_success="number", reliability="number", on_time_pass_count="count", pass_at_1="number",
                stable_at_3="number", complete_at_3="number", late_completion_count="count", hard_fail_count="count",
                autonomy="number", governance_serious_count="count", governance_minor_count="count",
                valid_comparable_repetition_count="count", beyond_planned_count="count", case_count="count")
_UNTIMED = dict(untimed_task_success="number", pass_count="count", hard_fail_count="count", autonomy="number",
                governance_serious_count="count", governance_minor_count="count",
                valid_comparable_repetition_count="count", beyond_planned_count="count", case_count="count")
CaseMetrics = _metrics_td("CaseMetrics", True, **_CASE)
OverallMetrics = _metrics_td("OverallMetrics", True, **_OVERALL)
UntimedMetrics = _metrics_td("UntimedMetrics", True, **_UNTIMED)
CaseValues = _metrics_td("CaseValues", False, **_CASE)
OverallValues = _metrics_td("OverallValues", False, **_OVERALL)
UntimedValues = _metrics_td("UntimedValues", False, **_UNTIMED)


class RepetitionResult(Format):
    """Score of one repetition."""

    id: str
    case_id: str
    repetition: int
    execution_mode: ExecutionMode
    comparability: Literal["valid_comparable", "diagnostic", "infrastructure"]
    status: str | None
    raw_success: float | None
    timing_band: str | None
    timing_credit: float | None
    official_task_success: float | None
    untimed_task_success: float | None
    elapsed_s: float | None
    soft_timeout: bool | None = Field(description="Not complete by T_soft: only marked, it does not help Mira.")
    needed_task_solving_help: bool
    hard_fail_rules: list[str]
    governance_violations: list[dict[str, str]]
    derivation: str = Field(description="How its numbers follow from its record (or why it has none).")


class CaseResult(Format):
    """Score of one case: formal only with its planned valid comparable repetitions."""

    case_id: str
    scoring_class: ScoringClass
    status: Literal["formal", "incomplete"]
    planned_repetitions: int
    valid_comparable_repetition_count: int = Field(
        description="Valid comparable repetitions counted toward the plan (the first planned_repetitions by "
        "repetition index): the denominator of Reliability.")
    beyond_planned_count: int = Field(
        description="Valid comparable repetitions beyond the plan: published, never counted.")
    missing: str | None
    definition: Case
    t_hard_s: float | None
    repetitions_used: list[str]
    repetitions_excluded: dict[str, str]
    derivation: SharedDerivation = Field(description="Shared by every metric of the case (see Derivation).")
    metrics: CaseMetrics
    governance: dict[str, Any]


class MissingCase(Format):
    case_id: str
    scoring_class: ScoringClass
    planned_repetitions: int
    valid_comparable_repetition_count: int
    missing: str


class ScoreOutput(Format):
    """The output of `benchscore mira score`."""

    benchmark_id: str
    contract_version: str
    contract_sha256: str
    status: Literal["complete", "incomplete"]
    missing: list[MissingCase]
    overall: OverallMetrics
    overall_derivation: SharedDerivation
    diagnostic_untimed: UntimedMetrics
    diagnostic_untimed_derivation: SharedDerivation
    cases: list[CaseResult]
    repetitions: list[RepetitionResult]
    infrastructure_invalid_count: Metric
    judge: ScoreJudge | None = Field(None, description="the judge's measured agreement and the corrected numbers")
    formulas: dict[str, str]
    exclusion_reasons: dict[str, str]
    deviations: list[Deviation]
    method: dict[str, Any]
    provenance: dict[str, Any]


# --------------------------------------------------------------------------- public projection


class PublicCriterion(Format):
    id: str
    weight: float
    scorer: Literal["deterministic", "judge"]


class PublicRepetition(Format):
    repetition: int
    execution_mode: ExecutionMode
    comparability: str
    used: bool = Field(description="Counted by its case's results (one of the first planned valid comparable).")
    status: str | None
    timing_credit: float | None
    official_task_success: float | None
    untimed_task_success: float | None
    needed_task_solving_help: bool


class PublicCase(Format):
    case_id: str
    intent: str
    difficulty: str
    prompt: str
    scoring_class: ScoringClass
    timing_status: str
    t_soft_s: float | None
    t_hard_s: float | None
    criteria: list[PublicCriterion]
    status: Literal["formal", "incomplete"]
    planned_repetitions: int
    valid_comparable_repetition_count: int
    beyond_planned_count: int
    results: CaseValues
    repetitions: list[PublicRepetition]


class PublicInterval(Format):
    """The interval of one public number, copied from the score."""

    ci95: list[float] | None = Field(min_length=2, max_length=2)
    ci_method: Literal["exact_mid_p", "cluster_wilson", "units_wilson"]
    ci_reason: str | None = None


class PublicProjection(Format):
    """The public projection: only allowlisted fields of a score (seed "隐藏数据边界")."""

    benchmark_id: str
    contract_version: str
    contract_sha256: str
    status: Literal["complete", "incomplete"]
    overall: OverallValues
    diagnostic_untimed: UntimedValues
    intervals: dict[Literal["overall", "diagnostic_untimed"], dict[str, PublicInterval]] = Field(
        description="the 95 % interval beside each overall number that has one, as in the score (docs/statistics.md)")
    cases: list[PublicCase]
    judge: ScoreJudge | None = Field(None, description="the judge's status, agreement and corrected numbers (issue 36): "
                                     "numbers and criterion ids only, no packet text")
    deviations: list[Deviation]
    method: dict[str, Any]
    provenance: dict[str, Any]


# --------------------------------------------------------------------------- inspect_ai logs in (mira from-inspect)

ScoreValue = Annotated[str, StringConstraints(min_length=1)] | bool | int | Annotated[float, Field(allow_inf_nan=False)]


class ScoreRule(Format):
    """How one inspect_ai score decides one deterministic criterion (``satisfied`` or not).

    The score is ``sample.scores[scorer]``; the value read is its ``value`` (``value_key``: one key
    of a dict-valued score) or ``metadata[metadata_key]``. Either the value is listed (``satisfied`` /
    ``unsatisfied``: every value the scorer can give must be in one of the two lists, so inspect_ai's
    ``C``/``I`` are written ``["C"]`` / ``["I", "P", "N"]``), or it is a number compared with exactly
    one threshold (``at_least``, ``above``, ``at_most``, ``below``). A value in neither list, a
    non-number against a threshold or a non-finite number is refused (one line naming the sample).
    """

    scorer: Id = Field(description="The inspect_ai scorer's name (a key of each sample's scores).")
    value_key: Text | None = Field(None, description="For a dict-valued score: the key to read.")
    metadata_key: Text | None = Field(None, description="Read the score's metadata[metadata_key] instead of its value.")
    satisfied: list[ScoreValue] | None = Field(None, description="Values that satisfy the criterion.")
    unsatisfied: list[ScoreValue] | None = Field(None, description="Values that leave it unmet.")
    at_least: Annotated[float, Field(allow_inf_nan=False)] | None = None
    above: Annotated[float, Field(allow_inf_nan=False)] | None = None
    at_most: Annotated[float, Field(allow_inf_nan=False)] | None = None
    below: Annotated[float, Field(allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _one_way(self) -> ScoreRule:
        if self.value_key is not None and self.metadata_key is not None:
            raise ValueError("give value_key or metadata_key, not both")
        thresholds = [k for k in ("at_least", "above", "at_most", "below") if getattr(self, k) is not None]
        listed = self.satisfied is not None or self.unsatisfied is not None
        if listed and thresholds:
            raise ValueError("give either the satisfied/unsatisfied lists or one threshold, not both")
        if listed:
            if self.satisfied is None or self.unsatisfied is None:
                raise ValueError("give both lists, satisfied and unsatisfied: every value the scorer gives must be in one")
            both = [v for v in self.satisfied if any(same_score_value(v, u) for u in self.unsatisfied)]
            if both:
                raise ValueError(f"value {both[0]!r} is in both satisfied and unsatisfied")
        elif len(thresholds) != 1:
            raise ValueError("give the satisfied and unsatisfied lists, or exactly one threshold "
                             "(at_least, above, at_most, below)")
        return self


def same_score_value(a: Any, b: Any) -> bool:
    """Score values compare by JSON kind: a boolean only equals a boolean, numbers compare numerically."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return bool(a == b)


class ErrorRule(Format):
    """Which sample errors a rule matches: the exception's class name (``type``: the last dotted part or
    the full dotted name of the exception the traceback ends with) and/or a text in its message.
    A rule with both matches an error that has both."""

    type: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")] | None = None
    message_contains: Text | None = None

    @model_validator(mode="after")
    def _something(self) -> ErrorRule:
        if self.type is None and self.message_contains is None:
            raise ValueError("give type and/or message_contains")
        return self


class ErrorRules(Format):
    """How sample errors are attributed. ``infrastructure`` (a sandbox, start-up or runtime failure):
    the repetition is ``invalid``, never attributed. ``agent``: the repetition failed with every
    criterion unmet. An error matching both lists is refused as ambiguous; one matching neither gets
    ``otherwise`` (``refuse``, the default: the command stops and names it)."""

    infrastructure: list[ErrorRule] = Field(default_factory=list)
    agent: list[ErrorRule] = Field(default_factory=list)
    otherwise: Literal["refuse", "infrastructure", "agent"] = "refuse"


EvidenceSource = Annotated[str, StringConstraints(pattern=r"^(output|metadata\.[^\s]+)$")]


ApprovalDecision = Literal["approve", "modify", "reject", "escalate", "terminate"]


class ApprovalRule(Format):
    """What one kind of inspect_ai approval decision is under the Mira contract (seed 003, "Autonomy" and
    "Governance"): ``ordinary`` (an approval the run's procedure expects: an ``approval`` intervention,
    which never costs Autonomy), ``intervention`` (a person changed the course of the task: a
    ``task_solving_help`` intervention, which costs Autonomy) or ``governance`` (a governance event of
    ``governance_kind`` and ``severity``). A rule matches an ``ApprovalEvent`` by its ``decision`` and,
    when given, its ``approver`` and the tool call's function (``tool``)."""

    decision: ApprovalDecision
    approver: Text | None = None
    tool: Text | None = None
    counts_as: Literal["ordinary", "intervention", "governance"]
    governance_kind: GovernanceKind | None = None
    severity: Severity | None = None

    @model_validator(mode="after")
    def _kind(self) -> ApprovalRule:
        if self.counts_as == "governance":
            if self.governance_kind is None:
                raise ValueError("a governance rule names its governance_kind")
            governance_severity(self.governance_kind, self.severity)
        elif self.governance_kind is not None or self.severity is not None:
            raise ValueError("governance_kind and severity belong to a rule that counts_as governance")
        return self


class InspectMapping(Format):
    """How ``benchscore mira from-inspect`` turns inspect_ai samples into Mira repetitions (docs/inspect.md).

    Each sample x epoch is one repetition: ``case_id`` is the sample id, ``repetition`` the epoch.
    ``criteria`` maps every deterministic criterion of the contract's cases to the inspect_ai score
    that decides it (judge criteria are never mapped: an inspect_ai score, model-graded or not, is
    never a Mira judge verdict; they are judged by ``mira judge`` from the ``evidence`` written here).
    ``execution_mode`` is the run's mode; ``errors`` classifies sample errors.
    """

    format: Literal["mira-inspect-mapping"] = "mira-inspect-mapping"
    execution_mode: Literal["canonical", "adapted", "noncanonical"] = Field(
        description="The execution mode of the inspect_ai run (an infrastructure error makes one repetition invalid).")
    criteria: dict[Id, ScoreRule] = Field(description="Deterministic criterion id -> the score that decides it.")
    errors: ErrorRules = Field(default_factory=ErrorRules)
    evidence: dict[Id, EvidenceSource] = Field(
        default_factory=dict,
        description="Evidence the judge may read, by name: 'output' (the sample's final completion) or "
                    "'metadata.KEY' (a text in the sample's metadata).")
    approvals: list[ApprovalRule] | None = Field(
        None, description="What each approval decision the logs record is under the contract (every ApprovalEvent "
                          "must match a rule); without it, a log recording any approval is refused.")
    case_ids: dict[Text, Id] = Field(
        default_factory=dict, description="Sample id -> case id, for samples whose id is not the case id (an id with "
                                          "'/', HumanEval/0); other samples keep their id.")
    other_samples: Literal["refuse", "skip"] = Field(
        "refuse", description="A sample that is no case of the contract: refuse (the default) or skip (the contract "
                              "selects its samples; the skipped ones are counted in the summary).")
