"""The TPM budget ledger (seed section 11, L02): discrete minute windows.

A task reserves its tokens *before* its model call and reconciles with the real usage after it.
A reservation goes to the earliest minute window, from the current one on, that still has room
for it (``tokens_by_minute + tokens <= target_tpm``); with a wall clock the caller then waits for
that minute to begin. Reading the clock, the check and the increment happen in one transaction
under a lock shared by every process (SQLite: an exclusive file lock and ``BEGIN IMMEDIATE``;
PostgreSQL: a transaction-scoped advisory lock), so concurrent callers cannot overshoot the target
between reading and writing (the failure of litellm issue 18730), and a caller that waited for the
lock across a minute boundary cannot put tokens into a minute that has already ended.

Reconciliation gives unused tokens back to the reservation's window; usage beyond the
reservation is charged to the earliest windows with room from the reservation's window on (a
debt paid by later minutes), so no window's total ever exceeds the target. Each window keeps the
tokens it holds after reconciliation (``actual_tokens``) and every token reserved in it
(``reserved_tokens``).

:class:`TPMBudget` satisfies the ``budget`` protocol of :mod:`benchscore.common.llm`:
``reserve(tokens) -> reservation`` and ``reconcile(reservation, actual_tokens)``.
"""

from __future__ import annotations

import fcntl
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field

from benchscore.common.errors import BadInput
from benchscore.common.models import Format

from .sql import queries, read_sql, upgrade_sqlite

Q = queries("sqlite_queries.sql")
PGQ = queries("queries.sql")


@dataclass(frozen=True, slots=True)
class Reservation:
    """Tokens held in one minute window (``minute``: simulated index, or epoch minute)."""

    budget_id: str
    minute: int
    tokens: int


# ---- formulas ----------------------------------------------------------------------------------
def first_fitting_window(windows: Mapping[int, int], start: int, tokens: int, target_tpm: int) -> int:
    """The earliest minute ``m >= start`` with ``windows[m] + tokens <= target_tpm`` (L02's
    per-minute cap ``max_m tokens_by_minute_m <= target_tpm``)."""
    if tokens > target_tpm:
        raise ValueError(f"{tokens} tokens can never fit in a window of {target_tpm}")
    m = start
    while windows.get(m, 0) + tokens > target_tpm:
        m += 1
    return m


def spread_overshoot(windows: Mapping[int, int], start: int, extra: int, target_tpm: int) -> list[tuple[int, int]]:
    """(minute, tokens) charges that place ``extra`` tokens in the earliest room from ``start`` on."""
    out = []
    m = start
    while extra > 0:
        room = target_tpm - windows.get(m, 0)
        if room > 0:
            take = min(room, extra)
            out.append((m, take))
            extra -= take
        m += 1
    return out


def l02_derivation(target_tpm: int, tokens_per_task: int) -> dict[str, int]:
    """Seed section 11, L02 parameters: ``task_count = target_tpm / tokens_per_task``,
    ``total_token_demand = task_count * tokens_per_task``,
    ``simulated_minutes = ceil(total_token_demand / target_tpm)``."""
    if target_tpm < 1 or tokens_per_task < 1:
        raise ValueError("target_tpm and tokens_per_task must be >= 1")
    task_count = target_tpm // tokens_per_task
    demand = task_count * tokens_per_task
    return {"task_count": task_count, "total_token_demand": demand,
            "simulated_minutes": math.ceil(demand / target_tpm)}


def budget_utilization(total_reserved_tokens: int, simulated_minutes: int, target_tpm: int) -> float:
    """Seed section 11: ``budget_utilization = total_reserved_tokens / (simulated_minutes * target_tpm)``."""
    if simulated_minutes <= 0:
        return 0.0
    return total_reserved_tokens / (simulated_minutes * target_tpm)


def l02_pass(
    *, target_tpm: int, required_tpm: int, max_tokens_in_a_minute: int, total_reserved_tokens: int,
    task_count: int, tokens_per_task: int, budget_utilization: float, completed_tasks: int,
    failed_tasks: int, duplicate_claims: list, participating_agents: int, agent_count: int, converged: bool,
) -> bool:
    """Seed section 11: ``L02_PASS = target_tpm = 3000 ∧ max_m tokens_by_minute_m <= 3000 ∧
    total_reserved_tokens = task_count × tokens_per_task = 3000 ∧ budget_utilization = 1.0 ∧
    completed_tasks = task_count ∧ failed_tasks = 0 ∧ duplicate_claims = ∅ ∧
    participating_agents = agent_count ∧ converged``. ``required_tpm`` is the seed's 3000."""
    return (
        target_tpm == required_tpm
        and max_tokens_in_a_minute <= required_tpm
        and total_reserved_tokens == task_count * tokens_per_task == required_tpm
        and math.isclose(budget_utilization, 1.0)
        and completed_tasks == task_count
        and failed_tasks == 0
        and not duplicate_claims
        and participating_agents == agent_count
        and converged
    )


# ---- the ledger --------------------------------------------------------------------------------
class TPMBudget:
    """A shared TPM budget named ``budget_id`` in the store at ``url`` (sqlite:/// or postgresql://).

    ``simulated=True``: windows are simulated minutes counted from 0 and nobody waits (L02);
    otherwise windows are wall-clock minutes and :meth:`reserve` sleeps until its window begins.
    """

    def __init__(
        self, url: str, budget_id: str, target_tpm: int, *, simulated: bool = False,
        clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if target_tpm < 1:
            raise BadInput(f"target_tpm {target_tpm}: expected >= 1")
        self.url, self.budget_id, self.target_tpm = url, budget_id, int(target_tpm)
        self.simulated, self.clock, self.sleep = simulated, clock, sleep
        scheme = urlsplit(url).scheme
        if scheme == "sqlite":
            from .pool import sqlite_path

            path, _ = sqlite_path(url)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._kind = "sqlite"
            self._lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            self._conn = sqlite3.connect(path, isolation_level=None, timeout=60.0, check_same_thread=False)
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                self._conn.execute("PRAGMA busy_timeout = 60000")
                self._conn.executescript("BEGIN IMMEDIATE;\n" + read_sql("sqlite_schema.sql") + "\nCOMMIT;")
                upgrade_sqlite(self._conn)
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        elif scheme in ("postgresql", "postgres"):
            from .stores.postgres import connect_pg

            self._kind = "pg"
            self._conn, self._schema = connect_pg(url)
        else:
            raise BadInput(f"budget store URL {url!r}: expected sqlite:///PATH or postgresql://...")

    @contextmanager
    def _tx(self) -> Iterator:
        if self._kind == "sqlite":
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                cur = self._conn.cursor()
                cur.execute("BEGIN IMMEDIATE")
                try:
                    yield cur
                except BaseException:
                    self._conn.rollback()
                    raise
                cur.execute("COMMIT")
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        else:
            with self._conn.transaction(), self._conn.cursor() as cur:
                cur.execute(PGQ["budget_lock"], {"budget_id": self.budget_id})
                yield cur

    def _rows(self, cur, start: int) -> list[tuple[int, int, int]]:
        """(minute, tokens held, tokens reserved) of the windows from ``start`` on."""
        if self._kind == "sqlite":
            rows = cur.execute(Q["budget_first_open_window"], {"budget_id": self.budget_id, "minute": start})
        else:
            rows = cur.execute(PGQ["budget_windows_from"], {"budget_id": self.budget_id, "minute": start}).fetchall()
        return [(int(m), int(t), int(r)) for m, t, r in rows]

    def _read(self, cur, start: int) -> dict[int, int]:
        return {m: t for m, t, _r in self._rows(cur, start)}

    def _add(self, cur, minute: int, tokens: int, *, reserved: bool) -> None:
        params = {"budget_id": self.budget_id, "minute": minute, "tokens": tokens,
                  "reserved": tokens if reserved else 0}
        cur.execute((Q if self._kind == "sqlite" else PGQ)["budget_add"], params)

    def _release(self, cur, minute: int, tokens: int) -> None:
        if self._kind == "sqlite":
            cur.execute(Q["budget_release"], {"budget_id": self.budget_id, "minute": minute, "tokens": tokens})
        else:
            cur.execute(PGQ["budget_release"], {"budget_id": self.budget_id, "minute": minute, "tokens": tokens})

    def _current_minute(self) -> int:
        return 0 if self.simulated else int(self.clock() // 60)

    def reserve(self, tokens: int) -> Reservation:
        """Hold ``tokens`` in the earliest window with room; waits for it on a wall clock."""
        tokens = int(tokens)
        if tokens < 0:
            raise ValueError("tokens must be >= 0")
        if tokens > self.target_tpm:
            raise ValueError(f"a reservation of {tokens} tokens exceeds the whole budget of {self.target_tpm} per minute")
        with self._tx() as cur:
            start = self._current_minute()  # inside the lock: the minute when the window is chosen
            minute = first_fitting_window(self._read(cur, start), start, tokens, self.target_tpm)
            if tokens:
                self._add(cur, minute, tokens, reserved=True)
        if not self.simulated:
            wait = minute * 60 - self.clock()
            if wait > 0:
                self.sleep(wait)
        return Reservation(self.budget_id, minute, tokens)

    def reconcile(self, reservation: Reservation, actual_tokens: int) -> None:
        """Replace the reservation by the real usage: give back what was unused, charge an
        overshoot to the earliest windows with room."""
        actual = max(0, int(actual_tokens))
        diff = actual - reservation.tokens
        if diff == 0:
            return
        with self._tx() as cur:
            if diff < 0:
                self._release(cur, reservation.minute, -diff)
            else:
                for minute, take in spread_overshoot(self._read(cur, reservation.minute), reservation.minute,
                                                     diff, self.target_tpm):
                    self._add(cur, minute, take, reserved=False)

    def windows(self) -> dict[int, int]:
        """minute -> tokens (reserved, after reconciliation) of every window used."""
        return {w.minute: w.actual_tokens for w in self.window_usage() if w.actual_tokens > 0}

    def window_usage(self) -> list[BudgetWindow]:
        """Every window that ever held a reservation, oldest first: reserved and actual tokens."""
        with self._tx() as cur:
            rows = self._rows(cur, -(2**62))
        return [BudgetWindow(minute=m, reserved_tokens=r, actual_tokens=t, target_tpm=self.target_tpm)
                for m, t, r in rows if t > 0 or r > 0]

    def close(self) -> None:
        self._conn.close()
        if self._kind == "sqlite":
            os.close(self._lock_fd)

    def __enter__(self) -> TPMBudget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- L02: a swarm run under the budget ---------------------------------------------------------

class BudgetWindow(Format):
    """One minute window of a TPM budget."""

    minute: int = Field(description="simulated minute index (L02) or epoch minute (wall clock)")
    reserved_tokens: int = Field(description="every token reserved in this window before the model calls")
    actual_tokens: int = Field(description="tokens the window holds after reconciliation with the real usage")
    target_tpm: int = Field(description="the limit no window may exceed")


class BudgetReport(Format):
    """The L02 report of ``benchscore swarm budget``."""

    target_tpm: int
    tokens_per_task: int
    task_count: int
    total_token_demand: int
    total_reserved_tokens: int = Field(description="tokens held in all windows after reconciliation")
    simulated_minutes: int = Field(description="minute windows used")
    max_tokens_in_a_minute: int
    tokens_by_minute: dict[str, int] = Field(description="minute -> tokens held after reconciliation")
    windows: list[BudgetWindow] = Field(description="every window used: reserved and actual tokens against target_tpm")
    budget_utilization: float
    agent_count: int
    worker_processes: int
    completed_tasks: int
    failed_tasks: int
    duplicate_claims: list[int]
    participating_agents: int
    converged: bool
    L02_PASS: bool
    provenance: dict[str, Any] | None = None


L02_REQUIRED_TPM = 3000
L02_CAPABILITY = "model-call"


def run_l02(
    target_tpm: int, tokens_per_task: int, *, agent_count: int = 4, url: str | None = None,
    processes: int | None = None,
) -> BudgetReport:
    """Run ``target_tpm / tokens_per_task`` tasks with ``agent_count`` agents in worker processes;
    each task reserves ``tokens_per_task`` in the shared simulated-minute budget before its
    (simulated) model call and reconciles with the call's usage after it."""
    import tempfile
    import uuid

    from .agents import Agent, Outcome
    from .run import run_swarm
    from .tasks import Claim, TaskSpec

    derivation = l02_derivation(target_tpm, tokens_per_task)
    if derivation["task_count"] < 1:
        raise BadInput(f"--tokens-per-task {tokens_per_task}: larger than --tpm {target_tpm}, no task fits")
    with tempfile.TemporaryDirectory(prefix="benchscore-l02-") as tmp:
        store = url or f"sqlite:///{tmp}/l02.db"
        run_id = f"l02-{uuid.uuid4().hex[:12]}"
        budget_id = f"{run_id}:tpm"
        state: dict[int, TPMBudget] = {}

        def budget() -> TPMBudget:
            pid = os.getpid()
            if pid not in state:  # one connection per worker process, opened after the fork
                state[pid] = TPMBudget(store, budget_id, target_tpm, simulated=True)
            return state[pid]

        def handler(claim: Claim) -> Outcome:
            reservation = budget().reserve(tokens_per_task)
            usage = tokens_per_task  # the simulated model call uses exactly what it asked for
            budget().reconcile(reservation, usage)
            return Outcome.success(1.0, f"task {claim.task_id}: {usage} tokens in minute {reservation.minute}")

        from .pool import open_pool

        with open_pool(store, run_id) as pool:
            pool.create_run()
            pool.add_tasks(TaskSpec(capability=L02_CAPABILITY, payload={"tokens": tokens_per_task})
                           for _ in range(derivation["task_count"]))
        agents = [Agent(f"agent-{i:03d}", [L02_CAPABILITY], handler) for i in range(agent_count)]
        report, audit = run_swarm(store, run_id, agents, processes=processes, batch=1)
        with TPMBudget(store, budget_id, target_tpm, simulated=True) as b:
            windows = b.windows()
            usage = b.window_usage()
    total = sum(windows.values())
    minutes = (max(windows) + 1) if windows else 0
    peak = max(windows.values(), default=0)
    util = budget_utilization(total, minutes, target_tpm)
    participating = len(audit.participating_agents)
    # completions, failures, duplicates and agents come from the ledger audit (not the pool's counts)
    return BudgetReport(
        target_tpm=target_tpm, tokens_per_task=tokens_per_task, task_count=derivation["task_count"],
        total_token_demand=derivation["total_token_demand"], total_reserved_tokens=total, simulated_minutes=minutes,
        max_tokens_in_a_minute=peak, tokens_by_minute={str(m): t for m, t in sorted(windows.items())}, windows=usage,
        budget_utilization=util, agent_count=agent_count, worker_processes=report.worker_processes,
        completed_tasks=audit.tasks_done, failed_tasks=audit.tasks_failed,
        duplicate_claims=audit.duplicate_claims, participating_agents=participating, converged=report.converged,
        L02_PASS=l02_pass(
            target_tpm=target_tpm, required_tpm=L02_REQUIRED_TPM, max_tokens_in_a_minute=peak,
            total_reserved_tokens=total, task_count=derivation["task_count"], tokens_per_task=tokens_per_task,
            budget_utilization=util, completed_tasks=audit.tasks_done, failed_tasks=audit.tasks_failed,
            duplicate_claims=audit.duplicate_claims, participating_agents=participating, agent_count=agent_count,
            converged=report.converged,
        ),
    )
