"""benchscore.tcsexam: the TCSExam composite index (30P+30S+30C+10O) and fixed-reference Solver scores.

Seed: 000_1a69c1833059069f.txt. Public API re-exported here; the modules are:
``formulas`` (pure maths), ``formats`` (pydantic file formats), ``records`` (instance-record
parsing), ``reference`` (references and suites), ``scoring`` (solver-score), ``index`` (score),
``cli`` (the ``tcsexam`` commands).
"""

from .formats import (
    AttemptRow,
    Cohort,
    IndexOutput,
    InstanceRecord,
    Reference,
    SolverScoreOutput,
    SuiteManifest,
    TaskReference,
)
from .formulas import (
    METRIC_ID,
    SOLVER_METRIC_ID,
    TRACKS,
    WEIGHTS,
    instance_scale,
    instance_score,
    instance_z,
    reference_stats,
    resolve_status,
    scored_instance_scores,
    task_mean,
    task_score,
    tcsexam_index,
    track_mean,
    worst_status,
)
from .index import load_cohort, read_attempts, score_cohort
from .records import RecordColumns, parse_records
from .reference import LoadedReference, build_task_reference, load_reference, load_suite, resolve
from .scoring import SolverScore, score_columns, score_task, solver_score, solver_score_result

__all__ = [
    "METRIC_ID",
    "SOLVER_METRIC_ID",
    "TRACKS",
    "WEIGHTS",
    "AttemptRow",
    "Cohort",
    "IndexOutput",
    "InstanceRecord",
    "LoadedReference",
    "RecordColumns",
    "Reference",
    "SolverScore",
    "SolverScoreOutput",
    "SuiteManifest",
    "TaskReference",
    "build_task_reference",
    "instance_scale",
    "instance_score",
    "instance_z",
    "load_cohort",
    "load_reference",
    "load_suite",
    "parse_records",
    "read_attempts",
    "reference_stats",
    "resolve",
    "resolve_status",
    "score_cohort",
    "score_columns",
    "score_task",
    "scored_instance_scores",
    "solver_score",
    "solver_score_result",
    "task_mean",
    "task_score",
    "tcsexam_index",
    "track_mean",
    "worst_status",
]
