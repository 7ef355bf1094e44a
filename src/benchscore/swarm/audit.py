"""Audit a run from its ledger alone: duplicate claims, every task accounted for, participating
agents, pheromone history.

:func:`audit_events` is a pure function of the ledger rows; it replays them task by task and
refutes the run at the first event that breaks the protocol:

- a duplicate claim is a claim of a task that is still claimed by someone, a claim of a task
  already done or failed, a claim reusing an attempt number, a completion or failure that does not
  match the task's current claim (agent and attempt), or a second completion;
- a task is accounted for when its last state is ``done`` or ``failed``;
- participating agents are the agents with at least one claim;
- the pheromone history is consistent when every ``pheromone`` event's value equals the previous
  value plus its delta, starting from the ``create`` event's initial P_t; when every change
  follows the seed's rule (section 4): the change after a ``complete`` is ``+task.score`` (the
  completion's value), after a ``fail`` or a lease expiry that fails the task ``-1.0``, a lease
  expiry that requeues the task changes nothing, and no change happens without one of these
  causes; and when every ``claim`` records the P_t the history holds at that point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import Field

from benchscore.common.models import Format

from .stores.base import TaskPool
from .tasks import FAILURE_PENALTY

MAX_LISTED = 100


class Violation(Format):
    task_id: int
    seq: int
    attempt: int
    agent: str | None
    reason: str


class AuditReport(Format):
    """What the ledger of one run proves (``verdict`` PASS) or refutes (FAIL)."""

    run_id: str
    events: int
    tasks_created: int
    tasks_done: int
    tasks_failed: int
    tasks_unaccounted: int = Field(description="tasks whose last state is pending or claimed")
    every_task_accounted_for: bool
    claims: int
    completions: int
    failures: int
    lease_expiries: int
    pheromone_changes: int
    duplicate_claims: list[int] = Field(description="ids of tasks with a duplicate claim (first 100)")
    duplicate_claim_count: int
    violations: list[Violation] = Field(description="the first 100 protocol violations")
    participating_agents: list[str]
    pheromone_consistent: bool = Field(
        description="every pheromone change adds up and follows the seed's rule (+score, -1.0), every claim "
                    "records the current P_t")
    final_pheromone: dict[str, float] | None = Field(
        default=None, description="task id -> final P_t (with --history)")
    pheromone_history: dict[str, list[float]] | None = Field(
        default=None, description="task id -> P_t after each change, initial value first (with --history)")
    verdict: str = Field(description="PASS when no duplicate claim, every task accounted for and history consistent")


_OPEN, _PENDING, _DONE, _FAILED = 1, 0, 2, 3
_STATE = {"pending": _PENDING, "failed": _FAILED}


def audit_events(rows: Iterable[tuple], *, run_id: str, history: bool = False) -> AuditReport:
    """Replay ledger rows ``(seq, run_id, task_id, kind, agent, attempt, value, delta, note, at)``."""
    # per task: [state, open_attempt, open_agent, last_attempt, pheromone, history, expected_delta]
    # expected_delta: the pheromone change the last complete/fail/lease expiry owes (None: none owed)
    tasks: dict[int, list] = {}
    counts = {"create": 0, "claim": 0, "complete": 0, "fail": 0, "pheromone": 0, "lease_expired": 0}
    agents: set[str] = set()
    dup_tasks: set[int] = set()
    violations: list[Violation] = []
    consistent = True
    n = 0

    def violate(task_id: int, seq: int, attempt: int, agent: str | None, reason: str, duplicate: bool) -> None:
        if duplicate:
            dup_tasks.add(task_id)
        if len(violations) < MAX_LISTED:
            violations.append(Violation(task_id=task_id, seq=seq, attempt=attempt, agent=agent, reason=reason))

    def owed(task_id: int, t: list, seq: int, attempt: int, agent: str | None) -> None:
        """A complete/fail/failing lease expiry not followed by its pheromone change."""
        nonlocal consistent
        if t[6] is not None:
            consistent = False
            violate(task_id, seq, attempt, agent, f"missing pheromone change {t[6][1]} after {t[6][0]}", False)
            t[6] = None

    for seq, _run, task_id, kind, agent, attempt, value, delta, note, _at in rows:
        n += 1
        counts[kind] = counts.get(kind, 0) + 1
        t = tasks.get(task_id)
        if kind == "create":
            if t is not None:
                violate(task_id, seq, attempt, agent, "created twice", False)
                continue
            tasks[task_id] = [_PENDING, 0, None, 0, value, [value] if history else None, None]
            continue
        if t is None:
            violate(task_id, seq, attempt, agent, f"{kind} of a task never created", kind == "claim")
            continue
        if kind != "pheromone":
            owed(task_id, t, seq, attempt, agent)
        if kind == "claim":
            if value is None or not math.isclose(value, t[4], rel_tol=1e-9, abs_tol=1e-9):
                consistent = False
                violate(task_id, seq, attempt, agent, f"claim records P_t {value}, the history holds {t[4]}", False)
            agents.add(agent)
            if t[0] == _OPEN:
                violate(task_id, seq, attempt, agent, f"claimed while claimed by {t[2]} (attempt {t[1]})", True)
            elif t[0] in (_DONE, _FAILED):
                violate(task_id, seq, attempt, agent, "claimed after it was finished", True)
            elif attempt <= t[3]:
                violate(task_id, seq, attempt, agent, f"attempt {attempt} reused", True)
            t[0], t[1], t[2], t[3] = _OPEN, attempt, agent, max(attempt, t[3])
        elif kind == "complete":
            if t[0] == _DONE:
                violate(task_id, seq, attempt, agent, "completed twice", True)
            elif t[0] != _OPEN or t[1] != attempt or t[2] != agent:
                violate(task_id, seq, attempt, agent, "completed without the current claim", True)
            t[0], t[1], t[2] = _DONE, 0, None
            t[6] = ("complete", value, "+task.score")
        elif kind in ("fail", "lease_expired"):
            if t[0] != _OPEN or t[1] != attempt or (kind == "fail" and t[2] != agent):
                violate(task_id, seq, attempt, agent, f"{kind} without the current claim", True)
            t[0], t[1], t[2] = _STATE.get(note, _FAILED), 0, None
            if kind == "fail" or t[0] == _FAILED:
                t[6] = (kind, -FAILURE_PENALTY, f"-{FAILURE_PENALTY}")
        elif kind == "pheromone":
            if value is None or delta is None or not math.isclose(t[4] + delta, value, rel_tol=1e-9, abs_tol=1e-9):
                consistent = False
                violate(task_id, seq, attempt, agent, f"pheromone {value} != {t[4]} + {delta}", False)
            cause = t[6]
            if cause is None:
                consistent = False
                violate(task_id, seq, attempt, agent, f"pheromone change {delta} without a completion, failure "
                        "or failing lease expiry", False)
            elif (value is None or cause[1] is None
                  or not math.isclose(value, t[4] + cause[1], rel_tol=1e-9, abs_tol=1e-9)):
                consistent = False
                violate(task_id, seq, attempt, agent, f"pheromone change {delta} after {cause[0]}: the seed's rule "
                        f"is {cause[2]} ({cause[1]})", False)
            t[6] = None
            t[4] = value
            if history:
                t[5].append(value)
        else:
            violate(task_id, seq, attempt, agent, f"unknown event kind {kind!r}", False)
            consistent = False

    for task_id, t in tasks.items():
        owed(task_id, t, -1, t[3], None)
    done = sum(1 for t in tasks.values() if t[0] == _DONE)
    failed = sum(1 for t in tasks.values() if t[0] == _FAILED)
    unaccounted = len(tasks) - done - failed
    accounted = unaccounted == 0 and not any(v.reason == "created twice" for v in violations)
    ok = not dup_tasks and accounted and consistent and len(violations) == 0
    return AuditReport(
        run_id=run_id,
        events=n,
        tasks_created=len(tasks),
        tasks_done=done,
        tasks_failed=failed,
        tasks_unaccounted=unaccounted,
        every_task_accounted_for=accounted,
        claims=counts["claim"],
        completions=counts["complete"],
        failures=counts["fail"],
        lease_expiries=counts["lease_expired"],
        pheromone_changes=counts["pheromone"],
        duplicate_claims=sorted(dup_tasks)[:MAX_LISTED],
        duplicate_claim_count=len(dup_tasks),
        violations=violations,
        participating_agents=sorted(agents),
        pheromone_consistent=consistent,
        final_pheromone={str(k): t[4] for k, t in sorted(tasks.items())} if history else None,
        pheromone_history={str(k): t[5] for k, t in sorted(tasks.items())} if history else None,
        verdict="PASS" if ok else "FAIL",
    )


def audit_pool(pool: TaskPool, *, history: bool = False) -> AuditReport:
    """Audit the run of ``pool`` from its ledger."""
    return audit_events(pool.event_rows(), run_id=pool.run_id, history=history)
