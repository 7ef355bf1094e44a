"""Run the acceptance scenarios and assemble the matrix (used by ``benchscore swarm accept``)."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchscore.common.errors import BadInput
from benchscore.common.testserver import OpenAITestServer

from ..gateway import DEFAULT_API_KEY_ENV, ModelGateway, ModelIOReport, model_io_report
from .a04 import run_a04
from .evidence import Check, ScenarioResult
from .matrix import AcceptanceMatrix, a01_static_compile, a02, a03, a04_scenario, a05, build_matrix, not_run
from .s07 import largest_step_reservation, run_s07
from .s09 import run_s09
from .s10 import run_s10

SCENARIOS = ("S07", "S08", "S09", "S10", "L01", "L02")
#: what the replay test server lists: one non-chat model (skipped by selection) and three chat models
REPLAY_MODELS = ("text-embedding-replay", "replay-coder-a", "replay-coder-b", "replay-coder-c")


@dataclass
class AcceptOptions:
    store: str | None = None
    redis_url: str | None = None
    blob_root: Path | None = None
    base_url: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    junit: Path | None = None
    quick: bool = False
    tpm: int = 100_000
    sdist: Path | None = None
    #: seconds one live model call may take before it is retried (then fails)
    timeout: float = 60.0
    prefix: str = field(default_factory=lambda: f"accept-{uuid.uuid4().hex[:8]}")


@dataclass
class AcceptOutcome:
    results: dict[str, ScenarioResult]
    closed_loop: dict[str, ScenarioResult]
    matrix: AcceptanceMatrix | None
    model_io: ModelIOReport | None


#: why a scenario that ran against the built-in test server is ``replay``
REPLAY_REASON = "local OpenAI-compatible test server with a deterministic responder"


def s08_result(report: ModelIOReport) -> ScenarioResult:
    """S08 as a scenario, from its model IO report (a report read back from its file gives the same
    scenario, so its verdict is the same wherever it is shown)."""
    return ScenarioResult(
        scenario="S08", mode=report.mode, passed=report.S08_PASS,
        reason="" if report.mode == "live" else REPLAY_REASON if report.mode == "replay" else "",
        checks=tuple(Check(name=c.name, passed=c.passed, condition=c.condition, evidence={"evidence": c.evidence})
                     for c in report.checks))


def _budget(store: str, budget_id: str, tpm: int, simulated: bool):
    from benchscore.swarm import TPMBudget

    return TPMBudget(store, budget_id, tpm, simulated=simulated)


def run_s07_s08(opts: AcceptOptions, store: str, blob_root: Path) -> tuple[ScenarioResult, ScenarioResult,
                                                                          ModelIOReport]:
    """S07 through a live gateway (``base_url``) or the local replay server; S08 from its calls."""
    need = largest_step_reservation()
    if opts.tpm < need:
        raise BadInput(f"--tpm {opts.tpm}: below the largest single S07 call reservation ({need} tokens)")
    budget = _budget(store, f"{opts.prefix}-s07-tpm", opts.tpm, simulated=opts.base_url is None)
    try:
        if opts.base_url:
            key = os.environ.get(opts.api_key_env) or None
            mode = "live"
            with ModelGateway(opts.base_url, api_key=key, budget=budget, timeout=opts.timeout) as gw:
                s07, _ = run_s07(gw, store, mode=mode, redis_url=opts.redis_url, blob_root=blob_root,
                                 prefix=opts.prefix, sdist=opts.sdist)
                report = model_io_report(gw.records, endpoint=gw.endpoint, mode=mode, calls_issued=gw.calls_issued,
                                         secrets=[key] if key else [], budget_windows=budget.windows(),
                                         target_tpm=opts.tpm, constraint_probes=gw.client.constraint_probes)
        else:
            mode = "replay"
            canary = f"sk-replay-canary-{uuid.uuid4().hex}"
            from .s07 import replay_responder

            with OpenAITestServer(models=REPLAY_MODELS, responder=replay_responder, api_key=canary,
                                  cost_per_token=0.000002) as srv, \
                    ModelGateway(srv.base_url, api_key=canary, budget=budget, backoff_base=0.01) as gw:
                s07, _ = run_s07(gw, store, mode=mode, redis_url=opts.redis_url, blob_root=blob_root,
                                 prefix=opts.prefix, sdist=opts.sdist)
                report = model_io_report(gw.records, endpoint=gw.endpoint, mode=mode, calls_issued=gw.calls_issued,
                                         secrets=[canary], budget_windows=budget.windows(), target_tpm=opts.tpm,
                                         constraint_probes=gw.client.constraint_probes)
    finally:
        budget.close()
    reason = "" if mode == "live" else REPLAY_REASON
    s07 = s07.model_copy(update={"reason": reason})
    s08 = s08_result(report).model_copy(update={"details": {"calls_recorded": report.calls_recorded, "calls_failed": report.calls_failed,
                 "probe_refusals": len(report.probe_refusals),
                 "constraints": {m: p.mode for m, p in report.constraints.items()},
                 "tokens_in": report.tokens_in, "tokens_out": report.tokens_out, "endpoint": report.endpoint}})
    return s07, s08, report


def _l01(store: str, quick: bool) -> ScenarioResult:
    if quick:
        return not_run("L01", "skipped by --quick (128 agents x 131072 tasks; run `benchscore swarm accept L01`)")
    from benchscore.swarm.stress import l01_pass, run_stress

    r = run_stress(store)
    recomputed = l01_pass(worker_processes=r.worker_processes, logical_cpus=r.logical_cpus,
                          completed_tasks=r.completed_tasks, total_tasks=r.total_tasks, failed_tasks=r.failed_tasks,
                          duplicate_claims=r.duplicate_claims, participating_agents=r.participating_agents,
                          total_agents=r.total_agents, converged_shards=r.converged_shards)
    keys = ("worker_processes", "logical_cpus", "total_agents", "total_tasks", "completed_tasks", "failed_tasks",
            "participating_agents", "converged_shards", "wall_time_s", "tasks_per_second")
    ev = {k: getattr(r, k) for k in keys} | {"duplicate_claims": len(r.duplicate_claims), "run_id": r.run_id}
    check = Check(name="L01_PASS", passed=recomputed and r.L01_PASS, condition=(
        "worker_processes = logical_cpus, completed_tasks = total_tasks, failed_tasks = 0, no duplicate claim, "
        "participating_agents = total_agents, converged_shards = worker_processes"), evidence=ev)
    return ScenarioResult(scenario="L01", mode="local", passed=check.passed, checks=(check,))


def _l02(store: str) -> ScenarioResult:
    from benchscore.swarm.budget import run_l02

    r = run_l02(3000, 50, url=store if store.startswith("postgres") else None)
    keys = ("target_tpm", "tokens_per_task", "task_count", "total_reserved_tokens", "simulated_minutes",
            "max_tokens_in_a_minute", "budget_utilization", "completed_tasks", "failed_tasks", "participating_agents",
            "agent_count", "converged")
    ev = {k: getattr(r, k) for k in keys} | {"duplicate_claims": len(r.duplicate_claims),
                                              "tokens_by_minute": r.tokens_by_minute}
    check = Check(name="L02_PASS", passed=r.L02_PASS, condition=(
        "target_tpm = 3000, max tokens in a minute <= 3000, total_reserved_tokens = 3000, budget_utilization = 1.0, "
        "every task completed, none failed, no duplicate claim, every agent took part, converged"), evidence=ev)
    return ScenarioResult(scenario="L02", mode="local", passed=check.passed, checks=(check,))


def run_acceptance(which: str, opts: AcceptOptions, on_step: Callable[[str], None] | None = None) -> AcceptOutcome:
    """Run one scenario (``S07`` ... ``L02``) or ``all`` (then also A01-A07 and the matrix)."""
    step = on_step or (lambda name: None)
    with tempfile.TemporaryDirectory(prefix="benchscore-accept-") as tmp:
        store = opts.store or f"sqlite:///{Path(tmp) / 'accept.db'}"
        blob_root = opts.blob_root or Path(tmp) / "blobs"
        results: dict[str, ScenarioResult] = {}
        report: ModelIOReport | None = None
        wanted = SCENARIOS if which == "all" else (which,)
        if "S07" in wanted or "S08" in wanted:
            step("S07/S08")
            s07, s08, report = run_s07_s08(opts, store, blob_root)
            results.update({"S07": s07, "S08": s08})
        if "S09" in wanted or "S10" in wanted:
            step("S09")
            results["S09"] = run_s09(store, redis_url=opts.redis_url, blob_root=blob_root, prefix=opts.prefix)
        if "S10" in wanted:
            step("S10")
            from .s09 import ClaimRunEvidence

            scale = [ClaimRunEvidence(**r) for r in results["S09"].checks[0].evidence["runs"]]
            results["S10"] = run_s10(store, redis_url=opts.redis_url, blob_root=blob_root, prefix=opts.prefix,
                                     scale_runs=scale)
        if "L01" in wanted:
            step("L01")
            results["L01"] = _l01(store, opts.quick and which == "all")
        if "L02" in wanted:
            step("L02")
            results["L02"] = _l02(store)
        if which != "all":
            return AcceptOutcome({k: v for k, v in results.items() if k == which}, {}, None, report)
        step("A01-A07")
        closed = {
            "A01_static_compile": a01_static_compile(),
            "A02_unit_and_deterministic_scenarios": a02(opts.junit),
            "A03_swarm_behavior_acceptance": a03(results["S09"], results["S10"]),
            "A04_swarm_vs_traditional_benchmark": a04_scenario(run_a04()),
            "A05_consensus_convergence_acceptance": a05(results["S07"], results["S09"]),
            "A06_next_boundary_minimal_acceptance": results["S09"],
            "A07_swarm_six_characteristics_acceptance": results["S10"],
        }
        return AcceptOutcome(results, closed, build_matrix(results, closed), report)
