"""inspect_ai evaluation logs -> Mira repetition records (``benchscore mira from-inspect``; docs/inspect.md).

Every sample x epoch of the logs becomes one repetition of the case named by the sample id, with the
epoch as its repetition index. The reading is inspect_ai's own, through
:mod:`benchscore.common.inspect_logs` (header checks, samples in batches; inspect_ai is imported
only there, only when a log is read).

The rules (pure functions below, each on plain values):

- **Errors.** A sample error is classified by the mapping's ``errors`` rules: ``infrastructure`` ->
  execution mode ``invalid`` (never attributed), ``agent`` -> ``failed`` with every criterion unmet.
  An error that the eval's own cancellation raised (``CancelledError``) is no result at all: the
  repetition is missing, listed in the output, never written.
- **Limits.** A ``time`` or ``working`` limit is the timing cutoff: terminal state ``cancelled`` (no
  completion, credit 0; a terminal timing fact, not a judge question). Any other limit (message,
  token, turn, cost, context, custom) ends the run unfinished: ``failed``. An ``operator`` limit (a
  person stopped the sample) is no result: missing, like a cancellation.
- **Timing.** ``elapsed_s`` is the sample's ``working_time``; a completed sample needs one.
- **Criteria.** Each deterministic criterion of the case is decided by the score its mapping rule
  names; judge criteria are never decided here (their ``evidence`` is written for ``mira judge``).
  A scorer that called a model while scoring (a model event inside its scorer span, or one of
  inspect_ai's ``model_graded_*`` scorers) is refused as a criterion's scorer: a model-graded score
  is not a deterministic result and never a Mira judge verdict.
- **Missing epochs.** A sample x epoch the log does not hold is no record: the case has fewer
  repetitions and ``mira score`` reports it incomplete. Nothing is averaged from fewer.
- **Invalidated samples** (``inspect_ai.log.invalidate_samples``) are written as ``noncanonical``:
  kept for diagnosis, never in a formal denominator.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from benchscore.common.errors import BadInput
from benchscore.common.inspect_logs import LogHeader, iter_samples, read_header, require_inspect_ai

from .formats import ErrorRules, InspectMapping, ScoreRule, same_score_value

if TYPE_CHECKING:  # pragma: no cover
    from inspect_ai.log import EvalLog, EvalSample

    from .records import LoadedContract

#: inspect_ai's own model-graded scorers (also refused when the log shows no model call for them)
MODEL_GRADED_SCORERS = frozenset({"model_graded_qa", "model_graded_fact"})
_TIMING_LIMITS = frozenset({"time", "working"})
_NO_RESULT_LIMITS = frozenset({"operator"})
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
_EXC_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(?::|$)")


class Refused(ValueError):
    """A sample the mapping cannot convert: the message and the field it concerns."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


# --------------------------------------------------------------------------- rules (pure)


def exception_type(traceback: str | None) -> str | None:
    """The class of the exception a Python traceback ends with (``pkg.mod.SandboxError: ...`` ->
    ``pkg.mod.SandboxError``), or None when its last line names none."""
    if not traceback:
        return None
    lines = [line for line in traceback.strip().splitlines() if line.strip()]
    if not lines:
        return None
    m = _EXC_LINE.match(lines[-1].strip())
    return m.group(1) if m else None


def is_cancellation(type_name: str | None, message: str) -> bool:
    """The error is the eval's own cancellation (Ctrl-C, a cancelled eval), not a result of the sample."""
    short = type_name.rsplit(".", 1)[-1] if type_name else None
    return short == "CancelledError" or (type_name is None and message.startswith("CancelledError("))


def _rule_matches(rule_type: str | None, contains: str | None, type_name: str | None, message: str) -> bool:
    if rule_type is not None:
        if type_name is None:
            return False
        if rule_type != type_name and rule_type != type_name.rsplit(".", 1)[-1]:
            return False
    return contains is None or contains in message


def classify_error(rules: ErrorRules, type_name: str | None, message: str) -> Literal["infrastructure", "agent"]:
    """``infrastructure`` or ``agent`` for one sample error (see :class:`ErrorRules`); raises :class:`Refused`
    when it matches both lists, or neither and ``otherwise`` is ``refuse``.

    Seed 003, "Repetition 与可比性": an infrastructure failure (fixture, executor, runtime start,
    collection) makes the repetition ``invalid``, never attributed; anything else is the agent's.
    """
    infra = any(_rule_matches(r.type, r.message_contains, type_name, message) for r in rules.infrastructure)
    agent = any(_rule_matches(r.type, r.message_contains, type_name, message) for r in rules.agent)
    shown = f"{type_name or 'error'}: {message}" if type_name and not message.startswith(type_name) else message
    if infra and agent:
        raise Refused(f"error {shown!r} matches both errors.infrastructure and errors.agent of the mapping; "
                      "make the rules exclusive", "error")
    if infra:
        return "infrastructure"
    if agent:
        return "agent"
    if rules.otherwise == "refuse":
        raise Refused(f"error {shown!r} matches no rule of the mapping's errors; add it to errors.infrastructure "
                      "(invalid, never attributed) or errors.agent (criteria unmet), or set errors.otherwise", "error")
    return rules.otherwise


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def rule_satisfied(rule: ScoreRule, value: Any, metadata: Mapping[str, Any] | None) -> bool:
    """Whether the score ``value`` (with its ``metadata``) satisfies the criterion of ``rule``.

    Listed values: ``True`` for a value in ``satisfied``, ``False`` for one in ``unsatisfied``; a
    threshold: ``value >= at_least`` (``> above``, ``<= at_most``, ``< below``). Raises
    :class:`Refused` for a value in neither list, a missing key, a non-number against a threshold
    and a non-finite number.
    """
    what = "value"
    if rule.metadata_key is not None:
        what = f"metadata[{rule.metadata_key!r}]"
        if not metadata or rule.metadata_key not in metadata:
            raise Refused(f"score {rule.scorer!r} has no {what}", f"scores.{rule.scorer}.metadata")
        value = metadata[rule.metadata_key]
    elif rule.value_key is not None:
        what = f"value[{rule.value_key!r}]"
        if not isinstance(value, Mapping) or rule.value_key not in value:
            raise Refused(f"score {rule.scorer!r} has no {what} (its value is {value!r})", f"scores.{rule.scorer}.value")
        value = value[rule.value_key]
    where = f"scores.{rule.scorer}." + ("metadata" if rule.metadata_key is not None else "value")
    if _is_number(value) and not math.isfinite(value):
        raise Refused(f"score {rule.scorer!r} {what} is {value!r}, not a finite number", where)
    if rule.satisfied is not None and rule.unsatisfied is not None:
        if any(same_score_value(value, v) for v in rule.satisfied):
            return True
        if any(same_score_value(value, v) for v in rule.unsatisfied):
            return False
        raise Refused(f"score {rule.scorer!r} {what} {value!r} is in neither satisfied {rule.satisfied!r} nor "
                      f"unsatisfied {rule.unsatisfied!r} of the mapping", where)
    if not _is_number(value):
        raise Refused(f"score {rule.scorer!r} {what} {value!r} is not a number; the mapping compares it with a "
                      "threshold", where)
    if rule.at_least is not None:
        return value >= rule.at_least
    if rule.above is not None:
        return value > rule.above
    if rule.at_most is not None:
        return value <= rule.at_most
    assert rule.below is not None  # the mapping's validator guarantees one threshold
    return value < rule.below


def limit_outcome(limit: str | None) -> Literal["completed", "cancelled", "failed", "missing"]:
    """The terminal state a sample's limit means: none -> ``completed``; ``time``/``working`` (the timing
    cutoff) -> ``cancelled``; ``operator`` -> ``missing`` (no result); any other -> ``failed``.

    Seed 003, "Timing 与晚完成": at the cutoff the formal run ends or is cancelled, and nothing after
    it counts as a completion; a limit is a terminal timing fact, not a judge question.
    """
    if limit is None:
        return "completed"
    if limit in _TIMING_LIMITS:
        return "cancelled"
    if limit in _NO_RESULT_LIMITS:
        return "missing"
    return "failed"


def scorers_calling_models(events: Iterable[Mapping[str, Any]]) -> set[str]:
    """Names of the scorers inside whose span a model was called (inspect_ai events as dicts with
    ``event``, ``id``/``span_id``, ``parent_id``, ``type``, ``name``)."""
    spans: dict[str, tuple[str | None, str | None, str | None]] = {}
    found: set[str] = set()
    for ev in events:
        kind = ev.get("event")
        if kind == "span_begin":
            spans[ev["id"]] = (ev.get("name"), ev.get("type"), ev.get("parent_id"))
        elif kind == "model":
            span = ev.get("span_id")
            seen: set[str] = set()
            while span is not None and span in spans and span not in seen:
                seen.add(span)
                name, typ, parent = spans[span]
                if typ == "scorer" and name:
                    found.add(name)
                    break
                span = parent
    return found


@dataclass(frozen=True)
class SampleFacts:
    """What the rules read from one inspect_ai sample, as plain values."""

    id: str | int
    epoch: int
    scores: dict[str, tuple[Any, dict[str, Any] | None]]
    error_message: str | None
    error_type: str | None
    limit: str | None
    working_time: float | None
    output: str
    metadata: dict[str, Any]
    model_graded: frozenset[str] = frozenset()
    invalidated: bool = False


def repetition_record(facts: SampleFacts, case_id: str, deterministic: list[str], mapping: InspectMapping,
                      source: dict[str, Any]) -> dict[str, Any] | str:
    """The repetition record of one sample (a ``mira-repetition`` dict), or the reason it is no
    repetition (a missing one). Raises :class:`Refused` when the mapping cannot convert it."""
    src = {**source, "sample_id": facts.id, "epoch": facts.epoch}
    mode: str = "noncanonical" if facts.invalidated else mapping.execution_mode
    wt = facts.working_time
    if wt is not None and (not math.isfinite(wt) or wt < 0):
        raise Refused(f"working_time {wt!r} is not a finite number of seconds >= 0", "working_time")
    record: dict[str, Any] = {"case_id": case_id, "repetition": facts.epoch}
    if facts.error_message is not None:
        if is_cancellation(facts.error_type, facts.error_message):
            return "cancelled with the eval (CancelledError): no result, a missing repetition"
        kind = classify_error(mapping.errors, facts.error_type, facts.error_message)
        src |= {"error": facts.error_message, "error_kind": kind}
        if facts.limit is not None:
            src["limit"] = facts.limit
        if kind == "infrastructure":
            record |= {"execution_mode": "invalid", "terminal_state": "failed"}
        else:
            record |= {"execution_mode": mode, "terminal_state": "failed",
                       "deterministic_results": dict.fromkeys(deterministic, False)}
        if wt is not None:
            record["elapsed_s"] = wt
        return record | _evidence(facts, mapping) | {"source": src}
    state = limit_outcome(facts.limit)
    if state == "missing":
        return f"stopped by the operator ({facts.limit} limit): no result, a missing repetition"
    if facts.limit is not None:
        src["limit"] = facts.limit
    if state == "completed" and wt is None:
        raise Refused("a completed sample has no working_time; benchscore times repetitions by working_time",
                      "working_time")
    results = {}
    for crit in deterministic:
        rule = mapping.criteria[crit]
        if rule.scorer in facts.model_graded:
            raise Refused(f"scorer {rule.scorer!r} called a model while scoring (a model-graded score); it cannot "
                          f"decide the deterministic criterion {crit!r}, and it is never a Mira judge verdict",
                          f"scores.{rule.scorer}")
        if rule.scorer not in facts.scores:
            have = ", ".join(sorted(facts.scores)) or "none"
            raise Refused(f"no score from scorer {rule.scorer!r} (criterion {crit!r}); the sample's scores: {have}",
                          "scores")
        value, meta = facts.scores[rule.scorer]
        results[crit] = rule_satisfied(rule, value, meta)
    record |= {"execution_mode": mode, "terminal_state": state, "deterministic_results": results}
    if wt is not None:
        record["elapsed_s"] = wt
    return record | _evidence(facts, mapping) | {"source": src}


def _evidence(facts: SampleFacts, mapping: InspectMapping) -> dict[str, Any]:
    if not mapping.evidence:
        return {}
    out: dict[str, str] = {}
    for name, where in mapping.evidence.items():
        if where == "output":
            out[name] = facts.output
            continue
        key = where.split(".", 1)[1]
        value = facts.metadata.get(key)
        if not isinstance(value, str):
            raise Refused(f"evidence {name!r}: the sample's metadata[{key!r}] is {value!r}, not a text", "metadata")
        out[name] = value
    return {"evidence": out}


# --------------------------------------------------------------------------- reading samples


def log_scorers(header: EvalLog) -> list[str] | None:
    """The scorer names a log declares (None when it declares none: checked per sample instead)."""
    if header.eval.scorers:
        return [s.name for s in header.eval.scorers]
    if header.results is not None and header.results.scores:
        return list(dict.fromkeys(s.name for s in header.results.scores))
    return None


def sample_facts(sample: EvalSample) -> SampleFacts:
    """The plain values the rules read from one inspect_ai sample."""
    scores = {name: (s.value, s.metadata) for name, s in (sample.scores or {}).items()}
    events = [{"event": e.event, "id": getattr(e, "id", None), "span_id": e.span_id,
               "parent_id": getattr(e, "parent_id", None), "type": getattr(e, "type", None),
               "name": getattr(e, "name", None)}
              for e in sample.events if e.event in ("span_begin", "model")]
    graded = scorers_calling_models(events) | (MODEL_GRADED_SCORERS & set(scores))
    err = sample.error
    return SampleFacts(
        id=sample.id, epoch=sample.epoch, scores=scores,
        error_message=err.message if err is not None else None,
        error_type=exception_type(err.traceback) if err is not None else None,
        limit=sample.limit.type if sample.limit is not None else None,
        working_time=sample.working_time, output=sample.output.completion if sample.output else "",
        metadata=dict(sample.metadata or {}), model_graded=frozenset(graded),
        invalidated=sample.invalidation is not None)


@dataclass
class LogInfo:
    """One log as the command reports it: its checked header and the (case, epoch) pairs it holds."""

    header: LogHeader
    present: set[tuple[str, int]] = field(default_factory=set)

    @property
    def path(self) -> Path:
        return self.header.path

    def absent(self) -> list[tuple[str, int]]:
        """The (sample id, epoch) pairs the log's plan names but the log does not hold."""
        ids = self.header.log.eval.dataset.sample_ids or []
        return [(str(sid), e) for sid in ids for e in range(1, self.header.epochs + 1)
                if (str(sid), e) not in self.present]


# --------------------------------------------------------------------------- the conversion


@dataclass
class Conversion:
    """What ``from-inspect`` found: the records, what was left out and why, and each log."""

    records: list[dict[str, Any]]
    left_out: list[tuple[str, str, int, str]]  # (log, sample id, epoch, reason)
    absent: list[tuple[str, str, int]]  # (log, sample id, epoch) the log's plan has but it does not hold
    logs: list[LogInfo]


def check_mapping(mapping: InspectMapping, loaded: LoadedContract, source: Path) -> dict[str, list[str]]:
    """Cross-check the mapping with the contract; returns each case's deterministic criteria (in order)."""
    owner: dict[str, str] = {}
    for case in loaded.contract.cases:
        for c in case.criteria:
            owner.setdefault(c.id, c.scorer)
    for crit, rule in mapping.criteria.items():
        kind = owner.get(crit)
        if kind is None:
            raise BadInput(f"criterion {crit!r} is not a criterion of any case of the contract", source=source,
                           field=f"criteria.{crit}")
        if kind == "judge":
            raise BadInput(f"criterion {crit!r} is a judge criterion: an inspect_ai score is never a Mira judge "
                           "verdict; leave it out (mira judge answers it from the evidence)", source=source,
                           field=f"criteria.{crit}")
        if rule.scorer in MODEL_GRADED_SCORERS:
            raise BadInput(f"scorer {rule.scorer!r} is model-graded; it cannot decide the deterministic criterion "
                           f"{crit!r}, and it is never a Mira judge verdict", source=source,
                           field=f"criteria.{crit}.scorer")
    out: dict[str, list[str]] = {}
    for case in loaded.contract.cases:
        det = [c.id for c in case.criteria if c.scorer == "deterministic"]
        for crit in det:
            if crit not in mapping.criteria:
                raise BadInput(f"no rule for the deterministic criterion {crit!r} of case {case.case_id!r}",
                               source=source, field="criteria")
        out[case.case_id] = det
    return out


def convert(log_paths: list[Path], loaded: LoadedContract, mapping: InspectMapping, mapping_path: Path,
            mapping_sha256: str, on_sample: Callable[[], None] | None = None) -> Conversion:
    """Read every log and convert its samples (see the module docstring); raises :class:`BadInput`."""
    require_inspect_ai()
    deterministic = check_mapping(mapping, loaded, mapping_path)
    logs = []
    for path in log_paths:
        info = LogInfo(read_header(path))
        declared = log_scorers(info.header.log)
        if declared is not None:
            for crit, rule in mapping.criteria.items():
                if rule.scorer not in declared:
                    raise BadInput(f"the mapping names scorer {rule.scorer!r} (criterion {crit!r}); the log's "
                                   f"scorers are {', '.join(declared)}", source=path, field="scorers")
        logs.append(info)
    order = {c.case_id: i for i, c in enumerate(loaded.contract.cases)}
    seen: dict[tuple[str, int], str] = {}
    records: list[dict[str, Any]] = []
    left_out: list[tuple[str, str, int, str]] = []
    for info in logs:
        source = info.header.identity() | {"mapping_sha256": mapping_sha256}
        any_sample = False
        for sample in iter_samples(info.path):
            facts = sample_facts(sample)
            any_sample = True
            case_id = str(facts.id)
            where = f"sample {facts.id!r} epoch {facts.epoch}"
            if not _ID.fullmatch(case_id) or case_id not in loaded.cases:
                raise BadInput(f"sample id {facts.id!r} is not a case of the contract {loaded.path.name}",
                               source=info.path, record=where, field="id")
            key = (case_id, facts.epoch)
            if key in seen:
                raise BadInput(f"case {case_id!r} epoch {facts.epoch} is also in {seen[key]}; one log per "
                               "repetition", source=info.path, record=where, field="epoch")
            seen[key] = info.path.name
            info.present.add((case_id, facts.epoch))
            try:
                out = repetition_record(facts, case_id, deterministic[case_id], mapping, source)
            except Refused as exc:
                raise BadInput(exc.message, source=info.path, record=where, field=exc.field) from None
            if isinstance(out, str):
                left_out.append((info.path.name, case_id, facts.epoch, out))
            else:
                records.append(out)
            if on_sample is not None:
                on_sample()
        if not any_sample:
            raise BadInput("the log holds no samples", source=info.path, field="samples")
    absent = sorted(((info.path.name, sid, e) for info in logs for sid, e in info.absent()),
                    key=lambda t: (order.get(t[1], len(order)), t[1], t[2]))
    records.sort(key=lambda r: (order[r["case_id"]], r["repetition"]))
    left_out.sort(key=lambda t: (order[t[1]], t[2]))
    return Conversion(records, left_out, absent, logs)


__all__ = [
    "MODEL_GRADED_SCORERS", "Conversion", "LogInfo", "Refused", "SampleFacts", "check_mapping", "classify_error",
    "convert", "exception_type", "is_cancellation", "limit_outcome", "log_scorers", "repetition_record",
    "rule_satisfied", "sample_facts", "scorers_calling_models",
]
