"""Run agents against one shared pool in worker processes, then converge and audit.

Agents are spread round-robin over ``worker_processes`` forked processes; each process opens its
own connection to the same pool (there is no private pool per process) and runs its agents in turn.
When every process has finished, the run converges (seed section 5), the convergence output goes
to the blob store, and the ledger is audited.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from benchscore.common.errors import BenchscoreError, ServiceUnavailable
from benchscore.common.interrupts import checkpoint
from benchscore.common.models import Format
from benchscore.common.workers import start_without_sigint

from .agents import Agent, AgentStats, run_agents
from .audit import AuditReport, audit_pool
from .blob import BlobStore
from .defaults import DEFAULT_MAX_OUTAGE
from .pool import open_pool
from .tasks import ConvergeResult


def redact(url: str | None) -> str | None:
    """A store URL without its password."""
    if url is None:
        return None
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


class Convergence(Format):
    accepted_task_id: int
    accepted_score: float
    accepted_output: str
    blob_sha256: str | None = None


class RunReport(Format):
    """The result of ``benchscore swarm run``."""

    run_id: str
    store: str
    redis: str | None
    worker_processes: int
    crashed_workers: int = Field(description="worker processes that died before reporting (e.g. kill -9)")
    agent_count: int
    task_count: int
    completed_tasks: int
    failed_tasks: int
    expired_leases: int = Field(description="claims whose lease expired (ledger lease_expired events)")
    duplicate_claims: list[int]
    participating_agents: int
    converged: bool
    convergence: Convergence | None
    audit_verdict: str
    audit_violations: int = Field(description="violations the audit found (see swarm audit for each)")
    ledger_events: int = Field(description="rows in the run's ledger")
    ledger_head: str = Field(description="sha256 head of the ledger's hash chain (hex): keep it to compare with a "
                                         "later `swarm audit --expect-head`")
    redis_mirror: dict[str, Any] | None = Field(
        default=None, description="the mirror compared with the store at the end of the run (and repaired if needed)")
    wall_time_s: float
    tasks_per_second: float = Field(description="tasks this process saw finished, per second of its wall time")
    service: dict[str, Any] = Field(description="retries and incidents of services during the run")
    claims_here: int = Field(default=0, description="claims this process's agents made (the whole run's unless "
                             "other processes worked it too, --join)")
    completions_here: int = Field(default=0, description="completions of this process's agents that the store "
                                  "accepted")
    joined: bool = Field(default=False, description="this process joined a run started before (--join); counts, "
                         "convergence and audit are the whole run's, crashed_workers, service and timings this "
                         "process's")
    provenance: dict[str, Any] | None = None


def _child(url: str, run_id: str, redis_url: str | None, agents: Sequence[Agent], batch: int, max_outage: float,
           conn, go) -> None:
    # Ctrl-C reaches every process of the terminal's process group: the parent stops the workers
    # (SIGTERM, see run_workers), so a worker ignores SIGINT rather than print a traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        pool = open_pool(url, run_id, redis_url=redis_url, max_outage=max_outage, wait=True)
        try:
            try:
                go.wait(60)  # every worker starts claiming at the same moment
            except threading.BrokenBarrierError:
                pass  # a sibling died before the start; carry on without it
            checkpoint("swarm:workers")
            stats = run_agents(pool, agents, batch=batch)
            conn.send(("ok", stats, pool.service_log.as_dict()))
        finally:
            pool.close()
    except BenchscoreError as exc:
        conn.send(("error", str(exc), None))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it as one line
        conn.send(("error", f"{type(exc).__name__}: {exc}", None))
    finally:
        conn.close()


def _stop(workers: Sequence[tuple]) -> None:
    """Stop the worker processes still running (SIGTERM: a transaction in flight is rolled back by
    the store; the claims it held come back when their leases expire) and wait for them."""
    for p, _end in workers:
        if p.is_alive():
            p.terminate()
    for p, end in workers:
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join()
        end.close()


def run_workers(
    url: str, run_id: str, agents: Sequence[Agent], *, processes: int, batch: int = 1,
    redis_url: str | None = None, on_progress: Callable[[], None] | None = None,
    max_outage: float = DEFAULT_MAX_OUTAGE,
) -> tuple[AgentStats, dict[str, Any], int]:
    """Run ``agents`` in ``processes`` forked workers on the shared pool; returns (stats, service
    log, crashed workers). A worker that dies (kill -9) is counted, its tasks come back through
    their leases. Each worker rides out a store outage of up to ``max_outage`` seconds. When this
    process stops early (Ctrl-C, an error), the workers still running are stopped."""
    processes = max(1, min(processes, len(agents)))
    ctx = mp.get_context("fork")
    workers: list[tuple] = []
    try:
        go = ctx.Barrier(processes)
        for k in range(processes):
            parent_end, child_end = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_child, args=(url, run_id, redis_url, agents[k::processes], batch, max_outage,
                                                 child_end, go), daemon=True)
            start_without_sigint(p)  # the worker ignores SIGINT before one can arrive there
            child_end.close()
            workers.append((p, parent_end))
        return _collect(workers, on_progress)
    finally:
        _stop(workers)


def _collect(workers: list[tuple], on_progress: Callable[[], None] | None) -> tuple[AgentStats, dict[str, Any], int]:
    stats = AgentStats()
    service: dict[str, Any] = {"retries": {}, "incidents": []}
    errors: list[str] = []
    crashed = 0
    pending = list(workers)
    while pending:
        still = []
        for p, end in pending:
            if end.poll():
                try:
                    kind, value, log = end.recv()
                except EOFError:
                    p.join()
                    crashed += 1
                    continue
                p.join()
                if kind == "ok":
                    stats.add(value)
                    for k, v in log["retries"].items():
                        service["retries"][k] = service["retries"].get(k, 0) + v
                    service["incidents"].extend(log["incidents"])
                else:
                    errors.append(value)
            elif not p.is_alive():
                p.join()
                if end.poll():
                    still.append((p, end))
                    continue
                crashed += 1
            else:
                still.append((p, end))
        pending = still
        if on_progress is not None:
            on_progress()
        if pending:
            time.sleep(0.05)
    if errors:
        raise ServiceUnavailable(errors[0]) if "unreachable" in errors[0] or "unavailable" in errors[0] \
            else BenchscoreError(errors[0])
    return stats, service, crashed


def run_swarm(
    url: str, run_id: str, agents: Sequence[Agent], *, processes: int | None = None, batch: int = 1,
    redis_url: str | None = None, blob_root: str | Path | None = None,
    on_progress: Callable[[dict[str, int]], None] | None = None, max_outage: float = DEFAULT_MAX_OUTAGE,
    joined: bool = False,
) -> tuple[RunReport, AuditReport]:
    """Run the agents on the run's pool until every task is done or failed, converge, audit.

    The run may be worked by other processes at the same time, here or on other machines (each
    started with ``--join``); ``joined`` only labels the report. Counts, convergence and audit are
    the whole run's; ``crashed_workers``, ``service`` and the timings are this process's."""
    processes = processes or os.cpu_count() or 1
    start = time.perf_counter()
    with open_pool(url, run_id, redis_url=redis_url, max_outage=max_outage) as pool:
        counts = pool.counts()
        total, finished_before = sum(counts.values()), counts["done"] + counts["failed"]

        def progress() -> None:
            if on_progress is not None:
                on_progress(pool.counts())

        stats, service, crashed = run_workers(url, run_id, agents, processes=processes, batch=batch,
                                          redis_url=redis_url, on_progress=progress, max_outage=max_outage)
        workers = max(1, min(processes, len(agents)))
        result: ConvergeResult | None = pool.converge()
        convergence = None
        if result is not None:
            blob = BlobStore(blob_root).put_json({"run_id": run_id, **result.model_dump()}) if blob_root else None
            pool.record_convergence("run", result, blob)
            convergence = Convergence(**result.model_dump(), blob_sha256=blob)
        audit = audit_pool(pool)
        counts = pool.counts()
        mirror = pool.mirror.reconcile(pool) if pool.mirror is not None else None
        for k, v in pool.service_log.retries.items():
            service["retries"][k] = service["retries"].get(k, 0) + v
        service["incidents"].extend(pool.service_log.incidents)
    wall = time.perf_counter() - start
    finished = counts["done"] + counts["failed"] - finished_before
    report = RunReport(
        run_id=run_id, store=redact(url) or url, redis=redact(redis_url), worker_processes=workers,
        crashed_workers=crashed, agent_count=len(agents), task_count=total, completed_tasks=counts["done"],
        failed_tasks=counts["failed"], expired_leases=audit.lease_expiries, duplicate_claims=audit.duplicate_claims,
        participating_agents=len(audit.participating_agents), converged=convergence is not None,
        convergence=convergence, audit_verdict=audit.verdict, audit_violations=audit.violation_count,
        ledger_events=audit.events, ledger_head=audit.ledger_head, redis_mirror=mirror, wall_time_s=round(wall, 3),
        tasks_per_second=round(finished / wall, 1) if wall > 0 else 0.0, service=service, joined=joined,
        claims_here=stats.claimed, completions_here=stats.completed,
    )
    return report, audit
