"""The SQLite store: the embedded default (``sqlite:///run.db``).

WAL journal, and writers serialised across processes by an exclusive ``flock`` on a lock file
beside the database before ``BEGIN IMMEDIATE`` (a blocked writer wakes the moment the lock is
released instead of polling SQLite's busy handler). ``synchronous=NORMAL`` by default (in WAL mode
a committed transaction survives a process crash; ``?synchronous=FULL`` also survives power loss).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from ..lease import CrashPolicy
from ..ledger import chain_hashes
from ..sql import queries, read_sql, upgrade_sqlite
from ..tasks import Claim
from .base import Appended, EventBatch, RunNotFound, TaskPool, head_from_row

Q = queries("sqlite_queries.sql")


class SQLitePool(TaskPool):
    scheme = "sqlite"

    def __init__(self, url: str, run_id: str, path: Path, synchronous: str = "NORMAL") -> None:
        super().__init__(url, run_id)
        self.path = path
        if synchronous.upper() not in ("NORMAL", "FULL", "OFF"):
            raise ValueError(f"synchronous must be NORMAL, FULL or OFF, not {synchronous!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=60.0, check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout = 60000")
        with self._locked():
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.executescript("BEGIN IMMEDIATE;\n" + read_sql("sqlite_schema.sql") + "\nCOMMIT;")
            upgrade_sqlite(self.conn)
        self.conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Cursor]:
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            cur = self.conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                self.conn.rollback()
                raise
            cur.execute("COMMIT")
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _close(self) -> None:
        self.conn.close()
        os.close(self._lock_fd)

    def _delete_run(self) -> None:
        with self._write() as cur:
            for name in ("delete_events", "delete_convergence", "delete_tasks", "delete_run_row"):
                cur.execute(Q[name], {"run_id": self.run_id})

    def _get_run(self) -> tuple | None:
        return self.conn.execute(Q["get_run"], {"run_id": self.run_id}).fetchone()

    def _insert_run(self, policy: CrashPolicy, lease_seconds: float, now: float) -> None:
        with self._write() as cur:
            cur.execute(Q["insert_run"], {"run_id": self.run_id, "crash_policy": policy.value,
                                          "lease_seconds": lease_seconds, "now": now})

    def _append(self, cur: sqlite3.Cursor, batch: EventBatch, contents: list[bytes] | None = None
                ) -> Appended | None:
        """Extend the run's hash chain by the batch's events (inside the writer lock; ``contents``:
        the batch's event contents when they were computed before taking it)."""
        if not batch.events:
            return None
        row = cur.execute(Q["ledger_head"], {"run_id": self.run_id}).fetchone()
        if row is None:
            raise RunNotFound(f"no run {self.run_id!r} in {self.display_url}")
        head = head_from_row(row)
        hashes = chain_hashes(head.hash, batch.contents() if contents is None else contents)
        first = cur.execute(Q["max_seq"]).fetchone()[0] + 1
        seqs = range(first, first + len(hashes))
        cur.executemany(Q["insert_event"], ((q, *e, h) for q, e, h in zip(seqs, batch.events, hashes, strict=True)))
        cur.execute(Q["set_ledger_head"], {"run_id": self.run_id, "head": hashes[-1],
                                           "events": head.events + len(hashes), "seq": seqs[-1]})
        return batch.appended(head.seq, seqs) if self.mirror is not None else None

    def _insert_tasks(self, rows, now):
        run = self.run_id
        with self._write() as cur:
            first = cur.execute(Q["max_task_id"]).fetchone()[0] + 1
            cur.executemany(Q["insert_task"], ((run, c, p, ph, m, now) for c, p, ph, m in rows))
            ids = list(range(first, first + len(rows)))
            appended = self._append(cur, self._create_events(ids, rows, now))
        return ids, appended

    def _sweep(self, cur: sqlite3.Cursor, policy: CrashPolicy, now: float, batch: EventBatch) -> int:
        expired = cur.execute(Q["expired_leases"], {"run_id": self.run_id, "now": now}).fetchall()
        if not expired:
            return 0
        updates = self._lease_resolutions(expired, policy, now, batch)
        cur.executemany(Q["resolve_lease"], [
            {"status": s, "pheromone": p, "id": i, "attempt": a} for s, p, i, a in updates
        ])
        return len(updates)

    def _claim(self, agent, caps, limit, policy, lease):
        batch = self._batch()
        with self._write() as cur:
            now = time.time()
            self._sweep(cur, policy, now, batch)
            expires = now + lease
            rows = cur.execute(
                Q["claim_batch"],
                {"agent": agent, "lease": expires, "run_id": self.run_id,
                 "capabilities": orjson.dumps(caps).decode(), "limit": limit},
            ).fetchall()
            rows.sort(key=lambda r: (-r[4], r[0]))
            claims = [Claim(r[0], r[1], agent, r[2], r[3], float(r[4]), r[5], expires) for r in rows]
            self._claim_events(claims, now, batch)
            appended = self._append(cur, batch)
        return claims, appended

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

    def _complete(self, rows, now):
        batch = self._batch()
        self._complete_events(rows, now, batch)  # prepared before the lock; stale claims dropped inside
        contents = batch.contents()
        with self._write() as cur:
            accepted = self._held(cur, [r[0] for r in rows])
            cur.executemany(Q["complete_task"], [(score, output, new_p, claim.task_id) for (claim, score, output, new_p), ok
                                                 in zip(rows, accepted, strict=True) if ok])
            if not all(accepted):
                batch = batch.only(accepted, 2)
                contents = batch.contents()
            appended = self._append(cur, batch, contents)
        return accepted, appended

    def _fail(self, rows, now):
        batch = self._batch()
        self._fail_events(rows, now, batch)
        with self._write() as cur:
            accepted = self._held(cur, [r[0] for r in rows])
            cur.executemany(Q["fail_task"], [(status.value, error, new_p, claim.task_id) for (claim, status, error, new_p), ok
                                             in zip(rows, accepted, strict=True) if ok])
            appended = self._append(cur, batch.only(accepted, 2))
        return accepted, appended

    def _expire(self, policy, now):
        batch = self._batch()
        with self._write() as cur:
            n = self._sweep(cur, policy, now, batch)
            return n, self._append(cur, batch)

    def _counts(self) -> dict[str, int]:
        return dict(self.conn.execute(Q["counts"], {"run_id": self.run_id}).fetchall())

    def _has_open(self, caps):
        row = self.conn.execute(Q["has_open"], {"run_id": self.run_id, "capabilities": orjson.dumps(caps).decode()})
        return bool(row.fetchone()[0])

    def _converge(self, capability):
        if capability is None:
            return self.conn.execute(Q["converge_run"], {"run_id": self.run_id}).fetchone()
        return self.conn.execute(Q["converge_capability"], {"run_id": self.run_id, "capability": capability}).fetchone()

    def _record_convergence(self, scope, result, blob, now):
        with self._write() as cur:
            cur.execute(Q["record_convergence"], {"run_id": self.run_id, "scope": scope, "blob_sha256": blob,
                                                  "now": now, **result.model_dump()})

    def _convergences(self):
        return self.conn.execute(Q["convergences"], {"run_id": self.run_id}).fetchall()

    def _tasks(self):
        return self.conn.execute(Q["tasks"], {"run_id": self.run_id}).fetchall()

    def _task_states(self):
        return self.conn.execute(Q["task_states"], {"run_id": self.run_id}).fetchall()

    def _pheromones(self):
        return self.conn.execute(Q["pheromones"], {"run_id": self.run_id}).fetchall()

    def _capabilities(self):
        return [r[0] for r in self.conn.execute(Q["capabilities"], {"run_id": self.run_id})]

    def event_rows(self):
        return self.conn.execute(Q["events"], {"run_id": self.run_id}).fetchall()

    def _completions(self, query, params):
        return self.conn.execute(Q[query], {"run_id": self.run_id, **params}).fetchall()

    def event_rows_after(self, seq):
        return self.conn.execute(Q["events_after"], {"run_id": self.run_id, "seq": seq}).fetchall()

    def list_runs(self) -> list[str]:
        return [r[0] for r in self.conn.execute(Q["list_runs"])]
