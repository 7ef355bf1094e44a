"""inspect_ai evaluation logs -> Mira repetition records (``benchscore mira from-inspect``; docs/inspect.md).

Every sample x epoch of the logs becomes one repetition of the case its sample id names (or the case
the mapping's ``case_ids`` maps it to), with the epoch as its repetition index. The logs are read by
:mod:`benchscore.sources.inspect_logs` (files, folders, eval sets, fsspec URLs; no inspect_ai needed).

The rules (pure functions below, each on plain values; seed 003 section named in each docstring):

- **Errors** are typed structurally (:func:`benchscore.sources.inspect_logs.parse_error`: the
  exception the traceback ends with, qualified and bare class names, every inner exception of a
  group) and classified by the mapping's ``errors`` rules: ``infrastructure`` -> execution mode
  ``invalid`` (never attributed), ``agent`` -> ``failed`` with every criterion unmet. An error that
  the eval's own cancellation raised (``CancelledError``) is no result: a missing repetition.
- **Retried attempts** (``error_retries``, ``--retry-on-error``) are each classified the same way.
  An infrastructure error (or a cancellation) that was retried produced no result: the retry stands
  and the errors it replaced are listed in the repetition's ``source.replaced_errors``. An agent
  error that was retried is a result: that failed attempt is the repetition (``failed``, criteria
  unmet), and what the retry gave is kept beside it as a diagnostic (``source.later_attempt``),
  never scored; otherwise a retry would turn a failure into a success and leave the failure out of
  the denominator.
- **Limits.** A ``time`` or ``working`` limit is the timing cutoff: terminal state ``cancelled``.
  Any other limit (message, token, turn, cost, context, custom) ends the run unfinished: ``failed``.
  An ``operator`` limit (a person stopped the sample) is no result: missing, like a cancellation.
- **Timing.** ``elapsed_s`` is the sample's ``working_time``; a completed sample needs one.
- **Criteria.** Each deterministic criterion is decided by the score its mapping rule names; judge
  criteria never are (their ``evidence`` is written for ``mira judge``). A scorer that called a
  model while scoring is refused as a criterion's scorer. A score edited by hand after the run
  (``edit_score``: a score with an edit history) is refused, unless the conversion accepts edits;
  then the edited value decides and the record's ``source.score_edits`` says who changed what, which
  ``mira score`` turns into a methodology deviation.
- **Approvals** (``ApprovalEvent``) are carried into the repetition by the mapping's ``approvals``
  rules: an ordinary approval (``approval`` intervention, no Autonomy cost), an intervention that
  costs Autonomy (``task_solving_help``), or a governance event. A log recording approvals that the
  mapping does not classify is refused.
- **Missing epochs** are no records: the case has fewer repetitions and ``mira score`` reports it
  incomplete. **Invalidated samples** are ``noncanonical``: kept for diagnosis, never in a formal
  denominator.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from benchscore.common.errors import BadInput
from benchscore.sources.inspect_logs import (
    Approval,
    ErrorInfo,
    ExceptionInfo,
    LogHeader,
    SampleRecord,
    open_logs,
    parse_error,
    require_reader,
)

from .formats import ApprovalRule, ErrorRule, ErrorRules, InspectMapping, ScoreRule, same_score_value

if TYPE_CHECKING:  # pragma: no cover
    import os

    from .records import LoadedContract

#: inspect_ai's own model-graded scorers (also refused when the log shows no model call for them)
MODEL_GRADED_SCORERS = frozenset({"model_graded_qa", "model_graded_fact"})
_TIMING_LIMITS = frozenset({"time", "working"})
_NO_RESULT_LIMITS = frozenset({"operator"})
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
_REPR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(")


class Refused(ValueError):
    """A sample the mapping cannot convert: the message and the field it concerns."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


# --------------------------------------------------------------------------- rules (pure)


def _type_matches(rule_type: str, exc: ExceptionInfo) -> bool:
    """A rule's ``type`` names the class bare (``SandboxError``), qualified (``pkg.mod.SandboxError``) or by a
    dotted tail of its qualified name (``mod.SandboxError``)."""
    return rule_type in (exc.name, exc.type) or exc.type.endswith("." + rule_type)


def _rule_matches(rule: ErrorRule, exc: ExceptionInfo | None, text: str) -> bool:
    if rule.type is not None and (exc is None or not _type_matches(rule.type, exc)):
        return False
    return rule.message_contains is None or rule.message_contains in text


def error_types(error: ErrorInfo) -> list[str]:
    """The bare class names of an error's exceptions (every inner exception of a group)."""
    return [e.name for e in error.leaves()]


def shown_error(error: ErrorInfo) -> str:
    """An error for a message: inspect_ai's message, with the exception classes when it does not start with one."""
    names = error_types(error)
    text = " ".join(error.message.split())
    if len(text) > 300:
        text = text[:300] + "..."
    if names and not (len(names) == 1 and text.startswith(names[0])):
        return f"{text} (exception {', '.join(names)})"
    return text


def classify_error(rules: ErrorRules, error: ErrorInfo) -> Literal["infrastructure", "agent"]:
    """``infrastructure`` or ``agent`` for one error (see :class:`ErrorRules`); raises :class:`Refused` when it
    matches both lists, or neither and ``otherwise`` is ``refuse``.

    Each exception of the error is matched (the one raised; for an exception group every inner
    exception) by its class and by its message (the text after ``Class: ``, every line, and
    inspect_ai's ``message``). The exceptions a rule matched decide; when they match both lists the
    error is refused as ambiguous; when none matches any rule, ``otherwise`` decides.

    Seed 003, "Repetition 与可比性": an infrastructure failure (fixture, executor, runtime start,
    collection) makes the repetition ``invalid``, never attributed; anything else is the agent's.
    """
    leaves: Sequence[ExceptionInfo | None] = error.leaves() or (None,)
    raised = _REPR.match(error.message)
    matched: dict[str, list[str]] = {}
    for leaf in leaves:
        text = leaf.message if leaf is not None else ""
        if leaf is None or len(leaves) == 1 or (raised is not None and raised.group(1) == leaf.name):
            text = f"{text}\n{error.message}"
        infra = any(_rule_matches(r, leaf, text) for r in rules.infrastructure)
        agent = any(_rule_matches(r, leaf, text) for r in rules.agent)
        name = leaf.name if leaf is not None else "error"
        if infra and agent:
            raise Refused(f"error {shown_error(error)!r} matches both errors.infrastructure and errors.agent of the "
                          "mapping; make the rules exclusive", "error")
        if infra or agent:
            matched.setdefault("infrastructure" if infra else "agent", []).append(name)
    if len(matched) == 2:
        raise Refused(f"error {shown_error(error)!r} is an exception group whose exceptions match errors.infrastructure "
                      f"({', '.join(matched['infrastructure'])}) and errors.agent ({', '.join(matched['agent'])}); "
                      "make the rules decide it", "error")
    if matched:
        return next(iter(matched))  # type: ignore[return-value]
    if rules.otherwise == "refuse":
        raise Refused(f"error {shown_error(error)!r} matches no rule of the mapping's errors; add it to "
                      "errors.infrastructure (invalid, never attributed) or errors.agent (criteria unmet), or set "
                      "errors.otherwise", "error")
    return rules.otherwise


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_LISTED: dict[int, tuple[ScoreRule, tuple[frozenset[str], frozenset[str]] | None]] = {}


def _listed_texts(rule: ScoreRule) -> tuple[frozenset[str], frozenset[str]] | None:
    """The text values of a listed rule that reads the score's value itself, as sets (memoised per rule)."""
    hit = _LISTED.get(id(rule))
    if hit is not None and hit[0] is rule:
        return hit[1]
    sets = None
    if rule.satisfied is not None and rule.unsatisfied is not None and rule.value_key is None \
            and rule.metadata_key is None:
        sets = (frozenset(v for v in rule.satisfied if isinstance(v, str)),
                frozenset(v for v in rule.unsatisfied if isinstance(v, str)))
    _LISTED[id(rule)] = (rule, sets)
    return sets


def rule_satisfied(rule: ScoreRule, value: Any, metadata: Mapping[str, Any] | None) -> bool:
    """Whether the score ``value`` (with its ``metadata``) satisfies the criterion of ``rule``.

    Listed values: ``True`` for a value in ``satisfied``, ``False`` for one in ``unsatisfied``; a
    threshold: ``value >= at_least`` (``> above``, ``<= at_most``, ``< below``). Raises
    :class:`Refused` for a value in neither list, a missing key, a non-number against a threshold
    and a non-finite number.
    """
    fast = _listed_texts(rule)
    if fast is not None and type(value) is str:  # the common case (C/I/P/N): two set lookups
        if value in fast[0]:
            return True
        if value in fast[1]:
            return False
    elif rule.at_least is not None and rule.metadata_key is not None and metadata:  # a count in the metadata
        number = metadata.get(rule.metadata_key)
        if type(number) is int or (type(number) is float and math.isfinite(number)):
            return number >= rule.at_least
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


def classify_approval(rules: list[ApprovalRule] | None, approval: Approval) -> ApprovalRule:
    """The mapping's rule for one approval decision; raises :class:`Refused` when none (or several that
    disagree) match, or the mapping has no ``approvals`` at all.

    Seed 003, "Autonomy": an ordinary approval or resume never costs Autonomy, only extra task-solving
    help does; "Governance": a conservative approval is no failure, a bypassed or stale approval is a
    serious one. The log cannot say which an approval was: the mapping does.
    """
    shown = f"{approval.approver} {approval.decision} on tool call {approval.function}"
    if rules is None:
        raise Refused(f"the sample records an approval decision ({shown}); say in the mapping's approvals what each "
                      "decision is under the contract (ordinary, intervention or governance)", "events.approval")
    hits = [r for r in rules if r.decision == approval.decision and r.approver in (None, approval.approver)
            and r.tool in (None, approval.function)]
    if not hits:
        raise Refused(f"approval decision ({shown}) matches no rule of the mapping's approvals", "events.approval")
    meaning = {(r.counts_as, r.governance_kind, r.severity) for r in hits}
    if len(meaning) > 1:
        raise Refused(f"approval decision ({shown}) matches rules of the mapping's approvals that disagree; make them "
                      "exclusive", "events.approval")
    return hits[0]


def _approval_entries(approvals: Sequence[Approval], rules: list[ApprovalRule] | None) -> dict[str, Any]:
    """The record's interventions and governance events from the approval decisions, and their ``source`` list."""
    if not approvals:
        return {}
    interventions, governance, listed = [], [], []
    for a in approvals:
        rule = classify_approval(rules, a)
        detail = f"{a.approver} {a.decision} {a.function}" + (f" ({a.explanation})" if a.explanation else "")
        if rule.counts_as == "ordinary":
            interventions.append({"kind": "approval", "detail": detail})
        elif rule.counts_as == "intervention":
            interventions.append({"kind": "task_solving_help", "detail": detail})
        else:
            event: dict[str, Any] = {"kind": rule.governance_kind, "detail": detail}
            if rule.severity is not None:
                event["severity"] = rule.severity
            governance.append(event)
        listed.append({"decision": a.decision, "approver": a.approver, "tool": a.function,
                       "counts_as": rule.counts_as})
    out: dict[str, Any] = {}
    if interventions:
        out["interventions"] = interventions
    if governance:
        out["governance_events"] = governance
    return out | ({"_approvals": listed} if listed else {})


def _error_entry(error: ErrorInfo, kind: str) -> dict[str, Any]:
    return {"error": error.message, "error_kind": kind, "error_types": error_types(error)}


def _retry_kind(rules: ErrorRules, error: ErrorInfo) -> str:
    return "cancelled" if error.cancelled else classify_error(rules, error)


def repetition_record(sample: SampleRecord, case_id: str, deterministic: list[str], mapping: InspectMapping,
                      source: dict[str, Any], *, accept_score_edits: bool = False) -> dict[str, Any] | str:
    """The repetition record of one sample (a ``mira-repetition`` dict), or the reason it is no
    repetition (a missing one). Raises :class:`Refused` when the mapping cannot convert it.

    Retried attempts come first (see the module docstring): the first attempt that was not an
    infrastructure error or a cancellation is the repetition.
    """
    src = {**source, "sample_id": sample.id, "epoch": sample.epoch}
    replaced: list[dict[str, Any]] = []
    attempts = len(sample.retries) + 1
    for i, retried in enumerate(sample.retries):
        kind = _retry_kind(mapping.errors, retried.error)
        if kind in ("infrastructure", "cancelled"):
            replaced.append(_error_entry(retried.error, kind))
            continue
        # the agent's own failure, retried: that attempt is the repetition; the retry is a diagnostic
        later = _final_record(sample, deterministic, mapping, accept_score_edits=accept_score_edits)
        mode = "noncanonical" if sample.invalidation is not None else mapping.execution_mode
        record: dict[str, Any] = {"case_id": case_id, "repetition": sample.epoch, "execution_mode": mode,
                                  "terminal_state": "failed", "deterministic_results": dict.fromkeys(deterministic,
                                                                                                     False)}
        extra = _approval_entries(retried.approvals, mapping.approvals)
        listed = extra.pop("_approvals", None)
        src |= _error_entry(retried.error, "agent") | {"attempt": i + 1, "attempts": attempts}
        if replaced:
            src["replaced_errors"] = replaced
        if listed:
            src["approvals"] = listed
        if isinstance(later, dict):
            later_src = later.pop("_source")
            src["later_attempt"] = {k: v for k, v in later.items() if k not in ("interventions", "governance_events")} | {
                k: v for k, v in later_src.items() if k in ("error", "error_kind", "error_types", "limit")}
        else:
            src["later_attempt"] = {"no_result": later}
        return record | extra | _evidence(sample, mapping, output="") | {"source": src}
    out = _final_record(sample, deterministic, mapping, accept_score_edits=accept_score_edits)
    if isinstance(out, str):
        return out
    extra_src = out.pop("_source")
    if replaced:
        extra_src |= {"attempt": attempts, "attempts": attempts, "replaced_errors": replaced}
    record = {"case_id": case_id, "repetition": sample.epoch}
    record.update(out)
    if mapping.evidence:
        record.update(_evidence(sample, mapping))
    if extra_src:
        src.update(extra_src)
    record["source"] = src
    return record


def _final_record(sample: SampleRecord, deterministic: list[str], mapping: InspectMapping, *,
                  accept_score_edits: bool) -> dict[str, Any] | str:
    """What the sample's last attempt gives (without case and repetition), with ``_source`` the source
    fields it adds; or the reason it is no result."""
    mode: str = "noncanonical" if sample.invalidation is not None else mapping.execution_mode
    wt = sample.working_time
    if wt is not None and (not math.isfinite(wt) or wt < 0):
        raise Refused(f"working_time {wt!r} is not a finite number of seconds >= 0", "working_time")
    src: dict[str, Any] = {}
    record: dict[str, Any] = {}
    extra = _approval_entries(sample.approvals, mapping.approvals)
    if "_approvals" in extra:
        src["approvals"] = extra.pop("_approvals")
    if sample.error is not None:
        if sample.error.cancelled:
            return "cancelled with the eval (CancelledError): no result, a missing repetition"
        kind = classify_error(mapping.errors, sample.error)
        src |= _error_entry(sample.error, kind)
        if sample.limit is not None:
            src["limit"] = sample.limit
        if kind == "infrastructure":
            record |= {"execution_mode": "invalid", "terminal_state": "failed"}
        else:
            record |= {"execution_mode": mode, "terminal_state": "failed",
                       "deterministic_results": dict.fromkeys(deterministic, False)}
        if wt is not None:
            record["elapsed_s"] = wt
        return record | extra | {"_source": src}
    state = limit_outcome(sample.limit)
    if state == "missing":
        return f"stopped by the operator ({sample.limit} limit): no result, a missing repetition"
    if sample.limit is not None:
        src["limit"] = sample.limit
    if state == "completed" and wt is None:
        raise Refused("a completed sample has no working_time; benchscore times repetitions by working_time",
                      "working_time")
    results = {}
    edits = []
    for crit in deterministic:
        rule = mapping.criteria[crit]
        if rule.scorer in sample.model_graded:
            raise Refused(f"scorer {rule.scorer!r} called a model while scoring (a model-graded score); it cannot "
                          f"decide the deterministic criterion {crit!r}, and it is never a Mira judge verdict",
                          f"scores.{rule.scorer}")
        score = sample.scores.get(rule.scorer)
        if score is None:
            have = ", ".join(sorted(sample.scores)) or "none"
            raise Refused(f"no score from scorer {rule.scorer!r} (criterion {crit!r}); the sample's scores: {have}",
                          "scores")
        if score.history:
            edits.extend(_score_edits(rule.scorer, score, accept_score_edits))
        results[crit] = rule_satisfied(rule, score.value, score.metadata)
    if edits:
        src["score_edits"] = list({(e["scorer"], e["author"], e["reason"], repr(e["value"])): e
                                   for e in edits}.values())
    record["execution_mode"] = mode
    record["terminal_state"] = state
    record["deterministic_results"] = results
    if wt is not None:
        record["elapsed_s"] = wt
    if extra:
        record.update(extra)
    record["_source"] = src
    return record


def _score_edits(scorer: str, score: Any, accept: bool) -> list[dict[str, Any]]:
    """The edits of one score, as the record lists them; refused (:class:`Refused`) unless ``accept``."""
    original = score.history[0].value if score.history and score.history[0].author is None else None
    edits = score.edits or score.history
    first = edits[0]
    if not accept:
        who = first.author or "(no author recorded)"
        why = f" ({first.reason})" if first.reason else ""
        raise Refused(f"score {scorer!r} was edited after the run by {who}{why}: value {original!r} -> "
                      f"{score.value!r}; an edited score is not the scorer's result. Rerun with "
                      "--accept-score-edits to take the edited value as a methodology deviation",
                      f"scores.{scorer}.history")
    return [{"scorer": scorer, "author": e.author, "reason": e.reason, "original": original, "value": score.value}
            for e in edits]


def _evidence(sample: SampleRecord, mapping: InspectMapping, output: str | None = None) -> dict[str, Any]:
    """The evidence the judge may read; ``output`` replaces the sample's (a retried attempt left none)."""
    if not mapping.evidence:
        return {}
    out: dict[str, str] = {}
    for name, where in mapping.evidence.items():
        if where == "output":
            out[name] = sample.output if output is None else output
            continue
        key = where.split(".", 1)[1]
        value = sample.metadata.get(key)
        if not isinstance(value, str):
            raise Refused(f"evidence {name!r}: the sample's metadata[{key!r}] is {value!r}, not a text", "metadata")
        out[name] = value
    return {"evidence": out}


# --------------------------------------------------------------------------- the conversion


@dataclass
class LogInfo:
    """One log as the command reports it: its checked header, the (case, epoch) pairs it gave, the samples it
    holds, and those that are no case of the contract (skipped by ``other_samples: skip``)."""

    header: LogHeader
    present: set[tuple[str, int]] = field(default_factory=set)
    samples: int = 0
    skipped: int = 0
    case_ids: Mapping[str, str] = field(default_factory=dict)
    contract_cases: frozenset[str] = frozenset()

    @property
    def path(self) -> str:
        return self.header.location.url

    @property
    def name(self) -> str:
        return self.header.name

    def absent(self) -> list[tuple[str, int]]:
        """The (case, epoch) pairs the log's own plan names but the log does not hold."""
        ids = [self.case_ids.get(str(s), str(s)) for s in self.header.sample_ids or []]
        ids = [i for i in ids if i in self.contract_cases]
        return [(sid, e) for sid in ids for e in range(1, self.header.epochs + 1) if (sid, e) not in self.present]


def outcome(record: Mapping[str, Any]) -> str:
    """How a repetition record reads in the summary: invalid, an agent failure, a limit, or its state and mode."""
    src = record.get("source") or {}
    if record["execution_mode"] == "invalid":
        return "invalid (infrastructure error)"
    if src.get("error_kind") == "agent":
        return "failed (agent error)"
    if src.get("limit"):
        return f"{record['terminal_state']} ({src['limit']} limit)"
    return f"{record['terminal_state']} ({record['execution_mode']})"


def notes(record: Mapping[str, Any]) -> list[str]:
    """What the summary says of a record besides its outcome: retried attempts, score edits, approvals."""
    src = record.get("source") or {}
    out = []
    if src.get("later_attempt") is not None:
        out.append(f"attempt {src['attempt']} of {src['attempts']} failed (the agent's error, counted); the retry is "
                   f"a diagnostic only: {_later(src['later_attempt'])}")
    for e in src.get("replaced_errors") or ():
        out.append(f"retried after an {e['error_kind']} error (no result, replaced): "
                   f"{' '.join(str(e['error']).split())[:200]}")
    for e in src.get("score_edits") or ():
        out.append(f"score {e['scorer']} edited by {e['author']} ({e['reason'] or 'no reason given'}): "
                   f"{e['original']!r} -> {e['value']!r}, accepted as a methodology deviation")
    for a in src.get("approvals") or ():
        if a["counts_as"] != "ordinary":
            out.append(f"approval: {a['approver']} {a['decision']} {a['tool']} -> {a['counts_as']}")
    return out


def _later(later: Mapping[str, Any]) -> str:
    if "no_result" in later:
        return str(later["no_result"])
    parts = [str(later.get("terminal_state"))]
    if later.get("deterministic_results"):
        parts.append(", ".join(f"{k} {'met' if v else 'unmet'}" for k, v in later["deterministic_results"].items()))
    if later.get("error"):
        parts.append(f"error {' '.join(str(later['error']).split())[:120]}")
    return "; ".join(parts)


@dataclass
class Conversion:
    """What ``from-inspect`` found: the records, each outcome's count and every note, what was left out and
    why, each log, and the planned repetitions of the contract that no log gave (``missing``).

    The records are serialized as they are made into a temporary file (``spill``; ``index`` holds each one's
    place and its contract order), so a conversion's memory does not grow with the number of samples;
    :meth:`lines` reads them back in contract order, then by epoch."""

    spill: Any
    index: list[tuple[int, int, int, int]]  # (case order, epoch, offset, length) in contract order, then epoch
    outcomes: dict[str, int]
    notes: list[tuple[str, int, str]]
    invalid: int
    cases: int
    left_out: list[tuple[str, str, int, str]]  # (log, case, epoch, reason)
    absent: list[tuple[str, str, int]]  # (log, case, epoch) the log's plan has but it does not hold
    logs: list[LogInfo]
    missing: list[tuple[str, int]] = field(default_factory=list)  # (case, repetition) the contract plans
    planned: int = 0

    @property
    def written(self) -> int:
        return len(self.index)

    def lines(self) -> Iterator[bytes]:
        """Each record's JSON line, in contract order, then by epoch."""
        for _, _, offset, length in self.index:
            self.spill.seek(offset)
            yield self.spill.read(length)

    def records(self) -> list[dict[str, Any]]:
        """The records as dicts (parsed back from their lines)."""
        import orjson

        return [orjson.loads(line) for line in self.lines()]

    @property
    def unfinished_logs(self) -> list[LogInfo]:
        """Logs whose run did not end as planned (status ``cancelled`` or ``error``)."""
        return [info for info in self.logs if not info.header.final]

    @property
    def final(self) -> bool:
        """Every log finished and every planned repetition has a record (``mira score`` may still find it
        incomplete: an invalid repetition, an unanswered judge criterion)."""
        return not self.unfinished_logs and not self.missing


def check_mapping(mapping: InspectMapping, loaded: LoadedContract, source: str) -> dict[str, list[str]]:
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
    for sid, cid in mapping.case_ids.items():
        if cid not in loaded.cases:
            raise BadInput(f"case_ids maps sample {sid!r} to {cid!r}, which is not a case of the contract",
                           source=source, field=f"case_ids.{sid}")
    out: dict[str, list[str]] = {}
    for case in loaded.contract.cases:
        det = [c.id for c in case.criteria if c.scorer == "deterministic"]
        for crit in det:
            if crit not in mapping.criteria:
                raise BadInput(f"no rule for the deterministic criterion {crit!r} of case {case.case_id!r}",
                               source=source, field="criteria")
        out[case.case_id] = det
    return out


def convert(logs: Sequence[str | os.PathLike[str]], loaded: LoadedContract, mapping: InspectMapping,
            mapping_path: str, mapping_sha256: str, on_sample: Callable[[], None] | None = None, *,
            accept_score_edits: bool = False) -> Conversion:
    """Read every log and convert its samples (see the module docstring); raises :class:`BadInput`."""
    require_reader()
    deterministic = check_mapping(mapping, loaded, str(mapping_path))
    import tempfile

    import orjson

    from .records import no_gc

    order = {c.case_id: i for i, c in enumerate(loaded.contract.cases)}
    seen: dict[tuple[str, int], str] = {}
    spill = tempfile.TemporaryFile(prefix="benchscore-from-inspect-")
    spilled = 0
    keyed: list[tuple[int, int, int, int]] = []
    counts: dict[str, int] = {}
    noted: list[tuple[str, int, str]] = []
    invalid = 0
    left_out: list[tuple[str, str, int, str]] = []
    infos: list[LogInfo] = []
    with open_logs(logs) as opened, no_gc():
        for log in opened:
            header = log.header
            if header.scorers is not None:
                for crit, rule in mapping.criteria.items():
                    if rule.scorer not in header.scorers:
                        raise BadInput(f"the mapping names scorer {rule.scorer!r} (criterion {crit!r}); the log's "
                                       f"scorers are {', '.join(header.scorers)}", source=header.location.url,
                                       field="scorers")
            infos.append(LogInfo(header, case_ids=mapping.case_ids, contract_cases=frozenset(loaded.cases)))
        for info in infos:
            header = info.header
            source = header.identity() | {"mapping_sha256": mapping_sha256, "log_status": header.status}
            if header.error is not None:
                source["log_error"] = header.error.message
            for sample in iter_log(header):
                info.samples += 1
                where = sample.key
                case_id = mapping.case_ids.get(str(sample.id), str(sample.id))
                if not _ID.fullmatch(case_id) or case_id not in loaded.cases:
                    if mapping.other_samples == "skip":
                        info.skipped += 1
                        continue
                    hint = (" (a case id has no '/': map it with the mapping's case_ids)" if "/" in case_id else
                            "; map it with the mapping's case_ids, or skip the samples that are no case with "
                            "other_samples: skip")
                    raise BadInput(f"sample id {sample.id!r} is not a case of the contract {loaded.path.name}{hint}",
                                   source=header.location.url, record=where, field="id")
                key = (case_id, sample.epoch)
                if key in seen:
                    raise BadInput(f"case {case_id!r} epoch {sample.epoch} is also in {seen[key]}; one log per "
                                   "repetition", source=header.location.url, record=where, field="epoch")
                seen[key] = header.name
                info.present.add(key)
                try:
                    out = repetition_record(sample, case_id, deterministic[case_id], mapping, source,
                                            accept_score_edits=accept_score_edits)
                except Refused as exc:
                    raise BadInput(exc.message, source=header.location.url, record=where, field=exc.field) from None
                if isinstance(out, str):
                    left_out.append((header.name, case_id, sample.epoch, out))
                else:
                    label = outcome(out)
                    counts[label] = counts.get(label, 0) + 1
                    invalid += out["execution_mode"] == "invalid"
                    noted.extend((case_id, sample.epoch, text) for text in notes(out))
                    line = orjson.dumps(out) + b"\n"
                    spill.write(line)
                    keyed.append((order[case_id], sample.epoch, spilled, len(line)))
                    spilled += len(line)
                if on_sample is not None:
                    on_sample()
            if info.samples == 0:
                raise BadInput("the log holds no samples", source=header.location.url, field="samples")
    absent = sorted(((info.name, sid, e) for info in infos for sid, e in info.absent()),
                    key=lambda t: (order.get(t[1], len(order)), t[1], t[2]))
    keyed.sort(key=lambda t: (t[0], t[1]))
    left_out.sort(key=lambda t: (order[t[1]], t[2]))
    noted.sort(key=lambda t: (order[t[0]], t[1]))
    written = set(seen) - {(case, epoch) for _, case, epoch, _ in left_out}
    missing = [(c.case_id, n) for c in loaded.contract.cases for n in range(1, c.planned_repetitions + 1)
               if (c.case_id, n) not in written]
    planned = sum(c.planned_repetitions for c in loaded.contract.cases)
    cases = len({case for case, _ in written})
    spill.flush()
    return Conversion(spill, keyed, counts, noted, invalid, cases, left_out, absent, infos, missing, planned)


def iter_log(header: LogHeader) -> Any:
    """The samples of one log (:func:`benchscore.sources.inspect_logs.iter_samples`)."""
    from benchscore.sources.inspect_logs import iter_samples

    return iter_samples(header)


__all__ = [
    "MODEL_GRADED_SCORERS", "Conversion", "LogInfo", "Refused", "check_mapping", "classify_approval",
    "classify_error", "convert", "error_types", "limit_outcome", "notes", "outcome", "parse_error",
    "repetition_record", "rule_satisfied", "shown_error",
]
