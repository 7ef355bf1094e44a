"""benchscore.swarm: the swarm-minimal runtime (a pheromone task pool) and its acceptance layer.

Runtime API (seed sections 3-5 and 11), stable for the acceptance layer to build on::

    from benchscore.swarm import open_pool, TaskSpec, Agent, run_swarm, audit_pool

    with open_pool("sqlite:///run.db", "run-1") as pool:
        pool.create_run(crash_policy="requeue", lease_seconds=30)
        pool.add_tasks([TaskSpec(capability="review", payload={"text": "..."})])
        claims = pool.claim("agent-1", ["review"], limit=1)   # argmax P_t, ties oldest first
        pool.complete(claims[0], score=0.9, output="...")     # P_t += score
        pool.converge()                                       # accepted_task_id/score/output
    audit_pool(pool)                                          # proof from the ledger alone

Names are imported on first use (PEP 562), so ``import benchscore.swarm.cli`` loads no runtime module.
"""

from __future__ import annotations

from benchscore.common.lazy import lazy_exports

_EXPORTS = {
    "Agent": "agents",
    "Handler": "agents",
    "Outcome": "agents",
    "llm_handler": "agents",
    "run_agent": "agents",
    "simulated_handler": "agents",
    "AuditReport": "audit",
    "audit_events": "audit",
    "audit_pool": "audit",
    "BlobStore": "blob",
    "Reservation": "budget",
    "TPMBudget": "budget",
    "l02_derivation": "budget",
    "CrashPolicy": "lease",
    "resolve_expired_lease": "lease",
    "EventKind": "ledger",
    "LedgerEvent": "ledger",
    "DEFAULT_STORE_URL": "pool",
    "RunNotFound": "pool",
    "StaleClaim": "pool",
    "TaskPool": "pool",
    "open_pool": "pool",
    "ServiceLog": "retry",
    "RunReport": "run",
    "run_swarm": "run",
    "AgentSpec": "tasks",
    "Claim": "tasks",
    "ConvergeResult": "tasks",
    "Task": "tasks",
    "TaskSpec": "tasks",
    "TaskStatus": "tasks",
    "claim_order": "tasks",
    "converge": "tasks",
    "pheromone_on_failure": "tasks",
    "pheromone_on_success": "tasks",
    "status_after_failure": "tasks",
}

__all__ = [
    "Agent",
    "AgentSpec",
    "AuditReport",
    "BlobStore",
    "Claim",
    "ConvergeResult",
    "CrashPolicy",
    "DEFAULT_STORE_URL",
    "EventKind",
    "Handler",
    "LedgerEvent",
    "Outcome",
    "Reservation",
    "RunNotFound",
    "RunReport",
    "ServiceLog",
    "StaleClaim",
    "TPMBudget",
    "Task",
    "TaskPool",
    "TaskSpec",
    "TaskStatus",
    "audit_events",
    "audit_pool",
    "claim_order",
    "converge",
    "l02_derivation",
    "llm_handler",
    "open_pool",
    "pheromone_on_failure",
    "pheromone_on_success",
    "resolve_expired_lease",
    "run_agent",
    "run_swarm",
    "simulated_handler",
    "status_after_failure",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
