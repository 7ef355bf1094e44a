"""The audit ledger: one event per claim, completion, failure, pheromone change and lease expiry.

Every event carries the run id, the task, the agent, the attempt and the time. The ledger is
written in the same transaction as the task change it records, and its rows form **one hash chain
per writer**: every pool object that writes to a run (a worker process, the process that created
the run, a process that joined it) gets a writer id of the run (1, 2, 3, ... in the order they
first write), and each row it appends carries ``writer_id``, ``writer_seq`` (1, 2, 3, ... along that
writer's rows) and ``hash = sha256(hash of the writer's previous row || the row's content)``
(:func:`event_digest`; the first row of a writer chains to :data:`GENESIS`). The table
``swarm_chains`` keeps each writer's head (last hash, number of rows, last ``seq``) and the run's
row the number of writers: two writers never touch the same head, so appends of different workers
never wait for each other (the chain head used to be one row per run, locked by every appending
transaction through its commit: every commit of the run queued behind the previous one's flush).

What the chains prove: editing a row, deleting one, inserting one or moving one (within a writer's
chain, or from one writer's chain to another's) breaks a chain at the first row whose stored hash
no longer matches; a deleted tail of a chain no longer matches the head its writer recorded; a
deleted writer (its rows and its head) leaves the run's writer count short. What they cannot
prove: someone who rewrites rows *and* recomputes the hashes after them and the recorded heads
leaves valid chains; only a copy of the run's head recorded elsewhere (the run report, an earlier
audit report) exposes that. The **run's head** (:func:`run_head`) is sha256 over every writer's
head in writer order, a deterministic fingerprint of the run's logical history: ``at`` (the time of
an event) and ``seq`` (a store-wide sequence) are not hashed, so with one worker process the same
inputs give the same head.

``seq`` still orders the whole ledger: it comes from one sequence and is drawn after the
transaction's row locks on its tasks, so the events of one task are in ``seq`` order of their
commits (the audit replays each task in that order), and along one writer's chain ``seq`` rises.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

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
LEDGER_COLUMNS = ("seq", "run_id", "task_id", "kind", "agent", "attempt", "value", "delta", "note", "at", "hash",
                  "writer_id", "writer_seq")


@dataclass(frozen=True, slots=True)
class WriterHead:
    """The head of one writer's chain as its store records it: the last row's hash, the number of
    rows (its last ``writer_seq``) and the last row's ``seq`` (``GENESIS``, 0, 0 before its first row)."""

    writer_id: int
    hash: bytes
    events: int
    seq: int


@dataclass(frozen=True, slots=True)
class LedgerHead:
    """What the store records of a run's ledger: the run's head (:func:`run_head` of the writers'
    heads), the number of rows, the last ``seq``, every writer's head and the number of writers the
    run has handed out (``GENESIS``, 0, 0, (), 0 for a run without events)."""

    hash: bytes
    events: int
    seq: int
    writers: tuple[WriterHead, ...] = ()
    writer_count: int = 0

    @classmethod
    def of(cls, writers: Iterable[WriterHead], writer_count: int) -> LedgerHead:
        writers = tuple(sorted(writers, key=lambda w: w.writer_id))
        return cls(run_head(writers), sum(w.events for w in writers), max((w.seq for w in writers), default=0),
                   writers, writer_count)


_sha256 = hashlib.sha256


_pack_q = struct.Struct(">q").pack
_pack_d = struct.Struct(">d").pack
_pack_i = struct.Struct(">i").pack
_NULL, _SOME = b"\x00", b"\x01"


def _text(value: str | None) -> bytes:
    if value is None:
        return _NULL
    b = value.encode()
    return _SOME + _pack_i(len(b)) + b


def _float(value: float | None) -> bytes:
    return _NULL if value is None else _SOME + _pack_d(value)


def event_content(run_id: str, task_id: int, kind: str, agent: str | None, attempt: int, value: float | None,
                  delta: float | None, note: str | None) -> bytes:
    """The bytes a ledger row's hash covers: each field in order, texts as ``01 || int32 length ||
    UTF-8``, integers as int64, floats as IEEE-754 binary64 (``01 || 8 bytes``), all big-endian, and
    ``00`` for NULL. PostgreSQL computes the same bytes (``swarm_content`` in ``sql/schema.sql``:
    ``int8send``, ``float8send``), so its functions can extend a chain without a round trip; the
    values are those stored (the pool writes ``0.0`` for ``-0.0``, which SQLite would not keep)."""
    return (_text(run_id) + _pack_q(task_id) + _text(kind) + _text(agent) + _pack_q(attempt) + _float(value)
            + _float(delta) + _text(note))


def event_digest(prev: bytes, run_id: str, task_id: int, kind: str, agent: str | None, attempt: int,
                 value: float | None, delta: float | None, note: str | None) -> bytes:
    """``sha256(prev || event_content(...))``: the hash a ledger row stores, ``prev`` being the hash
    of the previous row of the same writer (:data:`GENESIS` for its first)."""
    return _sha256(prev + event_content(run_id, task_id, kind, agent, attempt, value, delta, note)).digest()


def event_contents(events: Sequence[tuple], start: int = 0) -> list[bytes]:
    """What :func:`event_digest` hashes after ``prev``, for event rows whose eight hashed fields
    ``(run_id, task_id, kind, agent, attempt, value, delta, note)`` start at column ``start`` (0 for
    the events a pool writes, 1 for ledger rows): :func:`event_content` of each, computed a column
    at a time (as fast as ``orjson.dumps`` of the same rows)."""
    n = len(events)
    if n == 0:
        return []
    cols = list(zip(*events, strict=True))[start:start + 8]
    cache: dict = {None: _NULL}

    def texts(col: Sequence) -> list[bytes]:
        out, get = [], cache.get
        for value in col:
            b = get(value)
            if b is None:
                b = _text(value)
                if len(b) <= 56:  # run ids, kinds, agents, causes repeat; output digests do not
                    cache[value] = b
            out.append(b)
        return out

    def floats(col: Sequence) -> list[bytes]:
        packed = struct.pack(f">{n}d", *(0.0 if x is None else x for x in col))
        return [_NULL if x is None else _SOME + packed[8 * k:8 * k + 8] for k, x in enumerate(col)]

    run, kind, agent, note = texts(cols[0]), texts(cols[2]), texts(cols[3]), texts(cols[7])
    task, attempt = struct.pack(f">{n}q", *cols[1]), struct.pack(f">{n}q", *cols[4])
    value, delta = floats(cols[5]), floats(cols[6])
    return [b"".join((run[k], task[8 * k:8 * k + 8], kind[k], agent[k], attempt[8 * k:8 * k + 8], value[k], delta[k],
                      note[k])) for k in range(n)]


def chain_hashes(prev: bytes, contents: Iterable[bytes]) -> list[bytes]:
    """The hashes of rows with these :func:`event_contents`, appended after a row whose hash is ``prev``."""
    out = []
    for content in contents:
        prev = _sha256(prev + content).digest()
        out.append(prev)
    return out


_RUN_HEAD_TAG = b"benchscore swarm ledger: writer heads\n"


def run_head(writers: Iterable[WriterHead | tuple[int, bytes, int]]) -> bytes:
    """The run's head: ``sha256(tag || for each writer with rows, in writer order: int64 writer_id ||
    int64 rows || its head)``; :data:`GENESIS` for a run without events. ``writers``: WriterHeads
    or (writer_id, head, rows)."""
    parts = []
    for w in sorted((w.writer_id, w.hash, w.events) if isinstance(w, WriterHead) else tuple(w) for w in writers):
        if w[2] > 0:
            parts.append(_pack_q(w[0]) + _pack_q(w[2]) + bytes(w[1]))
    return _sha256(_RUN_HEAD_TAG + b"".join(parts)).digest() if parts else GENESIS


BROKEN = ("hash chain broken: this row was edited, or a row before it in its writer's chain was deleted, "
          "inserted or moved")
UNCHAINED = "ledger row without a chain hash"
OUT_OF_ORDER = "seq does not rise along its writer's chain: rows were renumbered or moved"


@dataclass
class ChainCheck:
    """What :func:`verify_chains` finds: the rows that fail (with a reason), the run's head
    recomputed from the rows' contents, each writer's chain as stored (last stored hash, rows, last
    seq) and the seq of the row after which the recomputed head equals ``expect_head``."""

    broken: list[tuple[tuple, str]]
    head: bytes
    writers: dict[int, tuple[bytes, int, int]]
    found_at: int | None


def verify_chains(rows: Sequence[tuple], expect_head: str | None = None) -> ChainCheck:
    """Check each ledger row (:data:`LEDGER_COLUMNS`) against its writer's chain: its stored hash
    must be ``sha256(stored hash of the writer's previous row || content)``, its ``writer_seq`` the
    next of that writer and its ``seq`` above the previous row's. Rows without a writer or a hash
    are unchained. ``expect_head`` (hex): walking the rows in ``seq`` order, the first ``seq`` after
    which the run's head recomputed so far equals it (0 for the empty ledger; None when never)."""
    sha256 = _sha256
    broken: list[tuple[tuple, str]] = []
    by_writer: dict[int, list[tuple]] = {}
    for row in rows:
        w = row[11] if len(row) > 12 else None
        if w is None or row[10] is None:
            broken.append((row, UNCHAINED))
            continue
        by_writer.setdefault(w, []).append(row)
    stored: dict[int, tuple[bytes, int, int]] = {}
    recomputed: dict[int, list[bytes]] = {}  # writer -> the chain of its rows' contents alone, in writer order
    for w, chain in by_writer.items():
        chain.sort(key=lambda r: r[12])
        prev = content = GENESIS
        last_seq = 0
        heads = []
        for k, (row, body) in enumerate(zip(chain, event_contents(chain, 1), strict=True), 1):
            digest = sha256(prev + body).digest()
            content = sha256(content + body).digest()
            heads.append(content)
            stored_hash = bytes(row[10])
            if stored_hash != digest:
                broken.append((row, BROKEN))
            elif row[12] != k or row[0] <= last_seq:
                broken.append((row, OUT_OF_ORDER if row[12] == k else BROKEN))
            prev, last_seq = stored_hash, row[0]
        stored[w] = (prev, len(chain), chain[-1][0])
        recomputed[w] = heads
    head = run_head((w, h[-1], len(h)) for w, h in recomputed.items())
    found_at = None
    if expect_head is not None:
        expect = bytes.fromhex(expect_head)
        if expect == GENESIS:
            found_at = 0
        else:
            at: dict[int, int] = {}
            for row in sorted((r for chain in by_writer.values() for r in chain), key=lambda r: r[0]):
                w = row[11]
                at[w] = at.get(w, 0) + 1
                if run_head((v, recomputed[v][n - 1], n) for v, n in at.items()) == expect:
                    found_at = row[0]
                    break
    broken.sort(key=lambda b: (b[0][0] is None, b[0][0]))
    return ChainCheck(broken, head, stored, found_at)
