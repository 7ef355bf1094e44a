"""The SQLite store: the embedded default (``sqlite:///run.db``).

WAL journal, and writers serialised across processes by an exclusive ``flock`` on a lock file
beside the database before ``BEGIN IMMEDIATE`` (a blocked writer wakes the moment the lock is
released instead of polling SQLite's busy handler). ``synchronous=NORMAL`` by default (in WAL mode
a committed transaction survives a process crash; ``?synchronous=FULL`` also survives power loss).

**Locks held by others** (another program holding the database locked): SQLite's busy handler
waits up to ``max_outage`` seconds (``--max-outage``), and a ``database is locked`` that comes back
anyway (without the busy handler, e.g. while another connection recovers the WAL) is retried with
backoff within the same limit; every retry is in the pool's service log. A transaction that fails
is rolled back, so a retry does its work once. Past the limit, or on a full disk, or when SQLite finds
the file damaged, the store raises one line (:class:`~benchscore.swarm.stores.base.StoreFull`,
:class:`~benchscore.swarm.stores.base.StoreCorrupt`, ServiceUnavailable), never a traceback. A
store that could not be opened leaves behind none of the files it created.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TypeVar

import orjson

from benchscore.common.errors import BadInput

from ..defaults import DEFAULT_MAX_OUTAGE
from ..lease import CrashPolicy
from ..ledger import GENESIS, chain_hashes
from ..retry import STORE_MAX_DELAY, with_retry
from ..sql import queries, read_sql, upgrade_sqlite
from ..tasks import Claim
from .base import Appended, EventBatch, RunNotFound, StoreCorrupt, StoreFull, TaskPool

Q = queries("sqlite_queries.sql")
T = TypeVar("T")


class _Busy(Exception):
    """``database is locked`` / ``busy``: someone else holds the database; retried."""


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


class SQLitePool(TaskPool):
    scheme = "sqlite"

    def __init__(self, url: str, run_id: str, path: Path, synchronous: str = "NORMAL", *,
                 max_outage: float = DEFAULT_MAX_OUTAGE) -> None:
        super().__init__(url, run_id)
        self.path = path
        self.max_outage = max_outage
        if synchronous.upper() not in ("NORMAL", "FULL", "OFF"):
            raise ValueError(f"synchronous must be NORMAL, FULL or OFF, not {synchronous!r}")
        #: the files this pool created (the database and its lock file); see discard
        self.created_files = [f for f in (path, Path(f"{path}.lock")) if not f.exists()]
        self.conn: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._writer: int | None = None  # this pool's writer id of the run (handed out at its first write)
        self._writer_pid = 0
        self._new_writer: int | None = None  # handed out by the transaction under way
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            self.conn = sqlite3.connect(path, isolation_level=None, timeout=max_outage, check_same_thread=False)
            self.conn.execute(f"PRAGMA busy_timeout = {int(max_outage * 1000)}")

            def schema() -> None:
                with self._locked():
                    self.conn.execute("PRAGMA journal_mode = WAL")
                    try:
                        self.conn.executescript("BEGIN IMMEDIATE;\n" + read_sql("sqlite_schema.sql") + "\nCOMMIT;")
                    except BaseException:
                        if self.conn.in_transaction:
                            self.conn.rollback()
                        raise
                    upgrade_sqlite(self.conn)

            self._retry(lambda: self._guard(schema), "open")
            self.conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Close, and delete the files this pool created when it opened if they hold nothing (no
        run, no budget window): a command that failed before its run was in the store (a full disk,
        a run id taken) leaves nothing behind, and a file that another process has put a run in
        since is kept. Checked under the writers' file lock."""
        created = [f for f in self.created_files if f.exists()]
        try:
            if created and self._lock_fd is not None:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            if created and self._holds_nothing():
                for f in created:
                    names = [f, *(Path(f"{f}{x}") for x in ("-wal", "-shm", "-journal"))] if f == self.path else [f]
                    for name in names:
                        name.unlink(missing_ok=True)
        finally:
            self.close()

    def _holds_nothing(self) -> bool:
        wal = Path(f"{self.path}-wal")
        if not self.path.exists() or (self.path.stat().st_size == 0 and (not wal.exists() or wal.stat().st_size == 0)):
            return True
        try:
            with closing(sqlite3.connect(self.path, timeout=1)) as c:
                tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                return all(c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == 0
                           for t in ("swarm_runs", "swarm_budget_windows") if t in tables)
        except sqlite3.Error:
            return False

    def _guard(self, fn: Callable[[], T]) -> T:
        """``fn``, with SQLite's errors as the store's: busy (retried), disk full, damaged file."""
        try:
            return fn()
        except sqlite3.Error as exc:
            msg = str(exc).lower()
            if isinstance(exc, sqlite3.OperationalError) and ("locked" in msg or "busy" in msg):
                raise _Busy(str(exc)) from None
            if "full" in msg:
                raise StoreFull(f"store {self.url}: the disk is full ({_one_line(exc)})") from None
            damaged = type(exc) is sqlite3.DatabaseError or any(w in msg for w in ("malformed", "corrupt", "decode"))
            if damaged:
                raise StoreCorrupt(f"store {self.url}: the database is corrupt ({_one_line(exc)})") from None
            raise BadInput(f"store {self.url}: {_one_line(exc)}") from None

    def _retry(self, attempt: Callable[[], T], what: str) -> T:
        return with_retry(attempt, service="sqlite", errors=(_Busy,), log=self.service_log, what=what,
                          max_outage=self.max_outage, cap=STORE_MAX_DELAY)

    def _read(self, fn: Callable[[sqlite3.Connection], T], what: str = "read") -> T:
        return self._retry(lambda: self._guard(lambda: fn(self.conn)), what)

    def _locked(self):
        return _FileLock(self._lock_fd)

    def _tx(self, fn: Callable[[sqlite3.Cursor], T], what: str) -> T:
        """``fn`` in one write transaction (file lock, ``BEGIN IMMEDIATE``, commit), retried while
        the database is locked by someone else (rolled back first, so the work is done once)."""

        def attempt() -> T:
            with self._locked():
                cur = self.conn.cursor()
                self._guard(lambda: cur.execute("BEGIN IMMEDIATE"))
                self._new_writer = None
                try:
                    out = self._guard(lambda: fn(cur))
                    self._guard(lambda: cur.execute("COMMIT"))
                    if self._new_writer is not None:
                        self._writer, self._writer_pid = self._new_writer, os.getpid()
                except BaseException:
                    if self.conn.in_transaction:
                        try:
                            self.conn.rollback()
                        except sqlite3.Error:
                            pass
                    raise
                return out

        return self._retry(attempt, what)

    def _close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _delete_run(self) -> None:
        def tx(cur: sqlite3.Cursor) -> None:
            for name in ("delete_events", "delete_chains", "delete_convergence", "delete_tasks", "delete_run_row"):
                cur.execute(Q[name], {"run_id": self.run_id})

        self._tx(tx, "delete_run")

    def _get_run(self) -> tuple | None:
        return self._read(lambda c: c.execute(Q["get_run"], {"run_id": self.run_id}).fetchone())

    def _chains(self) -> list[tuple]:
        return self._q("chains")

    def _insert_run(self, policy: CrashPolicy, lease_seconds: float, now: float, rows: list[tuple]):
        def tx(cur: sqlite3.Cursor) -> tuple[list[int], Appended | None]:
            cur.execute(Q["insert_run"], {"run_id": self.run_id, "crash_policy": policy.value,
                                          "lease_seconds": lease_seconds, "now": now})
            if cur.rowcount == 0:
                raise self._exists()
            return self._insert_tasks_tx(cur, rows, now) if rows else ([], None)

        return self._tx(tx, "create_run")

    def _writer_id(self, cur: sqlite3.Cursor) -> int:
        """This pool's writer id of the run; a new one (kept if the transaction commits) at its first
        write, or in a forked process."""
        if self._new_writer is not None:
            return self._new_writer
        if self._writer is not None and self._writer_pid == os.getpid():
            return self._writer
        row = cur.execute(Q["count_writer"], {"run_id": self.run_id}).fetchone()
        if row is None:
            raise RunNotFound(f"no run {self.run_id!r} in {self.display_url}")
        cur.execute(Q["insert_chain"], {"run_id": self.run_id, "writer": row[0], "head": GENESIS})
        self._new_writer = row[0]
        return row[0]

    def _append(self, cur: sqlite3.Cursor, batch: EventBatch, contents: list[bytes] | None = None
                ) -> Appended | None:
        """Extend this writer's hash chain by the batch's events (inside the writer lock; ``contents``:
        the batch's event contents when they were computed before taking it)."""
        if not batch.events:
            return None
        writer = self._writer_id(cur)
        head, n = cur.execute(Q["chain_head"], {"run_id": self.run_id, "writer": writer}).fetchone()
        hashes = chain_hashes(bytes(head), batch.contents() if contents is None else contents)
        first = cur.execute(Q["max_seq"]).fetchone()[0] + 1
        seqs = range(first, first + len(hashes))
        cur.executemany(Q["insert_event"], ((q, *e, h, writer, k) for k, (q, e, h)
                                            in enumerate(zip(seqs, batch.events, hashes, strict=True), n + 1)))
        cur.execute(Q["set_chain_head"], {"run_id": self.run_id, "writer": writer, "head": hashes[-1],
                                          "events": n + len(hashes), "seq": seqs[-1]})
        return batch.appended(writer, n + len(hashes), list(seqs)) if self._mirror is not None else None

    def _insert_tasks_tx(self, cur: sqlite3.Cursor, rows: list[tuple], now: float):
        run = self.run_id
        first = cur.execute(Q["max_task_id"]).fetchone()[0] + 1
        cur.executemany(Q["insert_task"], ((run, c, p, ph, m, now) for c, p, ph, m in rows))
        ids = list(range(first, first + len(rows)))
        return ids, self._append(cur, self._create_events(ids, rows, now))

    def _insert_tasks(self, rows, now):
        return self._tx(lambda cur: self._insert_tasks_tx(cur, rows, now), "add_tasks")

    def _sweep(self, cur: sqlite3.Cursor, policy: CrashPolicy, now: float, batch: EventBatch) -> int:
        expired = cur.execute(Q["expired_leases"], {"run_id": self.run_id, "now": now}).fetchall()
        if not expired:
            return 0
        updates = self._lease_resolutions(expired, policy, now, batch)
        cur.executemany(Q["resolve_lease"], [
            {"status": s, "pheromone": p, "id": i, "attempt": a} for s, p, i, a in updates
        ])
        return len(updates)

    def _step(self, rows, agent, caps, limit, policy, lease):
        def tx(cur: sqlite3.Cursor):
            batch = self._batch()
            now = time.time()
            if limit:
                self._sweep(cur, policy, now, batch)
            accepted = self._held(cur, [r[0] for r in rows]) if rows else []
            done = [(score, output, new_p, claim.task_id) for (claim, status, score, output, new_p, _d), ok
                    in zip(rows, accepted, strict=True) if ok and status == "done"]
            failed = [(status, error, new_p, claim.task_id) for (claim, status, _s, error, new_p, _d), ok
                      in zip(rows, accepted, strict=True) if ok and status != "done"]
            if done:
                cur.executemany(Q["complete_task"], done)
            if failed:
                cur.executemany(Q["fail_task"], failed)
            claims: list[Claim] = []
            if limit:
                expires = now + lease
                found = cur.execute(
                    Q["claim_batch"],
                    {"agent": agent, "lease": expires, "run_id": self.run_id,
                     "capabilities": orjson.dumps(caps).decode(), "limit": limit},
                ).fetchall()
                found.sort(key=lambda r: (-r[4], r[0]))
                claims = [Claim(r[0], r[1], agent, r[2], r[3], float(r[4]), r[5], expires) for r in found]
            self._step_events(rows, accepted, claims, now, batch)
            return accepted, claims, self._append(cur, batch)

        return self._tx(tx, "claim" if limit else "finish")

    def _held(self, cur: sqlite3.Cursor, claims: list[Claim]) -> list[bool]:
        """The attempt fence, inside the writer lock: True where the claim is still the task's
        current one (held by its agent at its attempt)."""
        held = {r[0]: (r[1], r[2]) for r in cur.execute(Q["holders"], {
            "ids": orjson.dumps([c.task_id for c in claims]).decode(), "run_id": self.run_id})}
        out = []
        for c in claims:
            out.append(held.get(c.task_id) == (c.attempt, c.agent_id))
            held.pop(c.task_id, None)  # a claim passed twice is completed (or failed) once
        return out

    def _expire(self, policy, now):
        def tx(cur: sqlite3.Cursor):
            batch = self._batch()
            n = self._sweep(cur, policy, now, batch)
            return n, self._append(cur, batch)

        return self._tx(tx, "expire_leases")

    def _q(self, name: str, params: dict | None = None) -> list[tuple]:
        return self._read(lambda c: c.execute(Q[name], {"run_id": self.run_id, **(params or {})}).fetchall(), name)

    def _counts(self) -> dict[str, int]:
        return dict(self._q("counts"))

    def _has_open(self, caps):
        return bool(self._q("has_open", {"capabilities": orjson.dumps(caps).decode()})[0][0])

    def _converge(self, capability):
        rows = self._q("converge_run") if capability is None else self._q("converge_capability",
                                                                            {"capability": capability})
        return rows[0] if rows else None

    def _record_convergence(self, scope, result, blob, now):
        self._tx(lambda cur: cur.execute(Q["record_convergence"], {
            "run_id": self.run_id, "scope": scope, "blob_sha256": blob, "now": now, **result.model_dump()}),
            "record_convergence")

    def _convergences(self):
        return self._q("convergences")

    def _tasks(self):
        return self._q("tasks")

    def _task_states(self):
        return self._q("task_states")

    def _pheromones(self):
        return self._q("pheromones")

    def _capabilities(self):
        return [r[0] for r in self._q("capabilities")]

    def event_rows(self):
        return self._q("events")

    def _completions(self, query, params):
        return self._q(query, params)

    def event_rows_after(self, seq):
        return self._q("events_after", {"seq": seq})

    def list_runs(self) -> list[str]:
        return [r[0] for r in self._read(lambda c: c.execute(Q["list_runs"]).fetchall(), "list_runs")]


class _FileLock:
    """The exclusive ``flock`` on the lock file that serialises this store's writers."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
