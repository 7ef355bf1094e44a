"""The one interface every store implements: :class:`TaskPool`.

A pool holds the tasks of one run (``run_id``) in a store selected by URL
(:func:`benchscore.swarm.pool.open_pool`). Agents only ever talk to the pool: claim, complete,
fail. Every change is written together with its ledger events in one transaction, and the events
extend the run's hash chain (:mod:`benchscore.swarm.ledger`); when a Redis mirror is attached, the
appended events (with their ``seq``) and the pheromone changes they record are published to it
after the commit.
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import orjson

from benchscore.common.errors import BadInput, BenchscoreError

from ..lease import DEFAULT_LEASE_SECONDS, CrashPolicy, resolve_expired_lease
from ..ledger import EventKind, LedgerEvent, LedgerHead, WriterHead, event_contents
from ..retry import ServiceLog
from ..tasks import (
    Claim,
    ConvergeResult,
    Task,
    TaskSpec,
    TaskStatus,
    pheromone_on_failure,
    pheromone_on_success,
    status_after_failure,
)

if TYPE_CHECKING:
    from .redis_mirror import RedisMirror

#: an event as written: (run_id, task_id, kind, agent, attempt, value, delta, note, at)
EventRow = tuple
#: a pheromone change as read from the pool: (task_id, capability, P_t)
PheromoneChange = tuple[int, str, float]


@dataclass
class EventBatch:
    """The ledger rows one transaction appends, and the pheromone values they set
    (``changes``: index of the event in ``events``, capability, task id, new P_t)."""

    run_id: str
    events: list[EventRow] = field(default_factory=list)
    changes: list[tuple[int, str, int, float]] = field(default_factory=list)

    def contents(self) -> list[bytes]:
        """What the hash chain hashes of each event (computed outside the writer lock when it can be)."""
        return event_contents(self.events)

    def only(self, keep: Sequence[bool], per_item: int) -> EventBatch:
        """The batch without the events of the items not kept (each item wrote ``per_item`` events,
        in order)."""
        kept = [i for i in range(len(self.events)) if keep[i // per_item]]
        where = {old: new for new, old in enumerate(kept)}
        return EventBatch(self.run_id, [self.events[i] for i in kept],
                          [(where[i], *rest) for i, *rest in self.changes if i in where])

    def add(self, task_id: int, kind: str, agent: str | None, attempt: int, value: float | None, delta: float | None,
            note: str | None, at: float, *, capability: str | None = None) -> None:
        """One event; ``capability`` marks an event that sets the task's P_t to ``value``."""
        if capability is not None:
            self.changes.append((len(self.events), capability, task_id, value))
        self.events.append((self.run_id, task_id, kind, agent, attempt, value, delta, note, at))

    def extend(self, other: EventBatch) -> None:
        """Append the events (and pheromone changes) of ``other`` after this batch's."""
        n = len(self.events)
        self.events += other.events
        self.changes += [(i + n, *rest) for i, *rest in other.changes]

    def appended(self, writer_id: int, writer_events: int, seqs: Sequence[int]) -> Appended:
        """What the mirror publishes of these events, appended with ``seqs`` to writer ``writer_id``'s
        chain, which holds ``writer_events`` rows after them."""
        prev = writer_events - len(seqs)
        return Appended(
            writer_id, prev,
            [(q, *e[1:]) for q, e in zip(seqs, self.events, strict=True)],
            [(seqs[i], prev + 1 + i, cap, task_id, p) for i, cap, task_id, p in self.changes],
        )


@dataclass(frozen=True)
class Appended:
    """What one committed transaction added to the ledger, as the mirror publishes it: the
    ``writer_id`` whose chain it extended, ``prev`` (that chain's rows before it), ``events`` as
    ``(seq, task_id, kind, agent, attempt, value, delta, note, at)`` (writer_seq ``prev + 1``,
    ``prev + 2``, ...) and ``changes`` as ``(seq of the event, its writer_seq, capability, task_id,
    new P_t)``."""

    writer_id: int
    prev: int
    events: list[tuple]
    changes: list[tuple]


#: a mirror publish waits for at most this many events or seconds (TaskPool._publish)
PUBLISH_EVENTS = 256
PUBLISH_SECONDS = 0.05

_NONE = type(None)
_INT, _STR, _NUM, _BYTES_OR_NONE = (int,), (str,), (int, float), (bytes, _NONE)
#: the types a ledger row's columns (LEDGER_COLUMNS) and a task state's (TASK_STATE_COLUMNS) may hold
_INT_OR_NONE = (int, _NONE)
LEDGER_TYPES = (_INT, _STR, _INT, _STR, (str, _NONE), _INT, (int, float, _NONE), (int, float, _NONE), (str, _NONE),
                _NUM, _BYTES_OR_NONE, _INT_OR_NONE, _INT_OR_NONE)
TASK_STATE_TYPES = (_INT, _STR, _NUM, (int, float, _NONE), _INT, (str, _NONE), _STR, (str, _NONE))


def _number(value: object) -> float:
    if type(value) not in _NUM:
        raise TypeError(f"{value!r} is not a number")
    return float(value)


_EMPTY_OUTPUT = hashlib.sha256(b"").hexdigest()
_CREATE, _CLAIM, _COMPLETE, _FAIL, _PHEROMONE, _LEASE_EXPIRED = (k.value for k in EventKind)
_DONE = TaskStatus.done.value


def output_digest(output: str) -> str:
    """sha256 (hex) of a task output, recorded as the ``note`` of its ``complete`` event."""
    return hashlib.sha256(output.encode()).hexdigest() if output else _EMPTY_OUTPUT


class StaleClaim(Exception):
    """A completion or failure named an attempt that is no longer the task's current claim."""


class RunNotFound(Exception):
    """The pool has no run with this id."""


class RunExists(BadInput, ValueError):
    """A run with this id is already in the store (one line, exit 2)."""


class StoreCorrupt(BenchscoreError):
    """The store's file is damaged: SQLite says so, or a row holds a value of the wrong type."""


class StoreFull(BenchscoreError):
    """The disk under the store is full."""


class TaskPool(ABC):
    """A pheromone task pool for one run.

    Public methods (the runtime API):

    - :meth:`create_run`, :meth:`add_tasks`: set a run up (tasks get ``P_t`` = their spec's
      ``pheromone``, 0 by default; one ``create`` event each);
    - :meth:`claim`: up to ``limit`` pending tasks of the agent's capabilities in claim order
      (argmax P_t, ties oldest first), each with a lease and its attempt number; expired leases
      are resolved by the run's crash policy before it (see :meth:`claim` for how often);
    - :meth:`complete` / :meth:`complete_many`: success, ``P_t += score``; refused (StaleClaim /
      False) when the attempt is no longer current;
    - :meth:`fail` / :meth:`fail_many`: failure, ``P_t -= 1.0``; back to pending until the
      attempt limit, then failed;
    - :meth:`converge`, :meth:`record_convergence`, :meth:`convergences`: seed section 5;
    - :meth:`counts`, :meth:`tasks`, :meth:`pheromones`, :meth:`events`, :meth:`ledger_head`: read
      the pool and the ledger.
    """

    scheme: str = ""

    def __init__(self, url: str, run_id: str) -> None:
        self.url = url
        self.run_id = run_id
        self._mirror: RedisMirror | None = None
        self._unpublished: list[Appended] = []  # committed, not yet sent to the mirror (see _publish)
        self._unpublished_events = 0
        self._unpublished_since = 0.0
        self.service_log = ServiceLog()
        self._settings: tuple[CrashPolicy, float] | None = None
        self._closed = False

    # ---- lifecycle -------------------------------------------------------------------------
    def attach_mirror(self, mirror: RedisMirror) -> None:
        """Mirror pheromones and events to Redis from now on (and bring it up to date now)."""
        self._mirror = mirror
        mirror.sync(self)

    @property
    def mirror(self) -> RedisMirror | None:
        """The Redis mirror (None without one), with every transaction committed so far published."""
        self.flush_mirror()
        return self._mirror

    def flush_mirror(self) -> None:
        """Publish the committed transactions still waiting to go to the mirror."""
        if self._unpublished and self._mirror is not None:
            pending, self._unpublished, self._unpublished_events = self._unpublished, [], 0
            for appended in pending:
                self._mirror.publish(appended, self)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._mirror is not None:
            try:
                self.flush_mirror()
            finally:
                self._mirror.close()
        self._close()

    def discard(self) -> None:
        """Close, and remove what opening the store created if it holds nothing (SQLite: the files
        of a new database; PostgreSQL: nothing to remove)."""
        self.close()

    def __enter__(self) -> TaskPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def settings(self) -> tuple[CrashPolicy, float]:
        """(crash policy, lease seconds) of the run."""
        if self._settings is None:
            row = self._get_run()
            if row is None:
                raise RunNotFound(f"no run {self.run_id!r} in {self.display_url}")
            try:
                policy, lease = CrashPolicy(row[0]), _number(row[1])
            except (TypeError, ValueError):
                raise self._corrupt(f"the run's row holds crash policy {row[0]!r:.40}, lease {row[1]!r:.40}") from None
            self._settings = (policy, lease)
        return self._settings

    def _corrupt(self, what: str) -> StoreCorrupt:
        return StoreCorrupt(f"store {self.display_url}: the database is corrupt ({what})")

    def check_types(self, rows: Sequence[tuple], columns: Sequence[str], types: Sequence[tuple[type, ...]],
                    what: str) -> None:
        """StoreCorrupt unless every value of ``rows`` has one of its column's ``types`` (a damaged
        file can hand back a text where a number was written); one pass per column."""
        for col, allowed in enumerate(types):
            if not {type(r[col]) for r in rows} <= set(allowed):
                row = next(r for r in rows if type(r[col]) not in allowed)
                raise self._corrupt(f"{what} {row[0]!r:.40}: {columns[col]} holds {type(row[col]).__name__} "
                                    f"{row[col]!r:.40}")

    @property
    def display_url(self) -> str:
        return self.url

    def create_run(
        self, *, crash_policy: CrashPolicy | str = CrashPolicy.requeue, lease_seconds: float = DEFAULT_LEASE_SECONDS,
        tasks: Iterable[TaskSpec] = (),
    ) -> list[int]:
        """Register the run together with ``tasks`` (one transaction: the run is in the store with
        all of them, or not at all); returns the task ids. Raises :class:`RunExists` (a ValueError)
        when the run is already there, also when another process created it a moment before."""
        policy = CrashPolicy(crash_policy)
        if not lease_seconds > 0:
            raise ValueError("lease_seconds must be > 0")
        rows = self._task_rows(tasks)
        if self._get_run() is not None:
            raise self._exists()
        ids, appended = self._insert_run(policy, float(lease_seconds), time.time(), rows)
        self._settings = (policy, float(lease_seconds))
        self._publish(appended)
        return ids

    def _exists(self) -> RunExists:
        return RunExists(f"run {self.run_id!r} already exists in {self.display_url}")

    @staticmethod
    def _task_rows(specs: Iterable[TaskSpec]) -> list[tuple]:
        # + 0.0: -0.0 becomes 0.0 (SQLite would store 0.0, and the ledger hashes what is stored)
        return [(s.capability, orjson.dumps(s.payload).decode(), float(s.pheromone) + 0.0, s.max_attempts)
                for s in specs]

    def delete_run(self) -> None:
        """Remove the run: its tasks, ledger, convergence and (if mirrored) its Redis keys."""
        self._delete_run()
        self._unpublished, self._unpublished_events = [], 0
        if self._mirror is not None:
            self._mirror.delete()
        self._settings = None

    def reclaim_space(self) -> None:
        """Give the rows of deleted runs back to the store as free space (PostgreSQL: ``VACUUM
        (ANALYZE)`` of the swarm tables, so a run after a deleted one is as fast as on fresh tables
        even where autovacuum is off or behind; SQLite reuses the pages of deleted rows by itself)."""
        return  # SQLite: nothing to do; PostgreSQL overrides this

    def run_exists(self) -> bool:
        return self._get_run() is not None

    def _publish(self, appended: Appended | None) -> None:
        """Send a committed transaction to the mirror. Small ones wait (merged with the same
        writer's previous ones, so one script call carries many) until :data:`PUBLISH_EVENTS`
        events or :data:`PUBLISH_SECONDS` have gathered, an agent finds nothing to claim, the mirror
        is read through :attr:`mirror`, or the pool closes: a per-task round costs no Redis round
        trip of its own. The mirror may lag by that much (it always lags by the transactions in
        flight); a process killed meanwhile leaves a gap that is filled from the ledger."""
        if self._mirror is None or appended is None or not appended.events:
            return
        last = self._unpublished[-1] if self._unpublished else None
        if last is not None and last.writer_id == appended.writer_id and last.prev + len(last.events) == appended.prev:
            self._unpublished[-1] = Appended(last.writer_id, last.prev, last.events + appended.events,
                                             last.changes + appended.changes)
        else:
            if not self._unpublished:
                self._unpublished_since = time.monotonic()
            self._unpublished.append(appended)
        self._unpublished_events += len(appended.events)
        if (self._unpublished_events >= PUBLISH_EVENTS
                or time.monotonic() - self._unpublished_since >= PUBLISH_SECONDS):
            self.flush_mirror()

    def _batch(self) -> EventBatch:
        return EventBatch(self.run_id)

    # ---- the protocol agents use -------------------------------------------------------------
    def add_tasks(self, specs: Iterable[TaskSpec]) -> list[int]:
        """Insert tasks (with their ``create`` events); returns their ids, oldest first."""
        self.settings  # noqa: B018 - the run must exist
        rows = self._task_rows(specs)
        if not rows:
            return []
        ids, appended = self._insert_tasks(rows, time.time())
        self._publish(appended)
        return ids

    def _create_events(self, ids: Sequence[int], rows: Sequence[tuple], now: float) -> EventBatch:
        batch = self._batch()
        run = self.run_id
        batch.events = [(run, task_id, _CREATE, None, 0, p, None, cap, now)
                        for task_id, (cap, _payload, p, _m) in zip(ids, rows, strict=True)]
        batch.changes = [(i, r[0], task_id, r[2]) for i, (task_id, r) in enumerate(zip(ids, rows, strict=True))]
        return batch

    def claim(self, agent_id: str, capabilities: Sequence[str], *, limit: int = 1) -> list[Claim]:
        """Claim up to ``limit`` pending tasks of ``capabilities`` in claim order (argmax P_t, ties
        oldest first), for one lease each. Expired leases are resolved by the crash policy before
        the claim: on SQLite at every claim; on PostgreSQL at most every ``min(1 s, lease / 2)`` per
        connection and always before a claim would come back empty (so a task whose lease expired
        moments ago may wait up to that long before it is pending again)."""
        return self.finish_and_claim((), (), agent_id, capabilities, limit=limit)[2]

    def complete(self, claim: Claim, score: float, output: str) -> None:
        """Success: status done, ``P_t += score``. Raises :class:`StaleClaim` if refused."""
        if not self.complete_many([(claim, score, output)])[0]:
            raise StaleClaim(f"task {claim.task_id} attempt {claim.attempt}: not the current claim")

    def complete_many(self, results: Sequence[tuple[Claim, float, str]]) -> list[bool]:
        """Complete several claims in one transaction; True where accepted, False where stale."""
        return self.finish_and_claim(results, (), None, (), limit=0)[0]

    def fail(self, claim: Claim, error: str = "") -> TaskStatus:
        """Failure: ``P_t -= 1.0``; pending again until the attempt limit, then failed.
        Returns the new status; raises :class:`StaleClaim` if refused."""
        out = self.fail_many([(claim, error)])[0]
        if out is None:
            raise StaleClaim(f"task {claim.task_id} attempt {claim.attempt}: not the current claim")
        return out

    def fail_many(self, failures: Sequence[tuple[Claim, str]]) -> list[TaskStatus | None]:
        """Fail several claims in one transaction; the new status where accepted, None where stale."""
        return self.finish_and_claim((), failures, None, (), limit=0)[1]

    def finish_and_claim(
        self, results: Sequence[tuple[Claim, float, str]], failures: Sequence[tuple[Claim, str]],
        agent_id: str | None, capabilities: Sequence[str], *, limit: int = 1,
    ) -> tuple[list[bool], list[TaskStatus | None], list[Claim]]:
        """Complete ``results``, fail ``failures`` and claim up to ``limit`` next tasks for
        ``agent_id`` in **one** transaction (one commit, on PostgreSQL one round trip): what
        :meth:`complete_many`, :meth:`fail_many` and :meth:`claim` return, in that order. A claim
        passed twice is finished once (the second is refused as stale)."""
        if limit < 0 or (limit and agent_id is None):
            raise ValueError("limit must be >= 0, and an agent is needed to claim")
        rows: list[tuple] = []
        for claim, score, output in results:
            score = float(score) + 0.0
            if score != score or score in (float("inf"), float("-inf")):
                raise ValueError(f"task {claim.task_id}: score must be finite")
            output = str(output)
            rows.append((claim, _DONE, score, output, pheromone_on_success(claim.pheromone, score),
                         output_digest(output)))
        statuses = [status_after_failure(claim.attempt, claim.max_attempts) for claim, _e in failures]
        rows += [(claim, status.value, None, str(error), pheromone_on_failure(claim.pheromone), None)
                 for (claim, error), status in zip(failures, statuses, strict=True)]
        seen: set[int] = set()
        unique = []
        for r in rows:
            unique.append(r[0].task_id not in seen)
            seen.add(r[0].task_id)
        caps = sorted(set(capabilities)) if limit else []
        if not caps:
            limit = 0
        if not rows and not limit:
            return [], [], []
        policy, lease = self.settings
        sent = [r for r, u in zip(rows, unique, strict=True) if u]
        accepted_sent, claims, appended = self._step(sent, agent_id, caps, limit, policy, lease)
        self._publish(appended)
        if limit and not claims:
            self.flush_mirror()  # nothing to do here: what this process did goes out now
        it = iter(accepted_sent)
        accepted = [next(it) if u else False for u in unique]
        n = len(results)
        return (accepted[:n], [st if ok else None for st, ok in zip(statuses, accepted[n:], strict=True)], claims)

    def expire_leases(self) -> int:
        """Resolve every expired lease now by the crash policy; returns how many."""
        policy, _ = self.settings
        n, appended = self._expire(policy, time.time())
        self._publish(appended)
        return n

    # ---- reading -----------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Tasks per status (all four statuses present)."""
        out = {s.value: 0 for s in TaskStatus}
        out.update(self._counts())
        return out

    def is_settled(self) -> bool:
        """True when no task of the run is pending or claimed (nothing left for anyone to do)."""
        c = self.counts()
        return c["pending"] == 0 and c["claimed"] == 0

    def has_open(self, capabilities: Sequence[str]) -> bool:
        """True while a task of these capabilities is pending or claimed (it may come back)."""
        return self._has_open(sorted(set(capabilities)))

    def converge(self, capability: str | None = None) -> ConvergeResult | None:
        """Seed section 5 over the run's ``done`` tasks (or those of one capability): the same
        argmax as :func:`benchscore.swarm.tasks.converge`, computed in the store."""
        row = self._converge(capability)
        if row is None:
            return None
        return ConvergeResult(accepted_task_id=row[0], accepted_score=row[1], accepted_output=row[2] or "")

    def record_convergence(self, scope: str, result: ConvergeResult, blob_sha256: str | None = None) -> None:
        """Store a convergence result (``scope``: ``run`` or a shard/capability name)."""
        self._record_convergence(scope, result, blob_sha256, time.time())

    def convergences(self) -> dict[str, dict]:
        return {
            row[0]: {
                "accepted_task_id": row[1],
                "accepted_score": row[2],
                "accepted_output": row[3],
                "blob_sha256": row[4],
            }
            for row in self._convergences()
        }

    def tasks(self) -> list[Task]:
        try:
            return [
                Task(r[0], r[1], r[2], TaskStatus(r[3]), r[4], r[5], r[6], r[7], r[8], r[9]) for r in self._tasks()
            ]
        except ValueError as exc:
            raise self._corrupt(f"a task row: {exc}") from None

    def task_states(self) -> list[tuple]:
        """Every task row of the run as :data:`~benchscore.swarm.audit.TASK_STATE_COLUMNS` (what the
        audit compares with the ledger), oldest first."""
        return self._task_states()

    def pheromones(self) -> list[PheromoneChange]:
        """(task_id, capability, P_t) of every task of the run."""
        rows = self._pheromones()
        self.check_types(rows, ("task", "capability", "pheromone"), (_INT, _STR, _NUM), "task")
        return [(int(r[0]), r[1], float(r[2])) for r in rows]

    def capabilities(self) -> list[str]:
        return self._capabilities()

    def events(self) -> Iterator[LedgerEvent]:
        """The run's ledger in order."""
        for row in self.event_rows():
            yield LedgerEvent.from_row(row)

    def ledger_head(self) -> LedgerHead:
        """The writers' chain heads the store records for the run, and the run's head over them
        (RunNotFound when there is no run)."""
        row = self._get_run()
        if row is None:
            raise RunNotFound(f"no run {self.run_id!r} in {self.display_url}")
        chains = self._chains()
        self.check_types(chains, ("writer_id", "head", "events", "last_seq"), (_INT, (bytes,), _INT, _INT),
                         "the chain head of writer")
        self.check_types([row[2:3]], ("ledger_writers",), (_INT,), "the run's writer count")
        return LedgerHead.of((WriterHead(int(w), bytes(h), int(n), int(q)) for w, h, n, q in chains), int(row[2]))

    def created_at(self) -> float:
        """When the run was created (epoch seconds; RunNotFound when there is no run)."""
        rows = self._completions("run_created_at", {})
        if not rows:
            raise RunNotFound(f"no run {self.run_id!r} in {self.display_url}")
        return float(rows[0][0])

    def completions_per_capability(self) -> dict[str, int]:
        """Completed tasks per capability, counted from the ledger's ``complete`` events."""
        return {cap: int(n) for cap, n in self._completions("completions_per_capability", {})}

    def completions_per_second(self, start: float) -> list[int]:
        """Completions (ledger ``complete`` events) in each second from ``start`` (epoch seconds) on."""
        counts = {int(s): int(n) for s, n in self._completions("completions_per_second", {"start": start})}
        if counts and max(counts) > 10**6:
            raise ValueError(f"start {start}: more than 10^6 seconds before the last completion")
        return [counts.get(s, 0) for s in range(max(counts) + 1)] if counts else []

    @abstractmethod
    def _completions(self, query: str, params: dict) -> list[tuple]:
        """Rows of one of the run's named read queries (the completion counts, its creation time)."""

    @abstractmethod
    def event_rows(self) -> Iterable[tuple]:
        """The run's ledger as plain tuples in :data:`~benchscore.swarm.ledger.LEDGER_COLUMNS` order."""

    @abstractmethod
    def event_rows_after(self, seq: int) -> list[tuple]:
        """The run's ledger rows with ``seq`` greater than ``seq``, in order."""

    # ---- helpers shared by the stores --------------------------------------------------------
    def _lease_resolutions(self, expired: Iterable[tuple], policy: CrashPolicy, now: float,
                           batch: EventBatch) -> list[tuple]:
        """From rows (id, attempts, max_attempts, pheromone, claimed_by, capability) of expired
        claims: the updates (status, pheromone, id, attempt); their events go to ``batch``."""
        updates = []
        for task_id, attempts, max_attempts, pheromone, agent, capability in expired:
            status, new_p = resolve_expired_lease(policy, attempts, max_attempts, pheromone)
            updates.append((status.value, new_p, task_id, attempts))
            batch.add(task_id, _LEASE_EXPIRED, agent, attempts, None, None, status.value, now)
            if new_p != pheromone:
                batch.add(task_id, _PHEROMONE, agent, attempts, new_p, new_p - pheromone, _LEASE_EXPIRED, now,
                          capability=capability)
        return updates

    @staticmethod
    def _step_events(rows: Sequence[tuple], accepted: Sequence[bool], claims: Sequence[Claim], now: float,
                     batch: EventBatch) -> None:
        """The events of a step, in the order its store appends them: per accepted finish row
        ``(claim, status, score, output, new P_t, output sha256)`` its complete (or fail) and its
        pheromone change, then per claim its claim event."""
        run, events, changes = batch.run_id, batch.events, batch.changes
        for (claim, status, score, _output, new_p, digest), ok in zip(rows, accepted, strict=True):
            if not ok:
                continue
            if status == _DONE:
                events.append((run, claim.task_id, _COMPLETE, claim.agent_id, claim.attempt, score, None, digest, now))
                cause = _COMPLETE
            else:
                events.append((run, claim.task_id, _FAIL, claim.agent_id, claim.attempt, None, None, status, now))
                cause = _FAIL
            changes.append((len(events), claim.capability, claim.task_id, new_p))
            events.append((run, claim.task_id, _PHEROMONE, claim.agent_id, claim.attempt, new_p,
                           new_p - claim.pheromone, cause, now))
        events += [(run, c.task_id, _CLAIM, c.agent_id, c.attempt, c.pheromone, None, None, now) for c in claims]

    # ---- what each store implements ----------------------------------------------------------
    # Every write returns the Appended of its transaction for the mirror (None when it appended
    # nothing or no mirror is attached).
    @abstractmethod
    def _close(self) -> None: ...
    @abstractmethod
    def _delete_run(self) -> None: ...
    @abstractmethod
    def _get_run(self) -> tuple | None:
        """(crash_policy, lease_seconds, writers handed out) or None."""
    @abstractmethod
    def _chains(self) -> list[tuple]:
        """(writer_id, head, events, last_seq) of every writer of the run, by writer id."""
    @abstractmethod
    def _insert_run(self, policy: CrashPolicy, lease_seconds: float, now: float, rows: list[tuple]
                    ) -> tuple[list[int], Appended | None]:
        """Insert the run and its task rows in one transaction; :meth:`_exists` if the run is there."""
    @abstractmethod
    def _insert_tasks(self, rows: list[tuple], now: float) -> tuple[list[int], Appended]: ...
    @abstractmethod
    def _step(self, rows: list[tuple], agent: str | None, caps: list[str], limit: int, policy: CrashPolicy,
              lease: float) -> tuple[list[bool], list[Claim], Appended | None]:
        """One transaction: finish ``rows`` (``(claim, status, score, output/error, new P_t, output
        sha256)``, fenced by attempt and agent; no task twice), then claim up to ``limit``
        (resolving expired leases first, see :meth:`claim`); returns which rows were accepted and
        the claims in claim order."""
    @abstractmethod
    def _expire(self, policy: CrashPolicy, now: float) -> tuple[int, Appended | None]: ...
    @abstractmethod
    def _counts(self) -> dict[str, int]: ...
    @abstractmethod
    def _has_open(self, caps: list[str]) -> bool: ...
    @abstractmethod
    def _converge(self, capability: str | None) -> tuple | None: ...
    @abstractmethod
    def _record_convergence(self, scope: str, result: ConvergeResult, blob: str | None, now: float) -> None: ...
    @abstractmethod
    def _convergences(self) -> list[tuple]: ...
    @abstractmethod
    def _tasks(self) -> list[tuple]: ...
    @abstractmethod
    def _pheromones(self) -> list[tuple]: ...
    @abstractmethod
    def _task_states(self) -> list[tuple]: ...
    @abstractmethod
    def _capabilities(self) -> list[str]: ...
