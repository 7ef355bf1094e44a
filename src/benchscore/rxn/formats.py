"""File formats of benchscore.rxn: condition tables, built datasets, predictions, evaluation output."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, RootModel, Tag, model_validator

from benchscore.common.models import Format as _Format
from benchscore.common.models import Interval

from . import conventions as c


class Format(_Format):
    """The common format base in pydantic's strict mode: a number written as text (``"50"``) or a
    boolean is refused instead of being coerced into a yield, an ee or an index."""

    model_config = ConfigDict(**_Format.model_config, strict=True)


Id = Field(pattern=r"^[A-Za-z0-9_.:\-]+$", min_length=1, max_length=200)
#: a sample id is ``<question_type>:<table_id>[:<target key>]``; a condition key may hold spaces or any
#: other character ("catalyst loading"), so only a blank id or surrounding whitespace is refused.
SampleId = Field(pattern=r"^\S(?:.*\S)?$", min_length=1)


class TableSource(Format):
    """Where a condition table comes from."""

    dataset: str = Field(min_length=1, description="dataset name, e.g. 'Buchwald-Hartwig (Ahneman et al. 2018)'")
    file: str | None = Field(None, description="source file name (matched by the optional metadata CSV)")
    doi: str | None = Field(None, description="DOI of the original publication, where known")
    citation: str | None = None
    license: str | None = None


class ConditionRow(Format):
    """One experiment: a value for every condition key plus its outcome (raw text beside the number)."""

    conditions: dict[str, str]
    yield_: float | None = Field(None, alias="yield", ge=0.0, le=c.YIELD_MAX, description="percent")
    yield_raw: str | None = None
    ee: float | None = Field(None, ge=-100.0, le=100.0, description="percent; negative = other enantiomer")
    ee_raw: str | None = None
    dr: float | None = Field(None, ge=1.0, description="major/minor ratio, e.g. 20 for 20:1")
    dr_raw: str | None = None


class ConditionTable(Format):
    """One reaction (one substrate or substrate pair) and the conditions it was run under.

    ``condition_keys`` are the keys every row sets; the *varying keys* are those whose value
    differs between rows. ``yield_measure`` names what the ``yield`` column measures
    (``yield`` or ``conversion``), or is null when the table reports no yield at all.
    """

    table_id: str = Id
    source: TableSource
    reaction: dict[str, str] = Field(description="substrates by role, e.g. {'aryl_halide': SMILES}")
    constant_conditions: dict[str, str] = Field(default_factory=dict)
    condition_keys: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    yield_measure: Literal["yield", "conversion"] | None = Field(
        description="what the rows' `yield` measures; null when the table reports no yield (scored on selectivity)"
    )
    rows: list[ConditionRow] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> ConditionTable:
        keys = self.condition_keys
        if len(set(keys)) != len(keys):
            raise ValueError("condition_keys has a repeated key")
        shared = set(keys) & set(self.constant_conditions)
        if shared:
            raise ValueError(f"key {sorted(shared)[0]!r} is both a condition key and a constant condition")
        want = set(keys)
        seen: dict[tuple[str, ...], int] = {}
        for i, row in enumerate(self.rows):
            got = set(row.conditions)
            if got != want:
                extra = sorted(got - want)
                if extra:
                    raise ValueError(f"rows[{i}]: unknown condition key {extra[0]!r}; condition_keys are {keys}")
                raise ValueError(f"rows[{i}]: condition key {sorted(want - got)[0]!r} is missing")
            combo = tuple(row.conditions[k] for k in keys)
            if combo in seen:
                raise ValueError(f"rows[{i}] repeats the condition combination of rows[{seen[combo]}]")
            seen[combo] = i
            if self.yield_measure is None and row.yield_ is not None:
                raise ValueError(f"rows[{i}] has a yield but the table's yield_measure is null")
        return self


class ConditionTableFile(Format):
    """A file of condition tables (``benchscore rxn build-*`` input; the bundled data use it)."""

    format: Literal["rxn-condition-tables"] = "rxn-condition-tables"
    tables: list[ConditionTable] = Field(min_length=1)
    fallback_measure: Literal["selectivity"] | None = Field(
        None, description="'selectivity' when the tables were read without a yield column (yield_measure null): "
                          "they are scored on ee and dr alone (rxn convert-csv writes it only then)")
    provenance: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _unique_ids(self) -> ConditionTableFile:
        seen: set[str] = set()
        for t in self.tables:
            if t.table_id in seen:
                raise ValueError(f"duplicate table_id {t.table_id!r}")
            seen.add(t.table_id)
        return self


# --- built datasets ------------------------------------------------------------------------


class Outcome(Format):
    """A reference condition group shown to the model with its measured outcome."""

    conditions: dict[str, str]
    indices: dict[str, int] | None = None
    yield_: float | None = Field(None, alias="yield")
    ee: float | None = None
    dr: float | None = None


class SourceInfo(Format):
    dataset: str
    table_id: str
    file: str | None = None
    doi: str | None = None


class McInput(Format):
    reaction: dict[str, str]
    constant_conditions: dict[str, str]
    varying_keys: list[str]
    target_key: str | None = None
    fixed_conditions: dict[str, str] | None = None
    yield_measure: Literal["yield", "conversion"] | None
    reference_conditions: list[Outcome] | None = None


class McMeta(Format):
    option_relative_scores: list[float]
    option_effective_scores: list[float]
    option_yields: list[float | None]
    best_yield: float | None
    best_effective_score: float = Field(gt=0.0)
    yield_measure: Literal["yield", "conversion"] | None
    selection_info: dict[str, Any]
    reference_info: dict[str, Any] | None = None
    source: SourceInfo


class McSample(Format):
    """One multiple-choice question (seed section 6)."""

    id: str = SampleId
    question_type: str
    input: McInput
    options: list[dict[str, str]] = Field(min_length=2)
    answer: list[int] = Field(min_length=1)
    meta: McMeta

    @model_validator(mode="after")
    def _aligned(self) -> McSample:
        n = len(self.options)
        m = self.meta
        if not (len(m.option_relative_scores) == len(m.option_effective_scores) == len(m.option_yields) == n):
            raise ValueError("meta.option_* lists must have one entry per option")
        if any(not 0.0 <= r <= 1.0 for r in m.option_relative_scores):
            raise ValueError("meta.option_relative_scores must lie in [0, 1]")
        best = [i for i, r in enumerate(m.option_relative_scores) if r >= 1.0 - c.TIE_TOLERANCE]
        if sorted(self.answer) != best:
            raise ValueError(f"answer must list every option whose relative score is 1 (expected {best})")
        return self


class McDataset(Format):
    """A multiple-choice dataset file (``multiple_choice_<question_type>.json``)."""

    format: Literal["rxn-multiple-choice"] = "rxn-multiple-choice"
    question_type: Literal[
        "single_varying",
        "all_varying",
        "single_varying_reference",
        "all_varying_reference",
        "single_varying_reference_control",
        "all_varying_reference_control",
    ]
    samples: list[McSample]
    provenance: dict[str, Any]


class Candidate(Format):
    index: int = Field(ge=0)
    value: str


class LegalCombination(Format):
    indices: dict[str, int]
    relative_score: float = Field(ge=0.0, le=1.0)
    effective_score: float = Field(ge=0.0)
    yield_: float | None = Field(None, alias="yield")


class FibInput(Format):
    reaction: dict[str, str]
    constant_conditions: dict[str, str]
    candidate_values: dict[str, list[Candidate]]
    yield_measure: Literal["yield", "conversion"] | None
    reference_conditions: list[Outcome] | None = None


class FibMeta(Format):
    legal_combinations: list[LegalCombination] = Field(min_length=1)
    best_effective_score: float = Field(gt=0.0)
    best_yield: float | None
    yield_measure: Literal["yield", "conversion"] | None
    reference_info: dict[str, Any] | None = None
    source: SourceInfo


class FibSample(Format):
    """One fill-in-blank question (seed section 7)."""

    id: str = SampleId
    question_type: str
    query_keys: list[str] = Field(min_length=1)
    input: FibInput
    meta: FibMeta

    @model_validator(mode="after")
    def _aligned(self) -> FibSample:
        cands = self.input.candidate_values
        if list(cands) != self.query_keys:
            raise ValueError("input.candidate_values must have exactly the query_keys, in order")
        for key, values in cands.items():
            if [v.index for v in values] != list(range(len(values))):
                raise ValueError(f"input.candidate_values[{key!r}] indices must be 0..n-1 in order")
        seen: set[tuple[int, ...]] = set()
        for i, combo in enumerate(self.meta.legal_combinations):
            key = tuple(combo.indices.values())
            if key in seen:
                raise ValueError(f"meta.legal_combinations[{i}] repeats an earlier combination")
            seen.add(key)
            if list(combo.indices) != self.query_keys:
                raise ValueError(f"meta.legal_combinations[{i}].indices must have exactly the query_keys")
            for key, idx in combo.indices.items():
                if not 0 <= idx < len(cands[key]):
                    raise ValueError(f"meta.legal_combinations[{i}].indices[{key!r}] is out of range")
        return self


class FibDataset(Format):
    """A fill-in-blank dataset file (``fill_in_blank_<question_type>.json``)."""

    format: Literal["rxn-fill-in-blank"] = "rxn-fill-in-blank"
    question_type: Literal["all_blank", "all_blank_reference"]
    samples: list[FibSample]
    provenance: dict[str, Any]


McPredictionFile = RootModel[dict[str, int | None]]
McPredictionFile.__doc__ = "Multiple-choice predictions: {sample_id: 0-based option index, or null = no answer}."

FibPredictionFile = RootModel[dict[str, dict[str, int] | None]]
FibPredictionFile.__doc__ = (
    "Fill-in-blank predictions: {sample_id: {condition_key: 0-based candidate index}, or null = no answer}."
)


class SampleOutcome(Format):
    """One sample of an evaluation as the metrics count it (an element of ``per_sample``)."""

    id: str
    status: Literal["scored", "unhit", "invalid", "missing"] = Field(
        description="scored: a usable answer (fill in blank: its combination is a table row); unhit: fill in "
                    "blank, a usable combination that is no table row; invalid; missing")
    relative_score: float | None = Field(
        description="as avg_relative_score counts it: 0 for an invalid or missing answer; null for an unhit "
                    "fill-in-blank answer (it leaves the denominator)")
    exact_match: bool | None = Field(None, description="multiple choice only: the answer is a best option")
    table_id: str | None = Field(None, description="the condition table the question was built from "
                                                   "(meta.source.table_id): the unit of the intervals and of compare")


class EvaluationIntervals(Format):
    """95 % intervals beside an evaluation's headline metrics: avg_relative_score, avg_yield_ratio
    (multiple choice), exact_match_accuracy (multiple choice), hit_rate (fill in blank)."""

    per_dataset: dict[str, dict[str, Interval]]
    overall: dict[str, Interval]


class ChanceLevel(Format):
    """What a uniform random answer scores in expectation (``rxn.metrics.chance_multiple_choice`` /
    ``chance_fill_in_blank``): the level a headline is compared against."""

    predictor: str = Field(description="the random answer the levels are the expectation of")
    num_samples: int
    avg_relative_score: float | None = Field(
        description="multiple choice: mean over questions of the mean option relative score; fill in blank: "
                    "mean over questions of the mean relative score of the legal combinations")
    exact_match_accuracy: float | None = Field(None, description="multiple choice: mean of best options / options")
    hit_rate: float | None = Field(None, description="fill in blank: mean of legal combinations / candidate "
                                                     "combinations")


class EvaluationChance(Format):
    """The chance levels beside an evaluation's metrics, per sub-dataset and overall."""

    per_dataset: dict[str, ChanceLevel]
    overall: ChanceLevel


class BelowChance(Format):
    """The metrics below chance, per sub-dataset and overall (``benchscore.rxn.chance``): a metric whose
    95 % interval lies wholly below its chance level (without an interval: whose value does)."""

    rule: str = Field(description="how below chance is decided")
    per_dataset: dict[str, list[str]]
    overall: list[str]


Count = Annotated[int, Field(ge=0)]
Fraction = Annotated[float | None, Field(ge=0.0, le=1.0)]


class MultipleChoiceMetrics(Format):
    """The metrics of a multiple-choice evaluation (one sub-dataset, or overall); a mean over no
    sample is null."""

    num_samples: Count
    avg_relative_score: Fraction = Field(description="the main metric: mean option relative score, "
                                                     "invalid and missing answers scoring 0")
    exact_match_accuracy: Fraction = Field(description="share of answers that are a best option")
    avg_yield_ratio: Fraction = Field(description="mean option yield / best yield over the samples with a yield")
    num_invalid: Count
    num_missing: Count
    num_without_yield: Count


class FillInBlankMetrics(Format):
    """The metrics of a fill-in-blank evaluation (one sub-dataset, or overall); a mean over no sample
    is null."""

    num_samples: Count
    hit_rate: Fraction = Field(description="num_scored / num_samples")
    num_scored: Count
    num_unhit: Count
    num_invalid: Count
    num_missing: Count
    avg_relative_score: Fraction = Field(description="the main metric: scored relative scores / (num_samples - "
                                                     "num_unhit)")
    best_hit_rate_among_scored: Fraction = Field(description="share of scored answers with relative score 1")


#: which task a set of metrics belongs to (told by the fields it holds; the task field must agree)
_METRICS_TASK = {MultipleChoiceMetrics: "multiple_choice", FillInBlankMetrics: "fill_in_blank"}


def _metrics_kind(value: Any) -> str:
    held = value if isinstance(value, dict) else vars(value) if isinstance(value, _Format) else {}
    return "fill_in_blank" if "hit_rate" in held else "multiple_choice"


TaskMetrics = Annotated[
    Annotated[MultipleChoiceMetrics, Tag("multiple_choice")] | Annotated[FillInBlankMetrics, Tag("fill_in_blank")],
    Discriminator(_metrics_kind)]


class EvaluationResult(Format):
    """Output of ``benchscore rxn eval-mc`` / ``eval-fib``: metrics per sub-dataset and overall."""

    task: Literal["multiple_choice", "fill_in_blank"]
    per_dataset: dict[str, TaskMetrics]
    overall: TaskMetrics
    chance: EvaluationChance | None = Field(
        None, description="what a uniform random answer scores in expectation, beside the V6 metrics (which it "
                          "does not change)")
    intervals: EvaluationIntervals | None = Field(
        None, description="the 95 % interval of each headline metric, per sub-dataset and overall (clustered by "
                          "condition table; docs/statistics.md)")
    below_chance: BelowChance | None = Field(
        None, description="the metrics (of avg_relative_score, exact_match_accuracy, hit_rate) whose 95 % interval "
                          "lies below the chance level, per sub-dataset and overall")
    per_sample: dict[str, list[SampleOutcome]] = Field(
        default_factory=dict, description="every sample of each sub-dataset, in dataset order: the records the "
                                          "metrics sum up (the report draws their distribution)")
    provenance: dict[str, Any]

    @model_validator(mode="after")
    def _metrics_of_the_task(self) -> EvaluationResult:
        for where, metrics in [("overall", self.overall), *((f"per_dataset.{k}", v) for k, v in self.per_dataset.items())]:
            if _METRICS_TASK[type(metrics)] != self.task:
                raise ValueError(f"{where} holds {_METRICS_TASK[type(metrics)]} metrics, task is {self.task}")
        return self


# --- benchscore rxn predict ------------------------------------------------------------------

PredictStatus = Literal["answered", "unparseable", "failed"]


class PredictCall(Format):
    """One question asked in one run: what the model said, what was written, and the call's audit record.

    ``answered``: a prediction was read from the answer (the evaluator may still count it invalid, e.g.
    an out-of-range index); ``unparseable``: no rule matched, the raw text is the prediction (invalid);
    ``failed``: the call failed after retries, no prediction was written (the next run asks again).
    """

    run: int = Field(ge=1)
    sample_id: str
    status: PredictStatus
    prediction: Any = Field(None, description="what was written to the prediction file (null when failed)")
    answer_text: str | None = Field(None, description="the model's raw answer")
    error: str | None = None
    record: dict[str, Any] | None = Field(
        None, description="benchscore.common.llm.CallRecord: model, prompt_sha256, tokens, latency, status, attempts")
    constraint: str | None = Field(
        None, description="what the answer was produced under: json_schema, json_object_schema, grammar, none (free "
                          "text) or loglikelihood (null in audits written before issue 20)")
    option_loglikelihoods: list[dict[str, Any]] | None = Field(
        None, description="--method loglikelihood: per option its index, log-likelihood, tokens, method and call record")


class PredictCounts(Format):
    asked: int = Field(ge=0, description="questions sent to the model")
    answered: int = Field(ge=0)
    unparseable: int = Field(ge=0)
    failed: int = Field(ge=0, description="calls that failed after retries")
    tokens_in: int = Field(ge=0)
    tokens_out: int = Field(ge=0)
    total_tokens: int = Field(ge=0)
    wall_time_s: float = Field(ge=0.0)


class PredictRun(PredictCounts):
    """One invocation of ``benchscore rxn predict`` on this prediction file."""

    run: int = Field(ge=1)
    started_at: str
    endpoint: str
    settings: dict[str, Any] = Field(description="limit, concurrency, tpm, max_tokens, temperature, max_retries, timeout")
    selected: int = Field(ge=0, description="questions selected (the first --limit of the dataset, or all)")
    skipped_already_answered: int = Field(ge=0)
    complete: bool = Field(description="false while the run is going on, or when it was interrupted or crashed")
    tpm_windows: dict[str, int] | None = Field(None, description="tokens per wall-clock minute under --tpm")
    constraint: dict[str, Any] | None = Field(
        None, description="the constraint probe: mode used and every mode tried (--method generate), or the "
                          "log-likelihood method (echo or forced)")


class PredictSummary(PredictCounts):
    """Totals over every run of this prediction file."""

    num_questions: int = Field(ge=0, description="questions in the dataset")
    num_predictions: int = Field(ge=0, description="ids in the prediction file")
    runs: int = Field(ge=0)


class PredictAudit(Format):
    """The audit beside a prediction file written by ``benchscore rxn predict`` (``<output stem>.audit.json``)."""

    format: Literal["rxn-predict-audit"] = "rxn-predict-audit"
    model: str
    dataset: dict[str, Any] = Field(description="name, question_type, num_questions, sha256")
    prompt: dict[str, Any] = Field(description="source (a file beside the dataset, --prompt, or built-in), sha256")
    prediction_file: str
    summary: PredictSummary
    runs: list[PredictRun]
    calls: list[PredictCall]
    provenance: dict[str, Any]
