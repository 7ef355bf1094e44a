"""benchscore.tcsexam: the TCSExam composite index (30P+30S+30C+10O) and fixed-reference Solver scores.

Seed: 000_1a69c1833059069f.txt. Public API re-exported here, each name imported on first use
(PEP 562), so ``import benchscore.tcsexam`` (and the ``tcsexam`` command's start-up) loads no
numpy, scipy or pydantic. The modules are: ``formulas`` (pure maths), ``formats`` (pydantic file
formats), ``records`` (instance-record parsing), ``reference`` (references and suites),
``datafolder`` (named suites and references), ``scoring`` (solver-score), ``index`` (score),
``commands`` (what each command does, as functions), ``cli`` (the ``tcsexam`` commands).
"""

from __future__ import annotations

from benchscore.common.lazy import lazy_exports

_EXPORTS = {
    "AttemptRow": "formats",
    "Cohort": "formats",
    "IndexOutput": "formats",
    "InstanceRecord": "formats",
    "Reference": "formats",
    "SolverScoreOutput": "formats",
    "SuiteManifest": "formats",
    "TaskReference": "formats",
    "METRIC_ID": "formulas",
    "SOLVER_METRIC_ID": "formulas",
    "TRACKS": "formulas",
    "WEIGHTS": "formulas",
    "instance_scale": "formulas",
    "instance_score": "formulas",
    "instance_z": "formulas",
    "reference_stats": "formulas",
    "resolve_status": "formulas",
    "scored_instance_scores": "formulas",
    "task_mean": "formulas",
    "task_score": "formulas",
    "tcsexam_index": "formulas",
    "track_mean": "formulas",
    "worst_status": "formulas",
    "load_cohort": "index",
    "read_attempts": "index",
    "score_cohort": "index",
    "RecordColumns": "records",
    "parse_records": "records",
    "LoadedReference": "reference",
    "build_task_reference": "reference",
    "load_reference": "reference",
    "load_suite": "reference",
    "resolve": "datafolder",
    "SolverScore": "scoring",
    "score_columns": "scoring",
    "score_task": "scoring",
    "solver_score": "scoring",
    "solver_score_result": "scoring",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
