"""The audit ledger: one event per claim, completion, failure, pheromone change and lease expiry.

Every event carries the run id, the task, the agent, the attempt and the time. The ledger is
written in the same transaction as the task change it records, and its rows form a **hash
chain**: each row stores ``hash = sha256(hash of the run's previous row || the row's content)``
(:func:`event_digest`), and the run's row in ``swarm_runs`` keeps the chain head (the last hash,
the number of events and the last ``seq``). Appends of one run are serialised (SQLite: the store's
writer lock; PostgreSQL: a row lock on the run taken first in every write transaction), so the
chain order is the ``seq`` order.

What the chain proves: editing, deleting, inserting or reordering rows breaks it at the first row
whose stored hash no longer matches. What it cannot prove: someone who rewrites a row *and*
recomputes every hash after it (and the head in ``swarm_runs``) leaves a valid chain; only a copy
of the head recorded elsewhere (the run report, an earlier audit report) exposes that. ``at`` (the
time of an event) is not part of the content hashed: no proof rests on it, and leaving it out makes
the head a deterministic fingerprint of the run's logical history (with one worker process, the same
inputs give the same head).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import orjson

#: the "previous hash" of a run's first ledger row
GENESIS = bytes(32)


class EventKind(StrEnum):
    """What happened to a task. ``value``/``delta``/``note`` of an event, by kind:

    - ``create``: value = initial P_t, note = capability
    - ``claim``: value = P_t at the claim
    - ``complete``: value = task.score, note = sha256 (hex) of the task's output
    - ``fail``: note = ``pending`` (requeued) or ``failed`` (attempt limit reached)
    - ``pheromone``: value = P_t after the change, delta = the change, note = its cause
      (``complete``, ``fail`` or ``lease_expired``)
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
    """One ledger row. ``seq`` orders events within a store (for one run: the order of the chain)."""

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
    hash: bytes | None = None

    @classmethod
    def from_row(cls, row: tuple) -> LedgerEvent:
        seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, *rest = row
        return cls(seq, run_id, task_id, EventKind(kind), agent, attempt, value, delta, note, at,
                   bytes(rest[0]) if rest and rest[0] is not None else None)


#: column order of the ledger table, shared by every store
LEDGER_COLUMNS = ("seq", "run_id", "task_id", "kind", "agent", "attempt", "value", "delta", "note", "at", "hash")


@dataclass(frozen=True, slots=True)
class LedgerHead:
    """The chain head of a run as its store records it: the last row's hash, the number of rows
    and the last row's ``seq`` (``GENESIS``, 0, 0 for a run without events)."""

    hash: bytes
    events: int
    seq: int


_sha256 = hashlib.sha256
_dumps = orjson.dumps


def event_digest(prev: bytes, run_id: str, task_id: int, kind: str, agent: str | None, attempt: int,
                 value: float | None, delta: float | None, note: str | None) -> bytes:
    """``sha256(prev || JSON [run_id, task_id, kind, agent, attempt, value, delta, note])``: the hash a
    ledger row stores, computed from the values as stored (ints for task and attempt, floats for
    value and delta; the pool writes ``0.0`` for ``-0.0``, which SQLite would not keep)."""
    return _sha256(prev + _dumps((run_id, task_id, kind, agent, attempt, value, delta, note))).digest()


def event_contents(events: Iterable[tuple]) -> list[bytes]:
    """What :func:`event_digest` hashes after ``prev``, for event rows
    ``(run_id, task_id, kind, agent, attempt, value, delta, note, at)``."""
    return [_dumps(e[:8]) for e in events]


def chain_hashes(prev: bytes, contents: Iterable[bytes]) -> list[bytes]:
    """The hashes of rows with these :func:`event_contents`, appended after a row whose hash is ``prev``."""
    out = []
    for content in contents:
        prev = _sha256(prev + content).digest()
        out.append(prev)
    return out


BROKEN = "hash chain broken: this row was edited, or a row before it was deleted, inserted or moved"
UNCHAINED = "ledger row without a chain hash"


def verify_chain(rows: Sequence[tuple], expect_head: str | None = None
                 ) -> tuple[list[tuple[tuple, str]], bytes, bytes, int | None]:
    """Check each ledger row's stored hash (last column) against ``sha256(previous row's stored hash
    || content)``. Returns the rows that fail with a reason, the head recomputed from the contents
    alone, the last stored hash, and the seq of the row where the recomputed chain equals
    ``expect_head`` (hex; None when it never does)."""
    sha256, dumps = _sha256, _dumps
    broken: list[tuple[tuple, str]] = []
    prev = content = GENESIS  # the stored chain; the chain recomputed from the contents
    found_at = None
    expect = bytes.fromhex(expect_head) if expect_head is not None else None
    for row in rows:
        body = dumps(row[1:9])
        digest = sha256(prev + body).digest()
        # content follows the stored chain until the first break, then is recomputed on its own
        content = sha256(content + body).digest() if broken else digest
        stored = row[10]
        if stored != digest:
            if not broken:
                content = digest
            broken.append((row, UNCHAINED if stored is None else BROKEN))
            prev = digest if stored is None else bytes(stored)
        else:
            prev = digest
        if content == expect and found_at is None:
            found_at = row[0]
    return broken, content, prev, found_at
