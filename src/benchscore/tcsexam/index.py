"""tcsexam score wiring: suite manifest + cohort + attempts table -> the composite index per model.

The arithmetic lives in :mod:`.formulas`; this module checks the table against the suite and the
cohort (refusing what the seed forbids), finds gaps, and assembles the output.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from benchscore.common.errors import BadInput
from benchscore.common.provenance import sha256_bytes
from benchscore.common.readers import (
    loads_json,
    parse_finite_float,
    read_csv,
    read_json_bytes,
    validate,
)

from .formats import AttemptRow, Cohort, SuiteManifest
from .formulas import METRIC_ID, TRACKS, resolve_status, task_mean, tcsexam_index, track_mean, worst_status
from .intervals import model_intervals

REQUIRED_COLUMNS = (
    "model",
    "track",
    "item",
    "attempt",
    "score",
    "adoption_status",
    "score_status",
    "score_type",
    "solver_protocol",
)
#: raw_reward: the task judge's raw reward, kept beside the score (seed: 评测输出保留任务判分器的原始奖励)
OPTIONAL_COLUMNS = ("raw_reward", "reference_id", "evidence", "reason")
ADOPTED = ("selected", "selected_provisional")
#: the largest construction reward accepted: far above any real reward (the seed sets no upper
#: bound), and low enough that summing attempts (math.fsum) and 30 * C + 70 stay finite
MAX_CONSTRUCTION_SCORE = 1e300


@dataclass(frozen=True)
class Attempt:
    line: int
    row: AttemptRow
    score_text: str

    @property
    def where(self) -> str:
        return f"{self.row.track}/{self.row.item} attempt {self.row.attempt!r} (line {self.line})"


def read_attempts(path: str | Path) -> list[Attempt]:
    """Read attempts.csv: the seed's columns plus optional raw_reward, reference_id, evidence, reason."""
    rows = read_csv(path, required=REQUIRED_COLUMNS, optional=OPTIONAL_COLUMNS)
    out = []
    for raw in rows:
        line = int(raw.pop("__line__"))
        record = f"line {line}"
        data: dict[str, Any] = {k: (v if v != "" else None) for k, v in raw.items()}
        score_text = raw.get("score", "")
        for field in ("score", "raw_reward"):
            if raw.get(field, "") != "":
                data[field] = parse_finite_float(raw[field], source=path, record=record, field=field)
        out.append(Attempt(line, validate(AttemptRow, data, source=path, record=record), score_text))
    return out


def _rounding_tolerance(text: str) -> float:
    """Half a unit in the last written decimal of ``text`` (a score copied with rounding matches)."""
    try:
        exponent = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    if not isinstance(exponent, int):
        return 0.0
    return 0.5 * 10.0**exponent


def _check_evidence(att: Attempt, attempts_path: Path, cohort: Cohort) -> str:
    """Check a solver row's evidence (a solver-score output); returns the evidence file's sha256."""
    row = att.row
    record = f"line {att.line}"
    ev_path = Path(row.evidence or "")
    if not ev_path.is_absolute():
        ev_path = attempts_path.parent / ev_path
    raw = read_json_bytes(ev_path)
    data = loads_json(raw, ev_path)
    if not isinstance(data, dict):
        raise BadInput("evidence is not a solver-score output (expected an object)", source=ev_path)
    for key, kind in (("reference_id", str), ("task", str), ("relative_score", float | int)):
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            raise BadInput("evidence is not a solver-score output", source=ev_path, field=key)
    if data["reference_id"] != cohort.solver_reference_id:
        raise BadInput(
            f"evidence {row.evidence!r} was scored against reference {data['reference_id']!r}, "
            f"the cohort declares {cohort.solver_reference_id!r}",
            source=attempts_path,
            record=record,
            field="evidence",
        )
    if data["task"] != row.item:
        raise BadInput(
            f"evidence {row.evidence!r} scores task {data['task']!r}, not {row.item!r}",
            source=attempts_path,
            record=record,
            field="evidence",
        )
    if row.score is not None and abs(row.score - data["relative_score"]) > _rounding_tolerance(
        att.score_text
    ):
        raise BadInput(
            f"score {att.score_text} is not the evidence's relative_score {data['relative_score']!r}",
            source=attempts_path,
            record=record,
            field="score",
        )
    return sha256_bytes(raw)


def check_attempts(
    attempts: list[Attempt], manifest: SuiteManifest, cohort: Cohort, attempts_path: Path
) -> dict[str, str]:
    """Refuse (one line, exit 2) what the seed forbids; gaps are not errors but problems.

    Returns the sha256 of every evidence file named by an adopted solver row (by its CSV value).
    """
    evidence: dict[str, str] = {}
    track_items = {t: set(getattr(manifest.tracks, t)) for t in TRACKS}
    seen: dict[tuple[str, str, str, str], int] = {}
    adopted: dict[tuple[str, str, str], int] = defaultdict(int)
    for att in attempts:
        row = att.row
        record = f"line {att.line}"

        def bad(msg: str, field: str, record: str = record) -> BadInput:
            return BadInput(msg, source=attempts_path, record=record, field=field)

        if row.model not in cohort.models:
            raise bad(f"model {row.model!r} is not in the cohort", "model")
        if row.item not in track_items[row.track]:
            raise bad(f"item {row.item!r} is not a {row.track} task of suite {manifest.suite!r}", "item")
        key = (row.model, row.track, row.item, row.attempt)
        if key in seen:
            raise bad(
                f"attempt {row.attempt!r} of {row.model}/{row.track}/{row.item} repeats line {seen[key]}",
                "attempt",
            )
        seen[key] = att.line
        if row.score_status == "valid" and row.score is None:
            raise bad("a valid attempt needs a score (a legitimate zero is written 0)", "score")
        score = row.score
        if row.track == "solver":
            if row.score_type != "fixed_reference_relative":
                raise bad("solver rows must use score_type fixed_reference_relative", "score_type")
            if row.solver_protocol is None:
                raise bad("solver rows declare solver_protocol online or offline", "solver_protocol")
            if score is not None and not 0.0 <= score <= 1.0:
                raise bad(f"a fixed-reference relative score is in [0, 1], got {score!r}", "score")
        else:
            if row.score_type != "original_task_score":
                raise bad(f"{row.track} rows use score_type original_task_score", "score_type")
            if row.track in ("theorem", "conjecture") and score is not None and score not in (0.0, 1.0):
                raise bad(
                    f"{row.track} scores are 1 (complete proof accepted) or 0, got {att.score_text}; "
                    "convert partial credit to 0",
                    "score",
                )
            if row.track == "construction" and score is not None and score < 0:
                raise bad(f"construction rewards are non-negative, got {att.score_text}", "score")
            if row.track == "construction" and score is not None and score > MAX_CONSTRUCTION_SCORE:
                raise bad(
                    f"construction reward {att.score_text} is too large to aggregate "
                    f"(at most {MAX_CONSTRUCTION_SCORE:g})",
                    "score",
                )
            if (
                row.track == "construction"
                and score is not None
                and row.raw_reward is not None
                and row.raw_reward != score
            ):
                raise bad(
                    f"a construction score is the task's raw reward; raw reward {row.raw_reward!r} "
                    f"differs from score {att.score_text}",
                    "raw_reward",
                )
        if row.adoption_status in ADOPTED:
            task_key = (row.model, row.track, row.item)
            adopted[task_key] += 1
            planned = cohort.models[row.model].attempts_per_task
            if adopted[task_key] > planned:
                raise bad(
                    f"more adopted attempts for {row.model}/{row.track}/{row.item} than the {planned} planned; "
                    "mark replaced attempts excluded",
                    "adoption_status",
                )
            if row.track == "solver":
                if row.solver_protocol != cohort.solver_protocol:
                    raise bad(
                        f"solver protocol {row.solver_protocol!r} differs from the cohort's {cohort.solver_protocol!r}",
                        "solver_protocol",
                    )
                if row.reference_id is not None and row.reference_id != cohort.solver_reference_id:
                    raise bad(
                        f"reference {row.reference_id!r} differs from the cohort's {cohort.solver_reference_id!r}",
                        "reference_id",
                    )
                if row.evidence is not None:
                    evidence[row.evidence] = _check_evidence(att, attempts_path, cohort)
    return dict(sorted(evidence.items()))


def _coverage(
    tasks_planned: int, tasks_complete: int, planned: int, adopted: int, valid: int
) -> dict[str, int]:
    return {
        "tasks_planned": tasks_planned,
        "tasks_complete": tasks_complete,
        "attempts_planned": planned,
        "attempts_adopted": adopted,
        "attempts_adopted_valid": valid,
    }


def score_model(model: str, attempts: list[Attempt], manifest: SuiteManifest, planned: int) -> dict[str, Any]:
    """One model's status, index, track and task means (with the 95 % intervals of the index and the
    track means), coverage and problems."""
    by_task: dict[tuple[str, str], list[Attempt]] = defaultdict(list)
    for att in attempts:
        by_task[(att.row.track, att.row.item)].append(att)
    problems: list[str] = []  # what makes the model incomplete (a gap)
    weaker: list[str] = []  # what makes it provisional at most; listed after every gap
    gaps = 0
    provisional = 0
    task_means: dict[str, dict[str, float | None]] = {}
    track_means: dict[str, float | None] = {}
    coverage: dict[str, dict[str, int]] = {}
    adopted_attempts: list[dict[str, Any]] = []
    excluded: list[dict[str, Any]] = []
    complete_scores: dict[str, list[list[float]]] = {t: [] for t in TRACKS}
    unexplained = 0
    for track in TRACKS:
        items = getattr(manifest.tracks, track)
        task_means[track] = {}
        cov = [len(items), 0, len(items) * planned, 0, 0]
        for item in items:
            rows = by_task.get((track, item), [])
            adopted = [a for a in rows if a.row.adoption_status in ADOPTED]
            valid = [a for a in adopted if a.row.score_status == "valid"]
            cov[3] += len(adopted)
            cov[4] += len(valid)
            for a in rows:
                if a.row.adoption_status == "excluded":
                    excluded.append(
                        {
                            "track": track,
                            "item": item,
                            "attempt": a.row.attempt,
                            "score": a.row.score,
                            "raw_reward": a.row.raw_reward,
                            "score_status": a.row.score_status,
                            "reason": a.row.reason,
                            "line": a.line,
                        }
                    )
                    if not a.row.reason:
                        unexplained += 1
                        weaker.append(
                            f"{a.where}: excluded (replaced) without a recorded reason; "
                            "the result is provisional at best until the reason is recorded"
                        )
            for a in adopted:
                adopted_attempts.append(
                    {
                        "track": track,
                        "item": item,
                        "attempt": a.row.attempt,
                        "adoption_status": a.row.adoption_status,
                        "score": a.row.score,
                        "raw_reward": a.row.raw_reward,
                        "score_status": a.row.score_status,
                        "line": a.line,
                    }
                )
                if a.row.score_status != "valid":
                    problems.append(
                        f"{a.where}: score_status {a.row.score_status!r} is not a valid observation"
                    )
                if a.row.adoption_status == "selected_provisional":
                    provisional += 1
            if not rows:
                problems.append(f"{track}/{item}: no result (planned {planned} attempt(s))")
            elif len(adopted) < planned:
                problems.append(f"{track}/{item}: {len(adopted)} of {planned} planned attempt(s) adopted")
            if len(valid) == planned:
                task_means[track][item] = task_mean([a.row.score for a in valid])  # type: ignore[misc]
                complete_scores[track].append([a.row.score for a in valid])  # type: ignore[misc]
                cov[1] += 1
            else:
                task_means[track][item] = None
                gaps += 1
        values = list(task_means[track].values())
        track_means[track] = None if any(v is None for v in values) else track_mean(values)  # type: ignore[arg-type]
        coverage[track] = _coverage(*cov)
    coverage["total"] = _coverage(*(sum(coverage[t][k] for t in TRACKS) for k in coverage["theorem"]))
    status = resolve_status(gaps=gaps, provisional=provisional, unexplained_exclusions=unexplained)
    index = None if status == "incomplete" else tcsexam_index(track_means)  # type: ignore[arg-type]
    if index is not None and not math.isfinite(index):  # pragma: no cover - inputs are finite
        raise BadInput(f"model {model!r}: the index is not finite")
    return {
        "status": status,
        "index": index,
        "track_means": track_means,
        "intervals": model_intervals(complete_scores, track_means, index),
        "task_means": task_means,
        "coverage": coverage,
        "problems": problems + weaker,  # the reason that decides the status first
        "adopted_attempts": adopted_attempts,
        "excluded_attempts": excluded,
    }


def score_cohort(
    manifest: SuiteManifest,
    cohort: Cohort,
    attempts: list[Attempt],
    *,
    attempts_path: Path,
    cohort_path: Path,
) -> dict[str, Any]:
    """The ``tcsexam score`` output without provenance, plus ``evidence_sha256`` (evidence file ->
    sha256) for the caller to move into the provenance block."""
    if cohort.suite != manifest.suite:
        raise BadInput(
            f"the cohort is for suite {cohort.suite!r}, the manifest is suite {manifest.suite!r}",
            source=cohort_path,
            field="suite",
        )
    evidence = check_attempts(attempts, manifest, cohort, attempts_path)
    models: dict[str, Any] = {}
    for model, plan in cohort.models.items():
        mine = [a for a in attempts if a.row.model == model]
        models[model] = score_model(model, mine, manifest, plan.attempts_per_task)
    return {
        "status": worst_status(m["status"] for m in models.values()),
        "models": models,
        "suite": manifest.suite,
        "solver_protocol": cohort.solver_protocol,
        "solver_reference_id": cohort.solver_reference_id,
        "adoption_rule": cohort.adoption_rule,
        "metric_id": METRIC_ID,
        "evidence_sha256": evidence,
    }


def load_cohort(path: str | Path) -> Cohort:
    path = Path(path)
    return validate(Cohort, loads_json(read_json_bytes(path), path), source=path)
