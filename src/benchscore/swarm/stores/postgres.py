"""The PostgreSQL store (``postgresql://...``): the source of truth for agents on many machines.

Every write transaction of a run that appends ledger rows locks the run's row (``lock_ledger``)
after its task changes and just before the append: the run's ledger appends, and so its hash chain,
are serialised from that point to the commit (agents of other runs are not held up). The run's row
is the last lock a transaction takes and nothing waits after it, so the lock adds no deadlock. Claims
take a batch in pheromone order with ``FOR UPDATE SKIP LOCKED``; completions and failures of a batch are
one ``UPDATE ... FROM unnest(...)`` fenced by attempt and agent; every change is committed together
with its ledger rows (synchronous commit kept). All SQL lives in ``sql/schema.sql`` and the named
queries of ``sql/queries.sql``.

**Outages.** Every statement runs through :meth:`PostgresPool._do`: a transaction that fails with a
connection error (the server restarting, shutting down, not yet accepting connections, a dropped
connection) drops the connection and is retried with backoff, reconnecting first, until the server
has been unavailable for ``max_outage`` seconds (``--max-outage``, default
:data:`~benchscore.swarm.defaults.DEFAULT_MAX_OUTAGE`); each retry is in the pool's service log. A
failed reconnect is one more failed attempt of the same budget. A retried transaction is the same
work again, so it changes nothing twice: its claims, completions and failures are fenced by attempt
and agent, and when the connection broke during the COMMIT (which may have gone through), the
retry first looks for the transaction's first ledger row (its ``seq`` comes from a sequence, so it
is never reused): if the row is there, the commit went through and its result is returned instead
of claiming again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import psycopg

from benchscore.common.errors import BadInput

from ..defaults import DEFAULT_MAX_OUTAGE
from ..lease import CrashPolicy
from ..ledger import LedgerHead, chain_hashes
from ..retry import STORE_MAX_DELAY, ServiceLog, with_retry
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


def _connect_once(url: str) -> psycopg.Connection:
    """One connection attempt (autocommit; transactions are explicit); raises the driver's error."""
    dsn, schema = split_schema(url)
    kwargs: dict = {"autocommit": True, "connect_timeout": 5}
    if schema:
        kwargs["options"] = f"-c search_path={schema}"
    try:
        conn = psycopg.connect(dsn, **kwargs)
    except psycopg.ProgrammingError as exc:
        raise BadInput(f"store URL {_redacted(url)!r}: {' '.join(str(exc).split())}") from None
    # no server-side prepared statements: a generic plan of the batch statements (arrays of ids)
    # falls back to scanning the run's tasks, a custom plan uses the indexes
    conn.prepare_threshold = None
    return conn


def _apply_schema(conn: psycopg.Connection, schema: str | None) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7432001)")
        if schema:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        conn.execute(read_sql("schema.sql"))


def connect_pg(url: str, *, retries: int = CONNECT_RETRIES, max_outage: float | None = None,
               log: ServiceLog | None = None) -> tuple[psycopg.Connection, str | None]:
    """Connect and apply the schema; ServiceUnavailable if the server cannot be reached after
    ``retries`` retries (a store that is down when a command starts is one line at once), or, with
    ``max_outage``, once it has been unreachable that long (a worker joining a run under way)."""
    _dsn, schema = split_schema(url)

    def attempt() -> psycopg.Connection:
        conn = _connect_once(url)
        try:
            _apply_schema(conn, schema)
        except BaseException:
            conn.close()
            raise
        return conn

    conn = with_retry(attempt, service="postgresql", errors=PG_ERRORS, log=log or ServiceLog(),
                      retries=retries, base=0.1, max_outage=max_outage, cap=STORE_MAX_DELAY,
                      what=f"at {_redacted(url)}")
    return conn, schema


class PostgresPool(TaskPool):
    scheme = "postgresql"

    def __init__(self, url: str, run_id: str, conn: psycopg.Connection, *,
                 max_outage: float = DEFAULT_MAX_OUTAGE) -> None:
        super().__init__(url, run_id)
        self.conn: psycopg.Connection | None = conn
        self.max_outage = max_outage
        self._last_sweep = 0.0
        self._tx_first_seq: int | None = None

    @classmethod
    def connect(cls, url: str, run_id: str, *, max_outage: float = DEFAULT_MAX_OUTAGE,
                wait: bool = False) -> PostgresPool:
        """Connect; ``wait``: ride out an outage at connect too (a worker of a run under way)."""
        log = ServiceLog()
        conn, _ = connect_pg(url, max_outage=max_outage if wait else None, log=log)
        pool = cls(url, run_id, conn, max_outage=max_outage)
        pool.service_log = log
        return pool

    @property
    def display_url(self) -> str:
        return _redacted(self.url)

    def _connection(self) -> psycopg.Connection:
        """The open connection, or a new one (one attempt: a failure is a failed attempt of the
        caller's retry loop). The schema was applied by the first connection."""
        if self.conn is None or self.conn.closed:
            self.conn = _connect_once(self.url)
        return self.conn

    def _drop_connection(self, _exc: BaseException) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - the connection is already broken
                pass

    def _retry(self, attempt: Callable[[], T], what: str) -> T:
        return with_retry(attempt, service="postgresql", errors=PG_ERRORS, log=self.service_log,
                          on_error=self._drop_connection, what=what, max_outage=self.max_outage,
                          cap=STORE_MAX_DELAY)

    def _do(self, fn: Callable[[psycopg.Connection], T], what: str) -> T:
        """``fn`` in one transaction, retried through an outage (see the module docstring)."""
        committing: list = []  # [(result, first ledger seq)] once fn returned: only the COMMIT was left

        def attempt() -> T:
            conn = self._connection()
            if committing:
                result, seq = committing[0]
                went_through = seq is not None and conn.execute(Q["event_committed"], {
                    "run_id": self.run_id, "seq": seq}).fetchone() is not None
                committing.clear()  # only once the check itself got an answer
                if went_through:
                    return result  # the COMMIT went through before the connection broke
            self._tx_first_seq = None
            with conn.transaction():
                result = fn(conn)
                committing.append((result, self._tx_first_seq))
            committing.clear()
            return result

        return self._retry(attempt, what)

    def _one(self, name: str, params: dict) -> tuple | None:
        return self._do(lambda c: c.execute(Q[name], params).fetchone(), name)

    def _all(self, name: str, params: dict) -> list[tuple]:
        return self._do(lambda c: c.execute(Q[name], params).fetchall(), name)

    def _close(self) -> None:
        if self.conn is not None:
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
        if self._tx_first_seq is None:
            self._tx_first_seq = seqs[0]
        return batch.appended(head.seq, seqs) if self.mirror is not None else None

    def _delete_run(self) -> None:
        def tx(c: psycopg.Connection) -> None:
            c.execute(Q["delete_run"], {"run_id": self.run_id})
            c.execute(Q["delete_run_row"], {"run_id": self.run_id})

        self._do(tx, "delete_run")

    def reclaim_space(self) -> None:
        self._retry(lambda: self._connection().execute(Q["vacuum"]), "vacuum")  # outside a transaction

    def _get_run(self):
        return self._one("get_run", {"run_id": self.run_id})

    def _insert_run(self, policy, lease_seconds, now, rows):
        def tx(c: psycopg.Connection) -> tuple[list[int], Appended | None]:
            if c.execute(Q["insert_run"], {"run_id": self.run_id, "crash_policy": policy.value,
                                           "lease_seconds": lease_seconds, "now": now}).fetchone() is None:
                row = c.execute(Q["run_created_at"], {"run_id": self.run_id}).fetchone()
                if row is None or row[0] != now:  # not this process's own insert, retried after its COMMIT
                    raise self._exists()
                return [], None
            return self._insert_tasks_tx(c, rows, now) if rows else ([], None)

        out = self._do(tx, "create_run")
        if len(rows) >= 500:  # fresh statistics, so claims walk the pending index in order
            self._do(lambda c: c.execute(Q["analyze_tasks"]), "analyze")
        return out

    def _insert_tasks_tx(self, c: psycopg.Connection, rows: list[tuple], now: float
                         ) -> tuple[list[int], Appended | None]:
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
            self._tx_first_seq = seqs[0]
            with cur.copy(Q["copy_events"]) as copy:
                for q, e, h in zip(seqs, batch.events, hashes, strict=True):
                    copy.write_row((q, *e, h))
        c.execute(Q["set_ledger_head"], {"run_id": run, "head": hashes[-1], "events": head.events + len(hashes),
                                         "seq": seqs[-1]})
        return ids, batch.appended(head.seq, seqs) if self.mirror is not None else None

    def _insert_tasks(self, rows, now):
        out = self._do(lambda c: self._insert_tasks_tx(c, rows, now), "add_tasks")
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
