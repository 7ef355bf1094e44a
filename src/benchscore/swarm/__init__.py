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
"""

from .agents import Agent, Handler, Outcome, llm_handler, run_agent, simulated_handler
from .audit import AuditReport, audit_events, audit_pool
from .blob import BlobStore
from .budget import Reservation, TPMBudget, l02_derivation
from .lease import CrashPolicy, resolve_expired_lease
from .ledger import EventKind, LedgerEvent
from .pool import DEFAULT_STORE_URL, RunNotFound, StaleClaim, TaskPool, open_pool
from .retry import ServiceLog
from .run import RunReport, run_swarm
from .tasks import (
    AgentSpec,
    Claim,
    ConvergeResult,
    Task,
    TaskSpec,
    TaskStatus,
    claim_order,
    converge,
    pheromone_on_failure,
    pheromone_on_success,
    status_after_failure,
)

__all__ = [
    "DEFAULT_STORE_URL",
    "Agent",
    "AgentSpec",
    "AuditReport",
    "BlobStore",
    "Claim",
    "ConvergeResult",
    "CrashPolicy",
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
