"""L01 (seed section 11): the local maximum-load test.

``total_agents`` agents, spread over ``worker_processes = logical CPUs`` forked processes, contend
on ONE shared pool of ``total_tasks`` no-op tasks split into one shard (capability) per worker
process; every agent may claim from every shard, so zero duplicate claims is earned by the
store's claim protocol, not given by a private pool per process. Afterwards every shard converges
and the ledger is audited.

``L01_PASS`` is claimed only at the seed's size (at least 128 agents and 131072 tasks): a smaller
run whose checks all hold is labelled ``reduced``, never PASS.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import Field

from benchscore.common.models import Format

from .agents import Agent, noop_handler
from .audit import audit_pool
from .blob import BlobStore
from .defaults import DEFAULT_MAX_OUTAGE, STRESS_LEASE_SECONDS
from .pool import RunNotFound, open_pool
from .run import redact, run_workers
from .tasks import TaskSpec


def l01_pass(
    *, worker_processes: int, logical_cpus: int, completed_tasks: int, total_tasks: int, failed_tasks: int,
    duplicate_claims: list, participating_agents: int, total_agents: int, converged_shards: int,
) -> bool:
    """Seed section 11: ``L01_PASS = worker_processes = logical_cpus ∧ completed_tasks = total_tasks ∧
    failed_tasks = 0 ∧ duplicate_claims = ∅ ∧ participating_agents = total_agents ∧
    converged_shards = worker_processes``."""
    return (
        worker_processes == logical_cpus
        and completed_tasks == total_tasks
        and failed_tasks == 0
        and not duplicate_claims
        and participating_agents == total_agents
        and converged_shards == worker_processes
    )


#: the seed's L01 size (section 1.1: 128 Agent, 131072 tasks)
SEED_AGENTS = 128
SEED_TASKS = 131072


def l01_verdict(checks_pass: bool, *, total_agents: int, total_tasks: int) -> str:
    """``PASS`` when the checks hold at the seed's size, ``reduced`` when they hold at a smaller
    size (not the seed's L01), ``FAIL`` otherwise."""
    if not checks_pass:
        return "FAIL"
    return "PASS" if total_agents >= SEED_AGENTS and total_tasks >= SEED_TASKS else "reduced"


def default_batch(total_tasks: int, total_agents: int) -> int:
    """A claim batch small enough that every agent claims several times, at most 512."""
    return max(1, min(512, total_tasks // max(1, total_agents * 4)))


class StressReport(Format):
    """The L01 report of ``benchscore swarm stress``."""

    run_id: str
    store: str
    redis: str | None
    logical_cpus: int
    worker_processes: int
    total_agents: int
    total_tasks: int
    batch: int
    completed_tasks: int
    failed_tasks: int
    duplicate_claims: list[int] = Field(description="from the ledger audit; the seed's ∅ is []")
    participating_agents: int = Field(description="agents with at least one claim in the ledger")
    converged_shards: int
    crashed_workers: int = Field(description="worker processes that died before reporting")
    expired_leases: int = Field(description="claims whose lease expired (ledger lease_expired events)")
    audit_verdict: str
    audit_violations: int
    ledger_events: int
    ledger_head: str = Field(description="sha256 head of the ledger's hash chain (hex)")
    completions_per_shard: dict[str, int] = Field(description="completed tasks per shard (capability), from the ledger")
    completions_per_second: list[int] = Field(
        description="completions in each second of the run phase, from the ledger's timestamps")
    redis_mirror: dict[str, Any] | None = Field(
        default=None, description="the mirror compared with the store after the run (and repaired if needed)")
    setup_time_s: float = Field(description="creating the tasks (and their create events)")
    run_time_s: float = Field(description="claims, no-op work and completions in all worker processes")
    check_time_s: float = Field(description="shard convergence and the ledger audit")
    wall_time_s: float = Field(description="setup + run + check")
    tasks_per_second: float = Field(description="tasks finished during the run phase / run_time_s (total_tasks / "
                                                "run_time_s unless the run was joined)")
    seed_size: bool = Field(description="at least the seed's 128 agents and 131072 tasks")
    checks_pass: bool = Field(description="the L01 formula (and a clean audit) at this run's size")
    L01_verdict: str = Field(description="PASS, FAIL, or reduced (the checks hold at a size below the seed's)")
    L01_PASS: bool = Field(description="checks_pass at the seed's size; a reduced run is never L01_PASS")
    service: dict[str, Any]
    claims_here: int = Field(default=0, description="claims this process's agents made (the whole run's unless "
                             "other processes worked it too, --join)")
    completions_here: int = Field(default=0, description="completions of this process's agents that the store "
                                  "accepted")
    joined: bool = Field(default=False, description="this process joined a stress run started before (--join): "
                         "counts, checks and audit are the whole run's, timings and crashed_workers this process's")
    provenance: dict[str, Any] | None = None


def run_stress(
    url: str, *, total_agents: int = 128, total_tasks: int = 131072, worker_processes: int | None = None,
    redis_url: str | None = None, batch: int | None = None, blob_root: str | None = None,
    run_id: str | None = None, on_progress: Callable[[dict[str, int]], None] | None = None,
    cleanup: bool = False, join: str | None = None, lease_seconds: float = STRESS_LEASE_SECONDS,
    max_outage: float = DEFAULT_MAX_OUTAGE,
) -> StressReport:
    """L01 on the store at ``url``; ``cleanup`` deletes the run (tasks, ledger, Redis keys) after
    the report is computed and reclaims the space (:meth:`TaskPool.reclaim_space`).

    ``join``: instead of creating a run, work the stress run of that id already in the store
    (stopped, or worked by other processes here or on other machines at the same time) with
    ``total_agents`` agents (the same names, ``agent-0000`` on, as the run that created it), then
    check the whole run; its tasks and shards are the run's, ``worker_processes`` defaults to its
    number of shards, and the per-second completions count from the run's creation."""
    logical_cpus = os.cpu_count() or 1
    if join is not None and run_id is not None:
        raise ValueError("--run-id and --join: give one (--join RUN_ID names the run to continue)")
    run_id = join or run_id or f"l01-{uuid.uuid4().hex[:12]}"
    t0 = time.perf_counter()
    wall0 = time.time()
    with open_pool(url, run_id, redis_url=redis_url, max_outage=max_outage) as pool:
        if join is not None:
            try:
                pool.settings  # noqa: B018
            except RunNotFound as exc:
                raise ValueError(f"--join {run_id}: {exc}; nothing to join") from None
            shards = pool.capabilities()
            counts = pool.counts()
            total_tasks = sum(counts.values())
            if not shards:
                raise ValueError(f"--join {run_id}: the run has no tasks")
            worker_processes = worker_processes or len(shards)
            run_start = pool.created_at()
        else:
            worker_processes = worker_processes or logical_cpus
            shards = [f"shard-{k:03d}" for k in range(worker_processes)]
            counts = {}
        if total_agents < worker_processes:
            raise ValueError(f"--agents {total_agents}: need at least one agent per worker process ({worker_processes})")
        if total_tasks < 1:
            raise ValueError("--tasks must be >= 1")
        batch = batch or default_batch(total_tasks, total_agents)
        agents = [Agent(f"agent-{i:04d}", shards, noop_handler) for i in range(total_agents)]
        if join is None:
            try:
                pool.create_run(crash_policy="requeue", lease_seconds=lease_seconds, tasks=(
                    TaskSpec(capability=shards[i % worker_processes], payload={}) for i in range(total_tasks)))
            except BaseException:
                pool.discard()  # a store file this run created, and holding nothing, is not left behind
                raise
        t1 = time.perf_counter()
        if join is None:
            run_start = wall0 + (t1 - t0)
        finished_before = counts.get("done", 0) + counts.get("failed", 0)

        def progress() -> None:
            if on_progress is not None:
                on_progress(pool.counts())

        stats, service, crashed = run_workers(url, run_id, agents, processes=worker_processes, batch=batch,
                                          redis_url=redis_url, on_progress=progress, max_outage=max_outage)
        t2 = time.perf_counter()
        blobs = BlobStore(blob_root) if blob_root else None
        converged = 0
        for shard in shards:
            result = pool.converge(shard)
            if result is not None:
                digest = blobs.put_json({"run_id": run_id, "shard": shard, **result.model_dump()}) if blobs else None
                pool.record_convergence(shard, result, digest)
                converged += 1
        audit = audit_pool(pool)
        per_shard, per_second = pool.completions_per_capability(), pool.completions_per_second(run_start)
        counts = pool.counts()
        mirror = pool.mirror.reconcile(pool) if pool.mirror is not None else None
        for k, v in pool.service_log.retries.items():
            service["retries"][k] = service["retries"].get(k, 0) + v
        service["incidents"].extend(pool.service_log.incidents)
        t3 = time.perf_counter()
        if cleanup:
            pool.delete_run()
            pool.reclaim_space()
    completed, failed = audit.tasks_done, audit.tasks_failed
    participating = len(audit.participating_agents)
    checks = l01_pass(
        worker_processes=worker_processes, logical_cpus=logical_cpus, completed_tasks=completed,
        total_tasks=total_tasks, failed_tasks=failed, duplicate_claims=audit.duplicate_claims,
        participating_agents=participating, total_agents=total_agents, converged_shards=converged,
    ) and counts["done"] == completed and audit.verdict == "PASS"
    verdict = l01_verdict(checks, total_agents=total_agents, total_tasks=total_tasks)
    worked = counts["done"] + counts["failed"] - finished_before
    return StressReport(
        run_id=run_id, store=redact(url) or url, redis=redact(redis_url), logical_cpus=logical_cpus,
        worker_processes=worker_processes, total_agents=total_agents, total_tasks=total_tasks, batch=batch,
        completed_tasks=completed, failed_tasks=failed, duplicate_claims=audit.duplicate_claims,
        participating_agents=participating, converged_shards=converged, crashed_workers=crashed,
        expired_leases=audit.lease_expiries, audit_verdict=audit.verdict, audit_violations=audit.violation_count,
        ledger_events=audit.events, ledger_head=audit.ledger_head, completions_per_shard=per_shard,
        completions_per_second=per_second, redis_mirror=mirror,
        setup_time_s=round(t1 - t0, 3), run_time_s=round(t2 - t1, 3), check_time_s=round(t3 - t2, 3),
        wall_time_s=round(t3 - t0, 3), tasks_per_second=round(worked / (t2 - t1), 1),
        seed_size=total_agents >= SEED_AGENTS and total_tasks >= SEED_TASKS, checks_pass=checks,
        L01_verdict=verdict, L01_PASS=verdict == "PASS", service=service, joined=join is not None,
        claims_here=stats.claimed, completions_here=stats.completed,
    )
