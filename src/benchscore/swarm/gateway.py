"""The swarm's model gateway and S08's model IO audit (issue 6, seed sections 8 and 13).

:class:`ModelGateway` wraps :class:`benchscore.common.llm.LLMClient`: models are chosen from
``GET /v1/models`` (never hard-coded) and told apart by a fingerprint probe, so that aliases of one
model (a llama.cpp server listing one set of weights under several names) count once
(:meth:`ModelGateway.identify_models`); every call is charged to a TPM budget (the runtime's
ledger, or any object with ``reserve``/``reconcile``) and every request/response yields a
:class:`~benchscore.common.llm.CallRecord`. The records are the S08 model IO audit;
:func:`model_io_report` turns them into the report and its checks.

The API key is read from an environment variable named by the caller and handed to the client
only; it never appears in a record, a report or a ledger (a test greps for it).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from benchscore.common.errors import BenchscoreError
from benchscore.common.llm import (
    AnswerFormat,
    CallRecord,
    ChatResult,
    ConstraintProbe,
    LLMClient,
    LLMError,
    TokenBudget,
    probe_refusal,
)
from benchscore.common.models import Format

DEFAULT_API_KEY_ENV = "BENCHSCORE_GATEWAY_API_KEY"

#: models a chat swarm must not pick from discovery (embeddings, speech, images, moderation, rerank)
NON_CHAT_MODEL = re.compile(
    r"(embed|embedding|whisper|tts|dall-e|dalle|image|moderation|rerank|bge-|text-search|davinci-00|babbage|ada-0)",
    re.IGNORECASE,
)


class GatewayUnavailable(BenchscoreError):
    """Discovery failed or did not offer enough usable chat models."""


def chat_models(discovered: Sequence[str]) -> list[str]:
    """The chat models of a discovery list, in its order (issue 6: models come from ``/v1/models``,
    never hard-coded): non-chat models (names matching :data:`NON_CHAT_MODEL`) and repeats are skipped."""
    return [m for m in dict.fromkeys(discovered) if not NON_CHAT_MODEL.search(m)]


# -- telling models apart: aliases of one model are one model ------------------------------------

#: the fingerprint probe: at temperature 0 the same weights give the same short answer, and two
#: models rarely give the same one (nor count the prompt's tokens alike unless they share a tokenizer)
FINGERPRINT_MESSAGES: tuple[dict[str, str], ...] = (
    {"role": "user", "content": "Reply with the word ready, then name three animals and one number between 1 and 1000."},
)
FINGERPRINT_MAX_TOKENS = 24
#: probes per model: two, so that an answer that does not repeat is seen (it then proves nothing)
FINGERPRINT_PROBES = 2


class ModelProbe(Format):
    """What the fingerprint probes of one discovered model returned."""

    model: str
    answers_sha256: tuple[str, ...] = ()
    prompt_tokens: int | None = None
    error: str = ""

    @property
    def answered(self) -> bool:
        return not self.error and len(self.answers_sha256) == FINGERPRINT_PROBES

    @property
    def reproducible(self) -> bool:
        return self.answered and len(set(self.answers_sha256)) == 1


class ModelIdentity(Format):
    """One probed model and which model it is: ``same_model_as`` names the first listed model it
    could not be told apart from (``None``: it is a distinct model, or did not answer)."""

    model: str
    answered: bool
    reproducible: bool
    prompt_tokens: int | None
    answers_sha256: tuple[str, ...]
    same_model_as: str | None
    relation: str
    error: str = ""


def proven_distinct(a: ModelProbe, b: ModelProbe) -> tuple[bool, str]:
    """Whether two answered models are shown to be different weights, and why (or why not).

    Different: their tokenizers count the probe's prompt differently, or both answer the probe
    the same way every time (temperature 0) and their answers differ. Identical repeatable
    answers with the same prompt token count are one model under two names (aliases); answers
    that do not repeat, with the same token count, cannot tell the two apart.
    """
    if a.prompt_tokens is not None and b.prompt_tokens is not None and a.prompt_tokens != b.prompt_tokens:
        return True, f"distinct from {b.model}: prompt counted as {a.prompt_tokens} vs {b.prompt_tokens} tokens"
    if a.reproducible and b.reproducible:
        if a.answers_sha256[0] != b.answers_sha256[0]:
            return True, f"distinct from {b.model}: different repeatable answers"
        return False, f"alias of {b.model}: identical answers and prompt tokens"
    return False, (f"not told apart from {b.model}: answers do not repeat at temperature 0 and the prompt "
                   "token counts agree")


def group_models(probes: Sequence[ModelProbe]) -> list[ModelIdentity]:
    """Each answered model, in discovery order, is the same model as the first distinct model it is
    not :func:`proven_distinct` from; otherwise it is a new distinct model. Aliases of one model
    are never counted twice (a model that cannot be told apart counts as the same)."""
    distinct: list[ModelProbe] = []
    out = []
    for p in probes:
        common = dict(model=p.model, answered=p.answered, reproducible=p.reproducible, prompt_tokens=p.prompt_tokens,
                      answers_sha256=p.answers_sha256, error=p.error)
        if not p.answered:
            out.append(ModelIdentity(**common, same_model_as=None, relation=f"did not answer: {p.error}"))
            continue
        same, why = None, []
        for d in distinct:
            apart, reason = proven_distinct(p, d)
            if not apart:
                same, why = d.model, [reason]
                break
            why.append(reason)
        if same is None:
            distinct.append(p)
        out.append(ModelIdentity(**common, same_model_as=same, relation="; ".join(why) or "first distinct model"))
    return out


class ModelSelection(Format):
    """The models S07 uses: every probed model's identity and the distinct ones, in discovery order."""

    discovered: tuple[str, ...]
    identities: tuple[ModelIdentity, ...]
    distinct_models: tuple[str, ...]


class ModelGateway:
    """Discovery, budgeted calls and a complete audit of every call (thread-safe)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        budget: TokenBudget | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        on_record: Callable[[CallRecord], None] | None = None,
    ) -> None:
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        self._issued = 0
        self._extra_on_record = on_record
        try:
            self.client = LLMClient(base_url, api_key, timeout=timeout, max_retries=max_retries, budget=budget,
                                    on_record=self._record, backoff_base=backoff_base)
        except ValueError as exc:
            raise GatewayUnavailable(str(exc)) from None
        self.endpoint = self.client.endpoint
        self.discovered: list[str] = []

    @classmethod
    def from_env(cls, base_url: str, api_key_env: str = DEFAULT_API_KEY_ENV, **kw: Any) -> ModelGateway:
        """A gateway whose key comes from the environment variable ``api_key_env`` (may be unset)."""
        return cls(base_url, api_key=os.environ.get(api_key_env) or None, **kw)

    def _record(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)
        if self._extra_on_record is not None:
            self._extra_on_record(record)

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    @property
    def calls_issued(self) -> int:
        """Every call the client started: answers, fingerprint probes and constraint probes."""
        return self.client.calls_issued

    def discover(self) -> list[str]:
        """``GET /v1/models``; the list is kept in :attr:`discovered`."""
        try:
            self.discovered = self.client.list_models()
        except LLMError as exc:
            raise GatewayUnavailable(str(exc)) from None
        return list(self.discovered)

    def _probe(self, model: str) -> ModelProbe:
        answers, prompt_tokens = [], None
        for _ in range(FINGERPRINT_PROBES):
            try:
                r = self.chat(model, FINGERPRINT_MESSAGES, max_tokens=FINGERPRINT_MAX_TOKENS)
            except LLMError as exc:  # model_not_found (listed, not served), failed call: recorded, skipped
                detail = exc.record.error if exc.record is not None and exc.record.error else str(exc)
                return ModelProbe(model=model, error=f"{type(exc).__name__}: {detail}")
            answers.append(hashlib.sha256(r.text.strip().encode()).hexdigest())
            prompt_tokens = r.record.tokens_in
        return ModelProbe(model=model, answers_sha256=tuple(answers), prompt_tokens=prompt_tokens)

    def identify_models(self, k: int) -> ModelSelection:
        """Up to ``k`` distinct models from discovery: the chat models are probed in discovery
        order (:data:`FINGERPRINT_PROBES` fingerprint calls each, audited like every call) until
        ``k`` distinct ones are found (:func:`group_models`: aliases of one model count once).
        Fewer than ``k`` is a result, not an error; none answering raises :class:`GatewayUnavailable`."""
        if k < 1:
            raise ValueError("k must be >= 1")
        if not self.discovered:
            self.discover()
        probes: list[ModelProbe] = []
        identities: list[ModelIdentity] = []
        for model in chat_models(self.discovered):
            probes.append(self._probe(model))
            identities = group_models(probes)
            if sum(1 for i in identities if i.answered and i.same_model_as is None) == k:
                break
        distinct = tuple(i.model for i in identities if i.answered and i.same_model_as is None)
        if not distinct:
            tried = "; ".join(f"{i.model}: {i.error}" for i in identities) or "no chat model listed"
            raise GatewayUnavailable(f"no discovered chat model answered ({tried})")
        return ModelSelection(discovered=tuple(self.discovered), identities=tuple(identities), distinct_models=distinct)

    def chat(self, model: str, messages: Sequence[dict[str, Any]], *, max_tokens: int | None = None,
             temperature: float = 0.0, answer_format: AnswerFormat | None = None,
             constraint: str | None = None) -> ChatResult:
        """One budgeted, audited chat call (raises :class:`~benchscore.common.llm.LLMError`); with
        ``answer_format``, under the constraint the endpoint enforces for ``model`` (probed once, audited)."""
        with self._lock:
            self._issued += 1
        return self.client.chat(model, messages, max_tokens=max_tokens, temperature=temperature,
                                answer_format=answer_format, constraint=constraint)

    def constraint_for(self, model: str) -> str:
        """The constraint mode the endpoint enforces for ``model`` (``none``: free text), probed once."""
        return self.client.constraint_for(model).mode

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> ModelGateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- S08: the model IO audit report --------------------------------------------------------------


class ModelUsage(Format):
    model: str
    calls: int
    ok: int
    failed: int = Field(description="failed calls; a constraint probe the endpoint refused is not one")
    probe_refusals: int = Field(default=0, description="constraint probes the endpoint refused (a finding)")
    tokens_in: int
    tokens_out: int
    latency_s_max: float
    latency_s_mean: float
    cost: float | None


class AuditCheck(Format):
    name: str
    passed: bool
    condition: str
    evidence: str


class ModelIOReport(Format):
    """S08: every model call of a run, per-model totals, failures with reasons, and the checks."""

    endpoint: str
    mode: str
    calls_issued: int
    calls_recorded: int
    calls_ok: int
    calls_failed: int = Field(description="calls that failed; constraint probes the endpoint refused are not "
                                          "counted here but in probe_refusals")
    tokens_in: int
    tokens_out: int
    reserved_tokens: int
    cost: float | None
    models: tuple[ModelUsage, ...]
    failures: tuple[dict[str, Any], ...]
    probe_refusals: tuple[dict[str, Any], ...] = Field(
        default=(), description="constraint probes the endpoint refused (call_id, model, constraint, http_status, "
                                "error): how the endpoint answers a constraint it does not take, not failed calls")
    constraints: dict[str, ConstraintProbe] = Field(
        default_factory=dict, description="model -> the constraint chosen for its structured answers and every "
                                          "mode its probe tried, with the outcome")
    checks: tuple[AuditCheck, ...]
    S08_PASS: bool
    records: tuple[CallRecord, ...]
    provenance: dict[str, Any] | None = None


def model_io_report(records: Sequence[CallRecord], *, endpoint: str, mode: str, calls_issued: int,
                    secrets: Sequence[str] = (), budget_windows: Mapping[int, int] | None = None,
                    target_tpm: int | None = None,
                    constraint_probes: Sequence[ConstraintProbe] = ()) -> ModelIOReport:
    """Build the S08 model IO audit from the call records (issue 6).

    ``S08_PASS`` holds when every check holds:
    ``calls_recorded >= 1``; ``every_call_recorded`` (records == calls the gateway issued);
    ``records_complete`` (every record has model, prompt sha256 (64 hex), status, attempts >= 1
    and a finite latency); ``ok_calls_have_usage`` (tokens in and out on every ``ok`` record);
    ``failed_calls_have_reasons`` (an error on every ``failed`` record); ``no_secret_in_records``
    (none of ``secrets`` appears in any record); and, when the calls went through a TPM budget
    (``budget_windows``: minute -> tokens after reconciliation), ``budget_charged``: the windows hold
    at least the ``total_tokens`` of every ok call and none exceeds ``target_tpm``. Failed calls do
    not fail S08: they must be recorded with their reason, which is what the audit is for.

    A constraint probe the endpoint refused (:func:`~benchscore.common.llm.probe_refusal`: e.g. HTTP
    500 for ``json_schema`` on a server that takes only ``json_object``) is recorded like every call
    but is not a failed call: it is listed in ``probe_refusals``, and ``constraints`` says which
    mode each model's probe chose (``constraint_probes``).
    """
    recs = list(records)
    ok = [r for r in recs if r.status == "ok"]
    refused = [r for r in recs if probe_refusal(r)]
    failed = [r for r in recs if r.status != "ok" and not probe_refusal(r)]
    by_model: dict[str, list[CallRecord]] = {}
    for r in recs:
        by_model.setdefault(r.model, []).append(r)
    models = []
    for name in sorted(by_model):
        rs = by_model[name]
        costs = [r.cost for r in rs if r.cost is not None]
        models.append(ModelUsage(
            model=name, calls=len(rs), ok=sum(r.status == "ok" for r in rs),
            failed=sum(r.status != "ok" and not probe_refusal(r) for r in rs),
            probe_refusals=sum(probe_refusal(r) for r in rs),
            tokens_in=sum(r.tokens_in or 0 for r in rs), tokens_out=sum(r.tokens_out or 0 for r in rs),
            latency_s_max=max(r.latency_s for r in rs), latency_s_mean=math.fsum(r.latency_s for r in rs) / len(rs),
            cost=math.fsum(costs) if costs else None,
        ))
    dumped = "\n".join(r.model_dump_json() for r in recs)
    leaked = [i for i, s in enumerate(secrets) if s and s in dumped]
    incomplete = [r.call_id for r in recs if not (r.model and re.fullmatch(r"[0-9a-f]{64}", r.prompt_sha256)
                                                 and r.status in ("ok", "failed") and r.attempts >= 1
                                                 and math.isfinite(r.latency_s))]
    no_usage = [r.call_id for r in ok if r.tokens_in is None or r.tokens_out is None]
    no_reason = [r.call_id for r in failed + refused if not r.error]
    checks = [
        AuditCheck(name="calls_recorded", passed=len(recs) >= 1, condition="at least one call record",
                   evidence=f"{len(recs)} records"),
        AuditCheck(name="every_call_recorded", passed=len(recs) == calls_issued,
                   condition="one record per call the gateway issued",
                   evidence=f"{calls_issued} calls issued, {len(recs)} records"),
        AuditCheck(name="records_complete", passed=not incomplete,
                   condition="every record has model, prompt sha256, status, attempts >= 1 and a finite latency",
                   evidence=f"incomplete: {incomplete[:5]}"),
        AuditCheck(name="ok_calls_have_usage", passed=not no_usage, condition="every ok call has tokens in and out",
                   evidence=f"ok without usage: {no_usage[:5]}"),
        AuditCheck(name="failed_calls_have_reasons", passed=not no_reason,
                   condition="every failed call has its error recorded",
                   evidence=f"{len(failed)} failed, without reason: {no_reason[:5]}"),
        AuditCheck(name="no_secret_in_records", passed=not leaked, condition="no API key appears in any record",
                   evidence=f"{len(secrets)} secret(s) searched, {len(leaked)} found"),
    ]
    if budget_windows is not None:
        used = sum(r.total_tokens or 0 for r in ok)
        charged = sum(budget_windows.values())
        peak = max(budget_windows.values(), default=0)
        checks.append(AuditCheck(
            name="budget_charged", passed=charged >= used and (target_tpm is None or peak <= target_tpm),
            condition="the TPM budget's windows hold every token the ok calls used, none above the target",
            evidence=f"{charged} tokens in {len(budget_windows)} window(s) for {used} used by ok calls; "
                     f"busiest window {peak} of {target_tpm}"))
    all_costs = [r.cost for r in recs if r.cost is not None]
    return ModelIOReport(
        endpoint=endpoint, mode=mode, calls_issued=calls_issued, calls_recorded=len(recs), calls_ok=len(ok),
        calls_failed=len(failed), tokens_in=sum(r.tokens_in or 0 for r in recs),
        tokens_out=sum(r.tokens_out or 0 for r in recs), reserved_tokens=sum(r.reserved_tokens or 0 for r in recs),
        cost=math.fsum(all_costs) if all_costs else None, models=tuple(models),
        failures=tuple({"call_id": r.call_id, "model": r.model, "http_status": r.http_status, "error": r.error,
                        "attempts": r.attempts} for r in failed),
        probe_refusals=tuple({"call_id": r.call_id, "model": r.model, "constraint": r.constraint,
                              "http_status": r.http_status, "error": r.error} for r in refused),
        constraints={p.model: p for p in constraint_probes},
        checks=tuple(checks), S08_PASS=all(c.passed for c in checks), records=tuple(recs),
    )


def constraint_trials(probe: ConstraintProbe) -> str:
    """``json_schema rejected: HTTP 500 ...; json_object_schema enforced``: every mode a probe tried."""
    return "; ".join(f"{t['mode']} {t['outcome']}" for t in probe.tried) or "nothing tried"


def render_model_io_markdown(report: ModelIOReport) -> str:
    """The S08 report as Markdown (per-model table, failures, checks)."""
    lines = [
        "# S08 model IO audit",
        "",
        f"- endpoint: `{report.endpoint}` (mode: **{report.mode}**)",
        f"- calls: {report.calls_recorded} recorded of {report.calls_issued} issued; "
        f"{report.calls_ok} ok, {report.calls_failed} failed"
        + (f", {len(report.probe_refusals)} constraint probe(s) refused by the endpoint (not failures)"
           if report.probe_refusals else ""),
        f"- tokens: {report.tokens_in} in, {report.tokens_out} out; {report.reserved_tokens} reserved",
        f"- cost: {report.cost if report.cost is not None else 'not reported by the gateway'}",
        f"- S08_PASS: **{'PASS' if report.S08_PASS else 'FAIL'}**",
        "",
        "| model | calls | ok | failed | tokens in | tokens out | mean latency s | max latency s | cost |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m in report.models:
        lines.append(f"| {m.model} | {m.calls} | {m.ok} | {m.failed} | {m.tokens_in} | {m.tokens_out} | "
                     f"{m.latency_s_mean:.4f} | {m.latency_s_max:.4f} | {'' if m.cost is None else f'{m.cost:.6f}'} |")
    lines += ["", "## Checks", "", "| check | result | evidence |", "| --- | --- | --- |"]
    for c in report.checks:
        lines.append(f"| {c.name} | {'PASS' if c.passed else 'FAIL'} | {c.evidence} |")
    if report.constraints:
        lines += ["", "## Constraints chosen (probed once per model)", "", "| model | chosen | tried |",
                  "| --- | --- | --- |"]
        lines += [f"| {m} | {p.mode} | {constraint_trials(p).replace('|', '/')} |" for m, p in report.constraints.items()]
    if report.failures:
        lines += ["", "## Failed calls", "", "| call | model | HTTP | attempts | reason |", "| --- | --- | --- | --- | --- |"]
        for f in report.failures:
            reason = str(f["error"]).replace("|", "/")
            lines.append(f"| {f['call_id']} | {f['model']} | {f['http_status']} | {f['attempts']} | {reason} |")
    return "\n".join(lines) + "\n"
