"""The swarm's model gateway and S08's model IO audit (issue 6, seed sections 8 and 13).

:class:`ModelGateway` wraps :class:`benchscore.common.llm.LLMClient`: models are chosen from
``GET /v1/models`` (never hard-coded), every call is charged to a TPM budget (the runtime's
ledger, or any object with ``reserve``/``reconcile``) and every request/response yields a
:class:`~benchscore.common.llm.CallRecord`. The records are the S08 model IO audit;
:func:`model_io_report` turns them into the report and its checks.

The API key is read from an environment variable named by the caller and handed to the client
only; it never appears in a record, a report or a ledger (a test greps for it).
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchscore.common.errors import BenchscoreError
from benchscore.common.llm import CallRecord, ChatResult, LLMClient, LLMError, ModelNotFound, TokenBudget
from benchscore.common.models import Format

DEFAULT_API_KEY_ENV = "BENCHSCORE_GATEWAY_API_KEY"

#: models a chat swarm must not pick from discovery (embeddings, speech, images, moderation, rerank)
NON_CHAT_MODEL = re.compile(
    r"(embed|embedding|whisper|tts|dall-e|dalle|image|moderation|rerank|bge-|text-search|davinci-00|babbage|ada-0)",
    re.IGNORECASE,
)


class GatewayUnavailable(BenchscoreError):
    """Discovery failed or did not offer enough usable chat models."""


def choose_models(discovered: Sequence[str], k: int, *, exclude: Sequence[str] = ()) -> list[str]:
    """The first ``k`` distinct chat models in discovery order (issue 6: models come from
    ``/v1/models``, never hard-coded).

    Non-chat models (names matching :data:`NON_CHAT_MODEL`), duplicates and ``exclude`` are
    skipped. Raises :class:`GatewayUnavailable` when fewer than ``k`` remain.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    out: list[str] = []
    for m in discovered:
        if m in out or m in exclude or NON_CHAT_MODEL.search(m):
            continue
        out.append(m)
        if len(out) == k:
            return out
    raise GatewayUnavailable(
        f"discovery offered {len(out)} usable chat model(s) ({', '.join(out) or 'none'}), {k} needed")


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
        with self._lock:
            return self._issued

    def discover(self) -> list[str]:
        """``GET /v1/models``; the list is kept in :attr:`discovered`."""
        try:
            self.discovered = self.client.list_models()
        except LLMError as exc:
            raise GatewayUnavailable(str(exc)) from None
        return list(self.discovered)

    def select_models(self, k: int, *, probe: bool = True) -> list[str]:
        """``k`` distinct models chosen from discovery. With ``probe``, each candidate answers one
        tiny call first; a model the gateway lists but does not serve (NewAPI's HTTP 200
        ``model_not_found``) is skipped and the next one is tried."""
        if not self.discovered:
            self.discover()
        chosen: list[str] = []
        rejected: list[str] = []
        while len(chosen) < k:
            try:
                nxt = choose_models(self.discovered, len(chosen) + 1, exclude=rejected)[-1]
            except GatewayUnavailable:
                raise GatewayUnavailable(
                    f"only {len(chosen)} of {k} discovered models answered "
                    f"(unusable: {', '.join(rejected) or 'none'})") from None
            if probe:
                try:
                    self.chat(nxt, [{"role": "user", "content": "Reply with the word ready."}], max_tokens=8)
                except ModelNotFound:
                    rejected.append(nxt)
                    continue
                except LLMError:
                    rejected.append(nxt)
                    continue
            chosen.append(nxt)
        return chosen

    def chat(self, model: str, messages: Sequence[dict[str, Any]], *, max_tokens: int | None = None,
             temperature: float = 0.0) -> ChatResult:
        """One budgeted, audited chat call (raises :class:`~benchscore.common.llm.LLMError`)."""
        with self._lock:
            self._issued += 1
        return self.client.chat(model, messages, max_tokens=max_tokens, temperature=temperature)

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
    failed: int
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
    calls_failed: int
    tokens_in: int
    tokens_out: int
    reserved_tokens: int
    cost: float | None
    models: tuple[ModelUsage, ...]
    failures: tuple[dict[str, Any], ...]
    checks: tuple[AuditCheck, ...]
    S08_PASS: bool
    records: tuple[CallRecord, ...]


def model_io_report(records: Sequence[CallRecord], *, endpoint: str, mode: str, calls_issued: int,
                    secrets: Sequence[str] = (), budget_windows: Mapping[int, int] | None = None,
                    target_tpm: int | None = None) -> ModelIOReport:
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
    """
    recs = list(records)
    ok = [r for r in recs if r.status == "ok"]
    failed = [r for r in recs if r.status != "ok"]
    by_model: dict[str, list[CallRecord]] = {}
    for r in recs:
        by_model.setdefault(r.model, []).append(r)
    models = []
    for name in sorted(by_model):
        rs = by_model[name]
        costs = [r.cost for r in rs if r.cost is not None]
        models.append(ModelUsage(
            model=name, calls=len(rs), ok=sum(r.status == "ok" for r in rs), failed=sum(r.status != "ok" for r in rs),
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
    no_reason = [r.call_id for r in failed if not r.error]
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
        checks=tuple(checks), S08_PASS=all(c.passed for c in checks), records=tuple(recs),
    )


def render_model_io_markdown(report: ModelIOReport) -> str:
    """The S08 report as Markdown (per-model table, failures, checks)."""
    lines = [
        "# S08 model IO audit",
        "",
        f"- endpoint: `{report.endpoint}` (mode: **{report.mode}**)",
        f"- calls: {report.calls_recorded} recorded of {report.calls_issued} issued; "
        f"{report.calls_ok} ok, {report.calls_failed} failed",
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
    if report.failures:
        lines += ["", "## Failed calls", "", "| call | model | HTTP | attempts | reason |", "| --- | --- | --- | --- | --- |"]
        for f in report.failures:
            reason = str(f["error"]).replace("|", "/")
            lines.append(f"| {f['call_id']} | {f['model']} | {f['http_status']} | {f['attempts']} | {reason} |")
    return "\n".join(lines) + "\n"
