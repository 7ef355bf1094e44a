"""TCSExam file formats (pydantic). Each model documents one input or output file.

``benchscore schema NAME`` prints the JSON Schema of each (names in :data:`FORMATS`).
Consistency rules that span fields (reference instances vs ``unscored_reference_instances``,
attempts vs suite and cohort) are checked where the file is loaded, so that each error
names the exact field; see ``reference.py`` and ``index.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, Strict, StrictBool, field_validator

from benchscore.common.models import Format, Interval

Name = Annotated[str, Field(min_length=1, pattern=r"^\S(?:[\s\S]*\S)?$")]
Number = Annotated[float, Strict()]  # a JSON number (int or float), never a bool or a string

#: record statuses: ``ok`` is a valid, evaluated result; the others are completed solver failures (score 0)
OK_STATUS = "ok"
FAILURE_STATUSES = ("timeout", "invalid", "certificate_failed", "crash")
#: infrastructure statuses: incomplete observations, never scored (fix the judging input first)
INFRA_STATUSES = ("infra_error", "missing")
ADOPTION_STATUSES = ("selected", "selected_provisional", "excluded")
SOLVER_PROTOCOLS = ("online", "offline")
SCORE_TYPES = ("fixed_reference_relative", "original_task_score")


class ScaleFloors(Format):
    """The two scale floors of a fixed reference: ``scale = max(s, relative*|mu|, absolute)``."""

    relative: Annotated[float, Field(ge=0)]
    absolute: Annotated[float, Field(gt=0)]


class TaskReference(Format):
    """One reference task: its kind, optimisation direction and frozen per-instance run values.

    ``kind: objective`` values are objective values; ``kind: solve`` values are 1 (solved) or 0.
    ``null`` marks an unusable run. An instance with fewer than two usable values is not scored
    and must be listed in the reference's ``unscored_reference_instances``.
    """

    kind: Literal["objective", "solve"]
    direction: Literal["maximize", "minimize"]
    instances: dict[Name, list[Number | None]] = Field(min_length=1)


class Reference(Format):
    """A fixed reference (e.g. ``paper-k3-fixed-260925``): versioned by ``reference_id``."""

    reference_id: Name
    suite: Name
    scale_floors: ScaleFloors
    tasks: dict[Name, TaskReference] = Field(min_length=1)
    unscored_reference_instances: dict[Name, list[Name]] = Field(default_factory=dict)
    provenance: dict[str, Any] | None = None


class InstanceRecord(Format):
    """One final instance record (an element of the records JSON list).

    ``status: ok`` needs a finite ``A`` (objective tasks) or ``A`` in {0, 1} / boolean ``solved``
    (solve tasks). ``timeout``, ``invalid``, ``certificate_failed`` and ``crash`` score 0.
    ``infra_error``, ``missing`` and any other status are errors: fix the judging input first.
    """

    instance: Name
    status: Name
    A: Number | None = None
    solved: StrictBool | None = None


class Tracks(Format):
    """Task ids of each track; every track needs at least one task; an id appears once in a suite."""

    theorem: list[Name] = Field(min_length=1)
    solver: list[Name] = Field(min_length=1)
    construction: list[Name] = Field(min_length=1)
    conjecture: list[Name] = Field(min_length=1)


class SuiteManifest(Format):
    """A task suite (``lite``, ``full``, ``demo-lite``, ...): the task ids of each track."""

    suite: Name
    tracks: Tracks


class ModelPlan(Format):
    """What is planned for one model: the number of adopted attempts per task."""

    attempts_per_task: Annotated[int, Field(ge=1, strict=True)]


class Cohort(Format):
    """cohort.json: the suite, Solver protocol, fixed reference, each model's planned repeats and the
    adoption rule, all declared before aggregating (seed: 汇总前声明计划重复次数和采用规则)."""

    suite: Name
    solver_protocol: Literal["online", "offline"]
    solver_reference_id: Name
    models: dict[Name, ModelPlan] = Field(min_length=1)
    adoption_rule: Name = Field(
        description="How adopted attempts are chosen and when one replaces another (free text, required)."
    )


class AttemptRow(Format):
    """One row of attempts.csv (all values arrive as CSV strings; empty optional cells are null).

    ``score`` is what the index aggregates (theorem and conjecture: the 0/1 conversion);
    ``raw_reward`` is the task judge's raw reward, kept beside it and never aggregated.
    """

    model: Name
    track: Literal["theorem", "solver", "construction", "conjecture"]
    item: Name
    attempt: Name
    score: float | None
    raw_reward: float | None = None
    adoption_status: Literal["selected", "selected_provisional", "excluded"]
    score_status: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    score_type: Literal["fixed_reference_relative", "original_task_score"]
    solver_protocol: Literal["online", "offline"] | None = None
    reference_id: Name | None = None
    evidence: Name | None = None
    reason: str | None = None

    @field_validator("score", "raw_reward", mode="before")
    @classmethod
    def _empty_is_null(cls, value: Any) -> Any:
        return None if value == "" else value


# ---- outputs -------------------------------------------------------------------------------


class InstanceScore(Format):
    """Per-instance result in a solver-score output."""

    score: float
    A: float | None
    mu: float
    scale: float
    z: float | None
    status: str


class SolverScoreOutput(Format):
    """Output of ``tcsexam solver-score``: fill ``relative_score`` into the attempts table."""

    task: str
    kind: Literal["objective", "solve"]
    direction: Literal["maximize", "minimize"]
    relative_score: float
    scored_instance_count: int
    intervals: dict[Literal["relative_score"], Interval] | None = Field(
        None, description="the 95 % interval of relative_score over the scored instances (method t); absent "
                          "from outputs written before benchscore wrote intervals")
    instances: dict[str, InstanceScore]
    unscored_instances: list[str]
    reference_id: str
    reference_sha256: str
    provenance: dict[str, Any]


class TrackCoverage(Format):
    """Counts behind a model's status, for one track or the total."""

    tasks_planned: int
    tasks_complete: int
    attempts_planned: int
    attempts_adopted: int
    attempts_adopted_valid: int


class AdoptedAttempt(Format):
    """An adopted attempt in a ``tcsexam score`` output: the aggregated ``score`` beside the judge's
    ``raw_reward`` (null when the table gives none); ``line`` is its line in attempts.csv."""

    track: str
    item: str
    attempt: str
    adoption_status: Literal["selected", "selected_provisional"]
    score: float | None
    raw_reward: float | None
    score_status: str
    line: int


class ExcludedAttempt(Format):
    """An excluded attempt in a ``tcsexam score`` output (kept, never aggregated) with its reason
    (null when none was recorded: a problem that makes the result provisional at least)."""

    track: str
    item: str
    attempt: str
    score: float | None
    raw_reward: float | None
    score_status: str
    reason: str | None
    line: int


class ModelIntervals(Format):
    """The 95 % intervals of a model's index (``mover``: the track means' intervals combined) and track
    means (tasks as units: docs/statistics.md)."""

    index: Interval
    track_means: dict[str, Interval]


class ModelResult(Format):
    """One model's result in a ``tcsexam score`` output; ``index`` is null unless complete or provisional."""

    status: Literal["complete", "provisional", "incomplete"]
    index: float | None
    track_means: dict[str, float | None]
    intervals: ModelIntervals | None = Field(
        None, description="95 % intervals of the index and the track means (absent from older outputs)")
    task_means: dict[str, dict[str, float | None]]
    coverage: dict[str, TrackCoverage]
    problems: list[str]
    adopted_attempts: list[AdoptedAttempt]
    excluded_attempts: list[ExcludedAttempt]


class IndexOutput(Format):
    """Output of ``tcsexam score``: the index ``30P + 30S + 30C + 10O`` for each model of a cohort."""

    status: Literal["complete", "provisional", "incomplete"]
    models: dict[str, ModelResult]
    suite: str
    solver_protocol: Literal["online", "offline"]
    solver_reference_id: str
    adoption_rule: str
    metric_id: str
    provenance: dict[str, Any]


FORMATS: dict[str, type[Format]] = {
    "tcsexam-reference": Reference,
    "tcsexam-instance-record": InstanceRecord,
    "tcsexam-suite": SuiteManifest,
    "tcsexam-cohort": Cohort,
    "tcsexam-attempt-row": AttemptRow,
    "tcsexam-solver-score-output": SolverScoreOutput,
    "tcsexam-index-output": IndexOutput,
}
