"""One evaluation's per-sample results, whatever tool wrote them (docs/results.md).

An :class:`Evaluation` is one model's results on one or more tasks as one run of one tool recorded
them: an inspect_ai log (or the logs of one run and model), an lm-evaluation-harness
``results_*.json`` with its ``samples_<task>_*.jsonl`` files, or an Every Eval Ever aggregate record
with its instance-level ``*_samples.jsonl``. Each :class:`SampleResult` is one sample in one epoch:
every metric's value, whether it errored, hit a limit or was retried, the sample's dataset identity
and its metadata. These are in-memory records (dataclasses with slots: a comparison of ten models of
10,000 samples x 3 epochs holds 300,000 of them); the files themselves are read by the readers in
``benchscore.sources`` (``inspect_logs``, ``lm_eval``, ``every_eval_ever``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Tool = Literal["inspect_ai", "lm-evaluation-harness", "every_eval_ever", "score_table"]
TOOL_NAMES: dict[str, str] = {"inspect_ai": "inspect_ai", "lm-evaluation-harness": "lm-evaluation-harness",
                              "every_eval_ever": "Every Eval Ever", "score_table": "score table"}


@dataclass(frozen=True, slots=True)
class ScoreEdit:
    """A score changed after the run (inspect_ai's ``edit_score``): the scorer, who changed it
    (``author``), why (``reason``), when, the value the scorer gave (``original``) and the value now in the
    log (``value``)."""

    scorer: str
    author: str | None
    reason: str | None
    timestamp: str | None
    original: Any
    value: Any


@dataclass(slots=True)
class SampleResult:
    """One sample in one epoch (1 when the tool has no epochs).

    ``values`` maps a metric name (as :class:`MetricInfo` names it) to the value read, ``None`` when
    the sample was not scored on it. ``error`` is the error that ended the sample (its message);
    ``limit`` the limit it hit (``"token"``, ``"time"``, ...: the sample was still scored);
    ``retried_errors`` the errors of earlier attempts the tool retried (inspect_ai's rule: the last
    attempt stands; ``--retries first-attempt`` counts the sample as the first attempt ended).
    ``edits`` are the scores edited after the run, by scorer. ``raw`` holds, for the metrics whose
    epochs a counting reducer reduces (``mode``, ``majority``: they count the values as the scorer
    wrote them, ``"I"`` and ``"N"`` apart), the value as written; None otherwise.
    ``identity`` is what says which dataset sample this is (a sha256: see
    :attr:`Evaluation.identity_method`); two results of one sample id with different identities are
    results of different datasets.
    """

    task: str
    sample_id: str
    epoch: int
    values: dict[str, float | None]
    identity: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    limit: str | None = None
    retried_errors: tuple[str, ...] = ()
    edits: tuple[ScoreEdit, ...] = ()
    raw: dict[str, Any] | None = None


@dataclass
class MetricInfo:
    """One metric of an evaluation.

    ``reducer``: how the epochs of a sample become its value (inspect_ai's name; ``mean`` by
    default; tools without epochs have one epoch). ``reported``: the tool's own aggregate number, when
    it wrote one. ``not_per_sample``: why the metric is not a mean of per-sample values (an
    lm-evaluation-harness corpus metric such as BLEU), None when it is. ``values_in_unit_interval``:
    every value read lies in [0, 1] (then an errored sample has a "wrong" value, 0). ``key``: the key
    of its values in :attr:`SampleResult.values` (the name without the reducer, when a task declared
    several reducers and each is a metric). ``scorer``: the scorer whose scores give its values (an edit of
    that scorer's score changes them).
    """

    name: str
    task: str
    key: str = ""
    scorer: str | None = None
    reducer: str = "mean"
    higher_is_better: bool | None = None
    reported: float | None = None
    aggregation: str | None = None
    not_per_sample: str | None = None
    values_in_unit_interval: bool = True

    def __post_init__(self) -> None:
        self.key = self.key or self.name


@dataclass
class Evaluation:
    """One model's results of one run of one tool (see the module docstring).

    ``settings`` holds, per task, what must agree for two evaluations to be comparable (inspect_ai:
    the task's arguments; lm-evaluation-harness: the task's version, n-shot and filters; Every Eval
    Ever: the evaluation's name). ``planned_samples``: per task, how many samples the tool says it
    ran, when it says it (a samples file holding fewer was cut). ``planned_ids``: per task, the sample
    ids the run planned, when the tool records them (inspect_ai's ``eval.dataset.sample_ids``): a planned
    sample the files do not hold is missing, every epoch of it. ``planned_epochs``: per task, the epochs
    each sample should have (inspect_ai: ``eval.config.epochs``; Every Eval Ever: the most any sample
    of the task has). ``status`` is the run's own status (``success``, ``error``, ``cancelled``;
    ``unknown`` when the format records none) and ``status_error`` its error text. ``files`` lists every
    file read, for provenance. ``created``: when
    the evaluation ran, as the tool recorded it (inspect_ai's ``eval.created``, lm-eval's ``date``, an
    Every Eval Ever record's ``evaluation_timestamp``; None when it records none); ``datasets``: per
    task, the dataset it names; ``library``: the eval library that ran it and its version, as recorded.
    """

    tool: Tool
    tool_version: str | None
    model: str
    source: Path
    settings: dict[str, dict[str, Any]]
    metrics: dict[str, MetricInfo]
    samples: list[SampleResult]
    files: list[Path]
    identity_method: str
    epochs: int = 1
    status: str = "unknown"
    status_error: str | None = None
    planned_samples: dict[str, int] = field(default_factory=dict)
    planned_ids: dict[str, list[str]] = field(default_factory=dict)
    planned_epochs: dict[str, int] = field(default_factory=dict)
    run: str | None = None
    notes: list[str] = field(default_factory=list)
    created: str | None = None
    datasets: dict[str, str] = field(default_factory=dict)
    library: tuple[str, str | None] | None = None

    @property
    def tasks(self) -> list[str]:
        return list(self.settings)

    def epochs_of(self, task: str) -> int:
        """The epochs each sample of ``task`` should have."""
        return self.planned_epochs.get(task, self.epochs)

    @property
    def final(self) -> bool:
        """The run ended as planned (status ``success``, or a format that records no status)."""
        return self.status in ("success", "unknown")


__all__ = ["TOOL_NAMES", "Evaluation", "MetricInfo", "SampleResult", "ScoreEdit", "Tool"]
