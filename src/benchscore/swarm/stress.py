"""L01 (seed section 11): the local maximum-load test.

``total_agents`` agents, spread over ``worker_processes = logical CPUs`` forked processes, contend
on ONE shared pool of ``total_tasks`` no-op tasks split into one shard (capability) per worker
process; every agent may claim from every shard, so zero duplicate claims is earned by the
store's claim protocol, not given by a private pool per process. Afterwards every shard converges
and the ledger is audited.
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
from .pool import open_pool
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
    audit_verdict: str
    setup_time_s: float = Field(description="creating the tasks (and their create events)")
    run_time_s: float = Field(description="claims, no-op work and completions in all worker processes")
    check_time_s: float = Field(description="shard convergence and the ledger audit")
    wall_time_s: float = Field(description="setup + run + check")
    tasks_per_second: float = Field(description="total_tasks / run_time_s")
    L01_PASS: bool
    service: dict[str, Any]
    provenance: dict[str, Any] | None = None


def run_stress(
    url: str, *, total_agents: int = 128, total_tasks: int = 131072, worker_processes: int | None = None,
    redis_url: str | None = None, batch: int | None = None, blob_root: str | None = None,
    run_id: str | None = None, on_progress: Callable[[dict[str, int]], None] | None = None,
    cleanup: bool = False,
) -> StressReport:
    """L01 on the store at ``url``; ``cleanup`` deletes the run (tasks, ledger, Redis keys) after
    the report is computed."""
    logical_cpus = os.cpu_count() or 1
    worker_processes = worker_processes or logical_cpus
    if total_agents < worker_processes:
        raise ValueError(f"--agents {total_agents}: need at least one agent per worker process ({worker_processes})")
    if total_tasks < 1:
        raise ValueError("--tasks must be >= 1")
    batch = batch or default_batch(total_tasks, total_agents)
    run_id = run_id or f"l01-{uuid.uuid4().hex[:12]}"
    shards = [f"shard-{k:03d}" for k in range(worker_processes)]
    agents = [Agent(f"agent-{i:04d}", shards, noop_handler) for i in range(total_agents)]
    t0 = time.perf_counter()
    with open_pool(url, run_id, redis_url=redis_url) as pool:
        pool.create_run(crash_policy="requeue", lease_seconds=60.0)
        pool.add_tasks(TaskSpec(capability=shards[i % worker_processes], payload={}) for i in range(total_tasks))
        t1 = time.perf_counter()

        def progress() -> None:
            if on_progress is not None:
                on_progress(pool.counts())

        _, service, _ = run_workers(url, run_id, agents, processes=worker_processes, batch=batch,
                                    redis_url=redis_url, on_progress=progress)
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
        counts = pool.counts()
        if pool.mirror is not None:
            pool.mirror.reconcile(pool)
        for k, v in pool.service_log.retries.items():
            service["retries"][k] = service["retries"].get(k, 0) + v
        service["incidents"].extend(pool.service_log.incidents)
        t3 = time.perf_counter()
        if cleanup:
            pool.delete_run()
    completed, failed = audit.tasks_done, audit.tasks_failed
    participating = len(audit.participating_agents)
    return StressReport(
        run_id=run_id, store=redact(url) or url, redis=redact(redis_url), logical_cpus=logical_cpus,
        worker_processes=worker_processes, total_agents=total_agents, total_tasks=total_tasks, batch=batch,
        completed_tasks=completed, failed_tasks=failed, duplicate_claims=audit.duplicate_claims,
        participating_agents=participating, converged_shards=converged, audit_verdict=audit.verdict,
        setup_time_s=round(t1 - t0, 3), run_time_s=round(t2 - t1, 3), check_time_s=round(t3 - t2, 3),
        wall_time_s=round(t3 - t0, 3), tasks_per_second=round(total_tasks / (t2 - t1), 1),
        L01_PASS=l01_pass(
            worker_processes=worker_processes, logical_cpus=logical_cpus, completed_tasks=completed,
            total_tasks=total_tasks, failed_tasks=failed, duplicate_claims=audit.duplicate_claims,
            participating_agents=participating, total_agents=total_agents, converged_shards=converged,
        ) and counts["done"] == completed and audit.verdict == "PASS",
        service=service,
    )
