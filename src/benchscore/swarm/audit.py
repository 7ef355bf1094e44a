"""Audit a run: its ledger (hash chain and protocol), and the task table against the ledger.

:func:`audit_events` is a pure function of the ledger rows (and, when given, the task table and the
chain head the store records). It replays the rows in ``seq`` order and refutes the run at every
row that breaks one of these rules, naming the task and the ledger ``seq``:

- **hash chains**, one per writer (:mod:`benchscore.swarm.ledger`): every row's stored hash is
  ``sha256(stored hash of its writer's previous row || the row's content)``
  (:func:`benchscore.swarm.ledger.event_digest`), its ``writer_seq`` the next of its writer and
  its ``seq`` above the previous row's; each writer's recorded head (last hash, number of rows,
  last seq) matches its chain's last row, every writer with rows has a head, and the run's writer
  count equals its heads. A row edited, deleted, inserted or moved (within a chain or to another
  writer's) breaks a chain at the first row whose hash no longer matches; a deleted tail breaks the
  writer's recorded head. ``ledger_head`` is the run's head recomputed from the rows' contents
  (:func:`benchscore.swarm.ledger.run_head`): compare it with a copy recorded earlier
  (``expect_head``) to detect a history rewritten together with all the hashes after the change;
- **duplicate claims**: a claim of a task that is still claimed by someone, a claim of a task
  already done or failed, a claim reusing an attempt number, a completion or failure that does not
  match the task's current claim (agent and attempt), or a second completion;
- **every task accounted for**: each task's last state is ``done`` or ``failed``;
- **participating agents** are the agents with at least one claim;
- **pheromone history**: every ``pheromone`` event's value equals the previous value plus its
  delta, starting from the ``create`` event's initial P_t; every change follows the seed's rule
  (section 4): ``+task.score`` (the completion's value) after a ``complete``, ``-1.0`` after a
  ``fail`` or a lease expiry that fails the task, nothing after a lease expiry that requeues it, and
  no change without one of these causes; every ``claim`` records the P_t the history holds;
- **task table** (when given): every task of the table has a ledger history and every task of the
  ledger a row; each row's status, P_t, score, attempts, holder, capability and output (its sha256,
  recorded by the ``complete`` event) equal what the replay of its ledger history gives.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import Field

from benchscore.common.models import Format

from .ledger import LEDGER_COLUMNS, LedgerHead, run_head, verify_chains
from .stores.base import LEDGER_TYPES, TASK_STATE_TYPES, TaskPool, output_digest
from .tasks import FAILURE_PENALTY

MAX_LISTED = 100
#: the task table as the audit reads it (TaskPool.task_states)
TASK_STATE_COLUMNS = ("task_id", "status", "pheromone", "score", "attempts", "claimed_by", "capability", "output")


class Violation(Format):
    """One broken rule: the task and the ledger row (``seq``) it concerns. ``task_id`` is None
    for a rule about the whole run (its chain head); ``seq`` is None when the task has no ledger row."""

    task_id: int | None
    seq: int | None
    attempt: int | None
    agent: str | None
    reason: str


class PheromonePoint(Format):
    """One value of a task's P_t: the ledger row that set it and the event that caused it
    (``create``, ``complete``, ``fail`` or ``lease_expired``)."""

    seq: int
    P_t: float
    event: str


class AuditReport(Format):
    """What the ledger and the task table of one run prove (``verdict`` PASS) or refute (FAIL)."""

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
    violations: list[Violation] = Field(description="the first 100 violations, each naming its task and ledger seq")
    violation_count: int = Field(description="all violations found (the list holds the first 100)")
    participating_agents: list[str]
    pheromone_consistent: bool = Field(
        description="every pheromone change adds up and follows the seed's rule (+score, -1.0), every claim "
                    "records the current P_t")
    chain_intact: bool = Field(description="every row's hash chains to the previous row of its writer and every "
                                           "writer's recorded head matches its last row")
    chain_breaks: int = Field(description="rows whose stored hash does not match (edited, or a row before them "
                                          "in their writer's chain deleted, inserted or moved), and recorded heads "
                                          "that do not match")
    ledger_writers: int = Field(default=0, description="writers (hash chains) with rows in the ledger")
    ledger_head: str = Field(description="sha256 run head recomputed from the rows' contents (hex; over every "
                                         "writer's chain head); record it to compare with a later audit")
    ledger_head_stored: str | None = Field(description="the run head over the writers' heads the store records (hex); "
                                                       "None when not read")
    ledger_events_stored: int | None = Field(description="the number of ledger rows the store records for the run")
    expected_head: str | None = Field(default=None, description="a head recorded earlier (--expect-head)")
    expected_head_found_at: int | None = Field(
        default=None, description="seq of the row whose recomputed chain hash is expected_head; None when absent")
    tasks_in_table: int | None = Field(description="rows of the task table; None when the table was not checked")
    tasks_table_consistent: bool | None = Field(
        description="every task row equals its ledger replay and every task has both; None when not checked")
    tasks_table_mismatches: list[int] = Field(
        description="ids of tasks whose row differs from the ledger, or that have a row or a history only (first 100)")
    tasks_table_mismatch_count: int
    final_pheromone: dict[str, float] | None = Field(
        default=None, description="task id -> final P_t (with --history)")
    pheromone_history: dict[str, list[float]] | None = Field(
        default=None, description="task id -> P_t after each change, initial value first (with --history)")
    pheromone_points: dict[str, list[PheromonePoint]] | None = Field(
        default=None, description="task id -> every P_t with the ledger seq that set it and its cause, initial value "
                                  "first (with --history)")
    verdict: str = Field(description="PASS when no rule above is broken")


_PENDING, _OPEN, _DONE, _FAILED = 0, 1, 2, 3
_STATE = {"pending": _PENDING, "failed": _FAILED}
_STATUS = {_PENDING: "pending", _OPEN: "claimed", _DONE: "done", _FAILED: "failed"}


class _Replay:
    """The state of one task as its ledger history so far leaves it."""

    __slots__ = ("state", "open_attempt", "open_agent", "last_attempt", "pheromone", "owed", "score", "output",
                 "capability", "last_seq", "points")

    def __init__(self, pheromone: float, capability: str | None, seq: int, history: bool) -> None:
        self.state, self.open_attempt, self.open_agent, self.last_attempt = _PENDING, 0, None, 0
        self.pheromone = pheromone
        self.owed: tuple | None = None  # the pheromone change the last complete/fail/lease expiry owes
        self.score: float | None = None
        self.output: str | None = None
        self.capability = capability
        self.last_seq = seq
        self.points = [PheromonePoint(seq=seq, P_t=pheromone, event="create")] if history else None


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def audit_events(
    rows: Iterable[tuple], *, run_id: str, history: bool = False, tasks: Sequence[tuple] | None = None,
    head: LedgerHead | None = None, expect_head: str | None = None,
) -> AuditReport:
    """Replay ledger rows ``(seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash,
    writer_id, writer_seq)`` in ``seq`` order; check them against the task table ``tasks`` (rows in :data:`TASK_STATE_COLUMNS` order)
    and the recorded chain ``head`` when given, and against a head recorded earlier (``expect_head``, hex)."""
    replays: dict[int, _Replay] = {}
    counts = {"create": 0, "claim": 0, "complete": 0, "fail": 0, "pheromone": 0, "lease_expired": 0}
    agents: set[str] = set()
    dup_tasks: set[int] = set()
    violations: list[Violation] = []
    n_violations = 0
    consistent = True
    rows = rows if isinstance(rows, list) else list(rows)

    def violate(task_id: int | None, seq: int | None, attempt: int | None, agent: str | None, reason: str,
                duplicate: bool = False) -> None:
        nonlocal n_violations
        if duplicate and task_id is not None:
            dup_tasks.add(task_id)
        n_violations += 1
        if len(violations) < MAX_LISTED:
            violations.append(Violation(task_id=task_id, seq=seq, attempt=attempt, agent=agent, reason=reason))

    def owed(task_id: int, t: _Replay, seq: int, attempt: int | None, agent: str | None) -> None:
        """A complete/fail/failing lease expiry not followed by its pheromone change."""
        nonlocal consistent
        if t.owed is not None:
            consistent = False
            violate(task_id, seq, attempt, agent, f"missing pheromone change {t.owed[1]} after {t.owed[0]}")
            t.owed = None

    # ---- the hash chains ---------------------------------------------------------------------
    check = verify_chains(rows, expect_head)
    for row, reason in check.broken:
        violate(row[2], row[0], row[5], row[4], reason)
    chain_breaks = len(check.broken)
    found_at = check.found_at
    n = len(rows)

    # ---- the protocol, task by task ----------------------------------------------------------
    for seq, _run, task_id, kind, agent, attempt, value, delta, note, *_rest in rows:
        counts[kind] = counts.get(kind, 0) + 1
        t = replays.get(task_id)
        if t is not None:
            t.last_seq = seq
        if kind == "create":
            if t is not None:
                violate(task_id, seq, attempt, agent, "created twice")
                continue
            replays[task_id] = _Replay(value, note, seq, history)
            continue
        if t is None:
            violate(task_id, seq, attempt, agent, f"{kind} of a task never created", kind == "claim")
            continue
        if kind != "pheromone":
            owed(task_id, t, seq, attempt, agent)
        if kind == "claim":
            if not _close(value, t.pheromone):
                consistent = False
                violate(task_id, seq, attempt, agent, f"claim records P_t {value}, the history holds {t.pheromone}")
            agents.add(agent)
            if t.state == _OPEN:
                violate(task_id, seq, attempt, agent,
                        f"claimed while claimed by {t.open_agent} (attempt {t.open_attempt})", True)
            elif t.state in (_DONE, _FAILED):
                violate(task_id, seq, attempt, agent, "claimed after it was finished", True)
            elif attempt <= t.last_attempt:
                violate(task_id, seq, attempt, agent, f"attempt {attempt} reused", True)
            t.state, t.open_attempt, t.open_agent = _OPEN, attempt, agent
            t.last_attempt = max(attempt, t.last_attempt)
        elif kind == "complete":
            if t.state == _DONE:
                violate(task_id, seq, attempt, agent, "completed twice", True)
            elif t.state != _OPEN or t.open_attempt != attempt or t.open_agent != agent:
                violate(task_id, seq, attempt, agent, "completed without the current claim", True)
            t.state, t.open_attempt, t.open_agent = _DONE, 0, None
            t.score, t.output = value, note
            t.owed = ("complete", value, "+task.score")
        elif kind in ("fail", "lease_expired"):
            if t.state != _OPEN or t.open_attempt != attempt or (kind == "fail" and t.open_agent != agent):
                violate(task_id, seq, attempt, agent, f"{kind} without the current claim", True)
            t.state, t.open_attempt, t.open_agent = _STATE.get(note, _FAILED), 0, None
            if kind == "fail" or t.state == _FAILED:
                t.owed = (kind, -FAILURE_PENALTY, f"-{FAILURE_PENALTY}")
        elif kind == "pheromone":
            if value is None or delta is None or not _close(t.pheromone + delta, value):
                consistent = False
                violate(task_id, seq, attempt, agent, f"pheromone {value} != {t.pheromone} + {delta}")
            cause = t.owed
            if cause is None:
                consistent = False
                violate(task_id, seq, attempt, agent, f"pheromone change {delta} without a completion, failure "
                        "or failing lease expiry")
            elif cause[1] is None or not _close(value, t.pheromone + cause[1]):
                consistent = False
                violate(task_id, seq, attempt, agent, f"pheromone change {delta} after {cause[0]}: the seed's rule "
                        f"is {cause[2]} ({cause[1]})")
            t.owed = None
            t.pheromone = value
            if history:
                t.points.append(PheromonePoint(seq=seq, P_t=value, event=note or "?"))
        else:
            violate(task_id, seq, attempt, agent, f"unknown event kind {kind!r}")
            consistent = False

    for task_id, t in replays.items():
        owed(task_id, t, t.last_seq, t.last_attempt, None)
        if t.state in (_PENDING, _OPEN):
            violate(task_id, t.last_seq, t.last_attempt, t.open_agent,
                    f"not accounted for: its ledger history ends {_STATUS[t.state]}")

    # ---- the chain heads the store records ---------------------------------------------------
    if head is not None:
        recorded = {w.writer_id: w for w in head.writers}
        last_of = {}
        for row in rows:
            if len(row) > 12 and row[11] is not None:
                last_of[row[11]] = row
        for w in sorted(set(recorded) | set(check.writers)):
            mine, ours = recorded.get(w), check.writers.get(w)
            last = last_of.get(w)
            where = (last[2], last[0]) if last is not None else (None, None)
            if mine is None:
                chain_breaks += 1
                violate(*where, None, None, f"writer {w} has {ours[1]} ledger rows but no recorded chain head: "
                        "its rows were added")
            elif ours is None:
                if mine.events:
                    chain_breaks += 1
                    violate(None, None, None, None, f"writer {w} records {mine.events} ledger rows up to seq "
                            f"{mine.seq}, the ledger holds none of them: rows were deleted")
            elif (mine.events, mine.seq) != ours[1:]:
                chain_breaks += 1
                violate(*where, None, None, f"writer {w} records {mine.events} ledger rows up to seq {mine.seq}, the "
                        f"ledger holds {ours[1]} up to seq {ours[2]}: rows were deleted or added")
            elif mine.hash != ours[0]:
                chain_breaks += 1
                violate(*where, None, None, f"writer {w}'s recorded chain head does not match its last ledger row")
        if sorted(recorded) != list(range(1, head.writer_count + 1)):
            chain_breaks += 1
            violate(None, None, None, None, f"the run handed out {head.writer_count} writers, the store records the "
                    f"chain heads of writers {sorted(recorded)}: a writer's head was deleted or added")
    if expect_head is not None and found_at is None:
        violate(None, None, None, None, f"the head recorded earlier ({expect_head[:16]}...) is not in this ledger's "
                "chain: the history up to it was rewritten")

    # ---- the task table against the replay ---------------------------------------------------
    mismatched: set[int] = set()
    if tasks is not None:
        in_table = {row[0] for row in tasks}
        for row in tasks:
            t = replays.get(row[0])
            if t is None:
                mismatched.add(row[0])
                violate(row[0], None, None, None, "in the task table but the ledger has no history of it")
                continue
            diffs = _table_diffs(row, t)
            if diffs:
                mismatched.add(row[0])
                violate(row[0], t.last_seq, None, None, "task table differs from its ledger replay: " + "; ".join(diffs))
        for task_id in sorted(set(replays) - in_table):
            mismatched.add(task_id)
            violate(task_id, replays[task_id].last_seq, None, None, "in the ledger but not in the task table")

    done = sum(1 for t in replays.values() if t.state == _DONE)
    failed = sum(1 for t in replays.values() if t.state == _FAILED)
    unaccounted = len(replays) - done - failed
    accounted = unaccounted == 0 and not any(v.reason == "created twice" for v in violations)
    return AuditReport(
        run_id=run_id,
        events=n,
        tasks_created=len(replays),
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
        violation_count=n_violations,
        participating_agents=sorted(agents),
        pheromone_consistent=consistent,
        chain_intact=chain_breaks == 0,
        chain_breaks=chain_breaks,
        ledger_writers=len(check.writers),
        ledger_head=check.head.hex(),
        ledger_head_stored=run_head(head.writers).hex() if head is not None else None,
        ledger_events_stored=head.events if head is not None else None,
        expected_head=expect_head,
        expected_head_found_at=found_at,
        tasks_in_table=len(tasks) if tasks is not None else None,
        tasks_table_consistent=not mismatched if tasks is not None else None,
        tasks_table_mismatches=sorted(mismatched)[:MAX_LISTED],
        tasks_table_mismatch_count=len(mismatched),
        final_pheromone={str(k): t.pheromone for k, t in sorted(replays.items())} if history else None,
        pheromone_history={str(k): [p.P_t for p in t.points] for k, t in sorted(replays.items())} if history else None,
        pheromone_points={str(k): t.points for k, t in sorted(replays.items())} if history else None,
        verdict="PASS" if n_violations == 0 else "FAIL",
    )


_TABLE_FIELDS = ("status", "P_t", "score", "attempts", "claimed_by", "capability", "output sha256")


def _table_diffs(row: tuple, t: _Replay) -> list[str]:
    """What a task row (TASK_STATE_COLUMNS) says that its ledger replay does not ("field table vs ledger")."""
    done = t.state == _DONE
    want = (_STATUS[t.state], t.pheromone, t.score, t.last_attempt, t.open_agent, t.capability,
            t.output if done else None)
    have = (*row[1:7], output_digest(row[7] or "") if done else None)
    if have == want:
        return []
    return [f"{k} {h!r} (table) vs {w!r} (ledger)" for k, h, w in zip(_TABLE_FIELDS, have, want, strict=True) if h != w]


def audit_pool(pool: TaskPool, *, history: bool = False, expect_head: str | None = None) -> AuditReport:
    """Audit the run of ``pool``: its ledger, its recorded chain head and its task table."""
    rows, tasks = list(pool.event_rows()), pool.task_states()
    pool.check_types(rows, LEDGER_COLUMNS, LEDGER_TYPES, "ledger row seq")  # a damaged store: one line
    pool.check_types(tasks, TASK_STATE_COLUMNS, TASK_STATE_TYPES, "task")
    return audit_events(rows, run_id=pool.run_id, history=history, tasks=tasks, head=pool.ledger_head(),
                        expect_head=expect_head)
