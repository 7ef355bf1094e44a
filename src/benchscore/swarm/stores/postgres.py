"""The PostgreSQL store (``postgresql://...``): the source of truth for agents on many machines.

Every write transaction of a run that appends ledger rows locks the run's row (``lock_ledger``)
after its task changes and just before the append: the run's ledger appends, and so its hash chain,
are serialised from that point to the commit (agents of other runs are not held up). The run's row
is the last lock a transaction takes and nothing waits after it, so the lock adds no deadlock. Claims
take a batch in pheromone order with ``FOR UPDATE SKIP LOCKED``; completions and failures of a batch are
one ``UPDATE ... FROM unnest(...)`` fenced by attempt and agent; every change is committed together
with its ledger rows (synchronous commit kept). All SQL lives in ``sql/schema.sql`` and the named
queries of ``sql/queries.sql``. A dropped connection is retried with backoff (reconnecting) and
reported in the pool's service log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import psycopg

from benchscore.common.errors import BadInput, ServiceUnavailable

from ..lease import CrashPolicy
from ..ledger import LedgerHead, chain_hashes
from ..retry import with_retry
from ..sql import queries, read_sql
from ..tasks import Claim
from .base import Appended, EventBatch, RunNotFound, TaskPool, head_from_row

Q = queries("queries.sql")
T = TypeVar("T")
PG_ERRORS = (psycopg.OperationalError, psycopg.InterfaceError)
CONNECT_RETRIES = 3


def split_schema(url: str) -> tuple[str, str | None]:
    """(connection URL without ``schema=``, schema name or None)."""
    parts = urlsplit(url)
    params = parse_qsl(parts.query, keep_blank_values=True)
    schema = None
    rest = []
    for k, v in params:
        if k == "schema":
            schema = v
        else:
            rest.append((k, v))
    if schema is not None and (not schema or not schema.replace("_", "").isalnum()):
        raise BadInput(f"store URL: schema {schema!r}: expected letters, digits and underscores")
    return urlunsplit(parts._replace(query=urlencode(rest))), schema


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))
    return url


def connect_pg(url: str, *, retries: int = CONNECT_RETRIES) -> tuple[psycopg.Connection, str | None]:
    """Connect (autocommit; transactions are explicit), apply the schema; ServiceUnavailable if
    the server cannot be reached after ``retries`` retries."""
    dsn, schema = split_schema(url)
    kwargs = {"autocommit": True, "connect_timeout": 5}
    if schema:
        kwargs["options"] = f"-c search_path={schema}"
    last: Exception | None = None
    for attempt in range(retries + 1):
        try:
            conn = psycopg.connect(dsn, **kwargs)
            break
        except psycopg.ProgrammingError as exc:
            raise BadInput(f"store URL {_redacted(url)!r}: {' '.join(str(exc).split())}") from None
        except PG_ERRORS as exc:
            last = exc
            if attempt < retries:
                time.sleep(0.1 * 2**attempt)
    else:
        msg = " ".join(str(last).split())[:200]
        raise ServiceUnavailable(f"PostgreSQL at {_redacted(url)}: unreachable after {retries} retries: {msg}")
    # no server-side prepared statements: a generic plan of the batch statements (arrays of ids)
    # falls back to scanning the run's tasks, a custom plan uses the indexes
    conn.prepare_threshold = None
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7432001)")
        if schema:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        conn.execute(read_sql("schema.sql"))
    return conn, schema


class PostgresPool(TaskPool):
    scheme = "postgresql"

    def __init__(self, url: str, run_id: str, conn: psycopg.Connection) -> None:
        super().__init__(url, run_id)
        self.conn = conn
        self._last_sweep = 0.0

    @classmethod
    def connect(cls, url: str, run_id: str) -> PostgresPool:
        conn, _ = connect_pg(url)
        return cls(url, run_id, conn)

    @property
    def display_url(self) -> str:
        return _redacted(self.url)

    def _reconnect(self, _exc: BaseException) -> None:
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - the connection is already broken
            pass
        self.conn, _ = connect_pg(self.url, retries=0)

    def _do(self, fn: Callable[[psycopg.Connection], T], what: str) -> T:
        def attempt() -> T:
            with self.conn.transaction():
                return fn(self.conn)

        return with_retry(attempt, service="postgresql", errors=PG_ERRORS, log=self.service_log,
                          on_error=self._reconnect, what=what)

    def _one(self, name: str, params: dict) -> tuple | None:
        return self._do(lambda c: c.execute(Q[name], params).fetchone(), name)

    def _all(self, name: str, params: dict) -> list[tuple]:
        return self._do(lambda c: c.execute(Q[name], params).fetchall(), name)

    def _close(self) -> None:
        self.conn.close()

    def _lock(self, c: psycopg.Connection) -> LedgerHead:
        """Lock the run's row (held to the commit) and read its chain head."""
        row = c.execute(Q["lock_ledger"], {"run_id": self.run_id}).fetchone()
        if row is None:
            raise RunNotFound(f"no run {self.run_id!r} in {self.display_url}")
        return head_from_row(row)

    def _append(self, c: psycopg.Connection, batch: EventBatch, contents: list[bytes] | None = None
                ) -> Appended | None:
        """Lock the run's row and extend its hash chain by the batch's events (the last statements
        of a transaction; ``contents``: the batch's event contents when computed beforehand)."""
        if not batch.events:
            return None
        head = self._lock(c)
        hashes = chain_hashes(head.hash, batch.contents() if contents is None else contents)
        events = orjson.dumps([(*e[1:], h.hex()) for e, h in zip(batch.events, hashes, strict=True)]).decode()
        seqs = [r[0] for r in c.execute(Q["append_events"], {
            "run_id": self.run_id, "events": events, "head": hashes[-1], "n": len(hashes)}).fetchall()]
        return batch.appended(head.seq, seqs) if self.mirror is not None else None

    def _delete_run(self) -> None:
        def tx(c: psycopg.Connection) -> None:
            c.execute(Q["delete_run"], {"run_id": self.run_id})
            c.execute(Q["delete_run_row"], {"run_id": self.run_id})

        self._do(tx, "delete_run")

    def reclaim_space(self) -> None:
        with_retry(lambda: self.conn.execute(Q["vacuum"]), service="postgresql", errors=PG_ERRORS,
                   log=self.service_log, on_error=self._reconnect, what="vacuum")

    def _get_run(self):
        return self._one("get_run", {"run_id": self.run_id})

    def _insert_run(self, policy, lease_seconds, now):
        self._do(lambda c: c.execute(Q["insert_run"], {"run_id": self.run_id, "crash_policy": policy.value,
                                                       "lease_seconds": lease_seconds, "now": now}), "insert_run")

    def _insert_tasks(self, rows, now):
        def tx(c: psycopg.Connection) -> tuple[list[int], Appended | None]:
            ids = sorted(r[0] for r in c.execute(Q["allocate_task_ids"], {"n": len(rows)}).fetchall())
            batch = self._create_events(ids, rows, now)
            contents = batch.contents()
            run = self.run_id
            with c.cursor() as cur:
                with cur.copy(Q["copy_tasks"]) as copy:
                    for i, (cap, payload, p, m) in zip(ids, rows, strict=True):
                        copy.write_row((i, run, cap, payload, p, m, now))
                head = self._lock(c)
                hashes = chain_hashes(head.hash, contents)
                seqs = sorted(r[0] for r in c.execute(Q["allocate_event_seqs"], {"n": len(rows)}).fetchall())
                with cur.copy(Q["copy_events"]) as copy:
                    for q, e, h in zip(seqs, batch.events, hashes, strict=True):
                        copy.write_row((q, *e, h))
            c.execute(Q["set_ledger_head"], {"run_id": run, "head": hashes[-1], "events": head.events + len(hashes),
                                             "seq": seqs[-1]})
            return ids, batch.appended(head.seq, seqs) if self.mirror is not None else None

        out = self._do(tx, "add_tasks")
        if len(rows) >= 500:  # fresh statistics, so claims walk the pending index in order
            self._do(lambda c: c.execute(Q["analyze_tasks"]), "analyze")
        return out

    def _sweep(self, c: psycopg.Connection, policy: CrashPolicy, now: float, batch: EventBatch) -> int:
        expired = c.execute(Q["expired_leases"], {"run_id": self.run_id}).fetchall()
        if not expired:
            return 0
        updates = self._lease_resolutions(expired, policy, now, batch)
        c.execute(Q["resolve_leases"], {"statuses": [u[0] for u in updates], "pheromones": [u[1] for u in updates],
                                        "ids": [u[2] for u in updates], "attempts": [u[3] for u in updates]})
        return len(updates)

    def _claim(self, agent, caps, limit, policy, lease):
        # Expired leases are swept at most every min(1 s, lease/2) per connection, and always
        # before reporting that nothing is claimable.
        def tx(c: psycopg.Connection):
            batch = self._batch()
            now = time.time()
            swept = False
            if now - self._last_sweep >= min(1.0, lease / 2):
                self._sweep(c, policy, now, batch)
                self._last_sweep, swept = now, True
            rows = self._claim_rows(c, agent, caps, limit, lease)
            if not rows and not swept:
                n = self._sweep(c, policy, now, batch)
                self._last_sweep = now
                if n:
                    rows = self._claim_rows(c, agent, caps, limit, lease)
            rows.sort(key=lambda r: (-r[4], r[0]))
            claims = [Claim(r[0], r[1], agent, r[2], r[3], r[4], r[5], r[6]) for r in rows]
            self._claim_events(claims, now, batch)
            return claims, self._append(c, batch)

        return self._do(tx, "claim")

    def _claim_rows(self, c: psycopg.Connection, agent, caps, limit, lease) -> list[tuple]:
        return c.execute(Q["claim_batch"], {"run_id": self.run_id, "capabilities": caps, "limit": limit,
                                            "agent": agent, "lease": lease}).fetchall()

    def _complete(self, rows, now):
        prepared = self._batch()
        self._complete_events(rows, now, prepared)  # before the lock; stale claims dropped inside
        contents = prepared.contents()
        payload = orjson.dumps([(r[0].task_id, r[0].attempt, r[0].agent_id, r[1], r[2], r[3]) for r in rows]).decode()

        def tx(c: psycopg.Connection):
            done = {r[0] for r in c.execute(Q["complete_batch"], {"run_id": self.run_id, "rows": payload}).fetchall()}
            accepted = [r[0].task_id in done for r in rows]
            if all(accepted):
                return accepted, self._append(c, prepared, contents)
            return accepted, self._append(c, prepared.only(accepted, 2))

        return self._do(tx, "complete")

    def _fail(self, rows, now):
        prepared = self._batch()
        self._fail_events(rows, now, prepared)
        payload = orjson.dumps([(r[0].task_id, r[0].attempt, r[0].agent_id, r[1].value, r[2], r[3])
                                for r in rows]).decode()

        def tx(c: psycopg.Connection):
            failed = {r[0] for r in c.execute(Q["fail_batch"], {"run_id": self.run_id, "rows": payload}).fetchall()}
            accepted = [r[0].task_id in failed for r in rows]
            return accepted, self._append(c, prepared.only(accepted, 2))

        return self._do(tx, "fail")

    def _expire(self, policy, now):
        def tx(c: psycopg.Connection):
            batch = self._batch()
            n = self._sweep(c, policy, now, batch)
            return n, self._append(c, batch)

        return self._do(tx, "expire_leases")

    def _counts(self):
        return {s: int(n) for s, n in self._all("counts", {"run_id": self.run_id})}

    def _has_open(self, caps):
        return bool(self._one("has_open", {"run_id": self.run_id, "capabilities": caps})[0])

    def _converge(self, capability):
        if capability is None:
            return self._one("converge_run", {"run_id": self.run_id})
        return self._one("converge_capability", {"run_id": self.run_id, "capability": capability})

    def _record_convergence(self, scope, result, blob, now):
        self._do(lambda c: c.execute(Q["record_convergence"], {
            "run_id": self.run_id, "scope": scope, "blob_sha256": blob, "now": now, **result.model_dump()}),
            "record_convergence")

    def _convergences(self):
        return self._all("convergences", {"run_id": self.run_id})

    def _tasks(self):
        return self._all("tasks", {"run_id": self.run_id})

    def _task_states(self):
        return self._all("task_states", {"run_id": self.run_id})

    def _pheromones(self):
        return self._all("pheromones", {"run_id": self.run_id})

    def _capabilities(self):
        return [r[0] for r in self._all("capabilities", {"run_id": self.run_id})]

    def event_rows(self):
        return self._all("events", {"run_id": self.run_id})

    def _completions(self, query, params):
        return self._all(query, {"run_id": self.run_id, **params})

    def event_rows_after(self, seq):
        return self._all("events_after", {"run_id": self.run_id, "seq": seq})

    def list_runs(self) -> list[str]:
        return [r[0] for r in self._all("list_runs", {})]
