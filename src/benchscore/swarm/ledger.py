"""The audit ledger: one event per claim, completion, failure, pheromone change and lease expiry.

Every event carries the run id, the task, the agent, the attempt and the time. The ledger is
written in the same transaction as the task change it records, so it can never disagree with
the pool; :mod:`benchscore.swarm.audit` reads nothing but the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EventKind(StrEnum):
    """What happened to a task. ``value``/``delta``/``note`` of an event, by kind:

    - ``create``: value = initial P_t, note = capability
    - ``claim``: value = P_t at the claim
    - ``complete``: value = task.score
    - ``fail``: note = ``pending`` (requeued) or ``failed`` (attempt limit reached)
    - ``pheromone``: value = P_t after the change, delta = the change
    - ``lease_expired``: note = ``pending`` (policy requeue) or ``failed``
    """

    create = "create"
    claim = "claim"
    complete = "complete"
    fail = "fail"
    pheromone = "pheromone"
    lease_expired = "lease_expired"


@dataclass(frozen=True, slots=True)
class LedgerEvent:
    """One ledger row. ``seq`` orders events within a store (commit order of their transactions)."""

    seq: int
    run_id: str
    task_id: int
    kind: EventKind
    agent: str | None
    attempt: int
    value: float | None
    delta: float | None
    note: str | None
    at: float

    @classmethod
    def from_row(cls, row: tuple) -> LedgerEvent:
        seq, run_id, task_id, kind, agent, attempt, value, delta, note, at = row
        return cls(seq, run_id, task_id, EventKind(kind), agent, attempt, value, delta, note, at)


#: column order of the ledger table, shared by every store
LEDGER_COLUMNS = ("seq", "run_id", "task_id", "kind", "agent", "attempt", "value", "delta", "note", "at")
