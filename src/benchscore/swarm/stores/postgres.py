"""The PostgreSQL store (``postgresql://...``): the source of truth for agents on many machines.

Each pool object is one **writer** of the run (a writer id handed out at its first write,
``swarm_new_writer``) and appends its ledger rows to its own hash chain, whose head is its own row
of ``swarm_chains``: two workers never wait for each other's head, so their commits overlap (and
share WAL flushes) the way unchained commits do. An agent's round is **one round trip**:
``swarm_step`` (``sql/schema.sql``) finishes its claims (fenced by attempt and agent), claims the
next batch in pheromone order with ``FOR UPDATE SKIP LOCKED`` and appends the events of both, hashed
in SQL (``swarm_content``, the same bytes as :func:`benchscore.swarm.ledger.event_content`), inside
one transaction (synchronous commit kept). A round of one task (at most one finish that takes its
task out of the pool, a claim of at most one) runs ``step_one`` instead (``sql/queries.sql``): the
same work as one plain statement, prepared once per connection, with no plpgsql and no JSON; it
leaves the same rows, hashes and answers (``tests/swarm/runtime/test_step_one.py``). All SQL lives
in ``sql/schema.sql`` and the named queries of ``sql/queries.sql``.

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

import hashlib
import os
import re
import time
from collections.abc import Callable
from functools import cache
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import psycopg

from benchscore.common.errors import BadInput

from ..defaults import DEFAULT_MAX_OUTAGE
from ..lease import CrashPolicy
from ..ledger import chain_hashes
from ..retry import STORE_MAX_DELAY, ServiceLog, with_retry
from ..sql import queries, read_sql
from ..tasks import Claim, TaskStatus
from .base import Appended, EventBatch, RunNotFound, TaskPool

Q = queries("queries.sql")


@cache
def positional(query: str) -> tuple[str, tuple[str, ...]]:
    """``query`` with its ``%(name)s`` placeholders as ``$1, $2, ...`` (a name used twice is one
    parameter) and the names in that order, for a :class:`psycopg.RawCursor`, which sends the text
    as it is. psycopg converts a query with named placeholders at every call unless its text is
    at most 4,096 bytes long (``MAX_CACHED_STATEMENT_LENGTH``): ``step_one`` would cost the client
    half again of its CPU the day a comment took it over that."""
    names: dict[str, int] = {}

    def number(m: re.Match) -> str:
        return f"${names.setdefault(m.group(1), len(names) + 1)}"

    text = re.sub(r"%\((\w+)\)s", number, query)
    if "%" in text:
        raise ValueError("positional: a '%' that is not a %(name)s placeholder")
    return text, tuple(names)


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
    # no automatic server-side prepared statements: a generic plan of the batch statements (arrays
    # of ids) falls back to scanning the run's tasks, a custom plan uses the indexes. Only the
    # statements executed with prepare=True (step_one) are prepared (None would refuse even those)
    conn.prepare_threshold = 1 << 30
    return conn


@cache
def _schema() -> tuple[str, str]:
    """``sql/schema.sql`` and the sha256 of its text (the version a store records)."""
    text = read_sql("schema.sql")
    return text, hashlib.sha256(text.encode()).hexdigest()


def _schema_is_current(conn: psycopg.Connection) -> bool:
    """Whether the store already holds this version of the schema (``swarm_meta``)."""
    if conn.execute(Q["schema_table_exists"]).fetchone()[0] is not True:
        return False
    row = conn.execute(Q["schema_version"]).fetchone()
    return row is not None and row[0] == _schema()[1]


def _apply_schema(conn: psycopg.Connection, schema: str | None) -> None:
    """Create or upgrade the store's tables and functions, unless it already holds this version.
    Applying it takes a global advisory lock and replaces every function, which makes every other
    connection of the store compile its functions and plan their statements again: a worker that
    joins a run under way must not cost the running ones that (issue 19)."""
    if _schema_is_current(conn):
        return
    text, sha = _schema()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7432001)")
        if schema:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        if _schema_is_current(conn):  # another connection applied it while this one waited
            return
        conn.execute(text)
        conn.execute(Q["record_schema_version"], {"sha": sha})


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
        self._writer: int | None = None  # this pool's writer id of the run (see _ensure_writer)
        self._writer_pid = 0
        self._writer_events: int | None = None  # rows of this writer's chain after its last write, when known
        self._step_cursor: psycopg.RawCursor | None = None  # step_one's cursor (see _run_step)

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

    def _ensure_writer(self) -> int:
        """This pool's writer id of the run, handed out (in a transaction of its own) at its first
        write; a forked process gets its own."""
        if self._writer is None or self._writer_pid != os.getpid():
            w = self._do(lambda c: c.execute(Q["new_writer"], {"run_id": self.run_id}).fetchone()[0], "new_writer")
            if w is None:
                raise RunNotFound(f"no run {self.run_id!r} in {self.display_url}")
            self._writer, self._writer_pid, self._writer_events = w, os.getpid(), 0
        return self._writer

    def _append(self, c: psycopg.Connection, batch: EventBatch) -> tuple[list[int], int]:
        """Append events built here (lease expiries) to this writer's chain; (seqs, the writer's rows
        after them)."""
        if not batch.events:
            return [], -1
        cols = list(zip(*(e[1:9] for e in batch.events), strict=True))
        seqs = c.execute(Q["append_events"], {
            "run_id": self.run_id, "writer": self._writer, "at": batch.events[0][8], "task": list(cols[0]),
            "kind": list(cols[1]), "agent": list(cols[2]), "attempt": list(cols[3]), "value": list(cols[4]),
            "delta": list(cols[5]), "note": list(cols[6])}).fetchone()[0]
        if self._tx_first_seq is None:
            self._tx_first_seq = seqs[0]
        n = c.execute(Q["writer_events"], {"run_id": self.run_id, "writer": self._writer}).fetchone()[0]
        return seqs, n

    def _delete_run(self) -> None:
        def tx(c: psycopg.Connection) -> None:
            c.execute(Q["delete_run"], {"run_id": self.run_id})
            c.execute(Q["delete_run_row"], {"run_id": self.run_id})

        self._do(tx, "delete_run")

    def reclaim_space(self) -> None:
        self._retry(lambda: self._connection().execute(Q["vacuum"]), "vacuum")  # outside a transaction

    def _get_run(self):
        return self._one("get_run", {"run_id": self.run_id})

    def _chains(self):
        return self._all("chains", {"run_id": self.run_id})

    def _insert_run(self, policy, lease_seconds, now, rows):
        def tx(c: psycopg.Connection) -> tuple[list[int], Appended | None]:
            if c.execute(Q["insert_run"], {"run_id": self.run_id, "crash_policy": policy.value,
                                           "lease_seconds": lease_seconds, "now": now}).fetchone() is None:
                row = c.execute(Q["run_created_at"], {"run_id": self.run_id}).fetchone()
                if row is None or row[0] != now:  # not this process's own insert, retried after its COMMIT
                    raise self._exists()
                return [], None
            # writer 1 of the run, created with it (kept only if this transaction commits)
            self._writer_events = None
            self._writer, self._writer_pid = c.execute(Q["new_writer"], {"run_id": self.run_id}).fetchone()[0], os.getpid()
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
        run, writer = self.run_id, self._writer
        with c.cursor() as cur:
            with cur.copy(Q["copy_tasks"]) as copy:
                for i, (cap, payload, p, m) in zip(ids, rows, strict=True):
                    copy.write_row((i, run, cap, payload, p, m, now))
            head, n = c.execute(Q["lock_chain"], {"run_id": run, "writer": writer}).fetchone()
            hashes = chain_hashes(bytes(head), contents)
            seqs = sorted(r[0] for r in c.execute(Q["allocate_event_seqs"], {"n": len(rows)}).fetchall())
            self._tx_first_seq = seqs[0]
            with cur.copy(Q["copy_events"]) as copy:
                for k, (q, e, h) in enumerate(zip(seqs, batch.events, hashes, strict=True), n + 1):
                    copy.write_row((q, *e, h, writer, k))
        c.execute(Q["set_chain_head"], {"run_id": run, "writer": writer, "head": hashes[-1], "events": n + len(hashes),
                                        "seq": seqs[-1]})
        return ids, batch.appended(writer, n + len(hashes), seqs) if self._mirror is not None else None

    def _insert_tasks(self, rows, now):
        self._ensure_writer()
        self._writer_events = None
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

    def _step(self, rows, agent, caps, limit, policy, lease):
        # Expired leases are swept at most every min(1 s, lease/2) per connection, and always
        # before reporting that nothing is claimable.
        writer = self._ensure_writer()

        def step(c: psycopg.Connection, finishing: list[tuple], now: float) -> tuple:
            out = self._run_step(c, self._step_call(writer, finishing, agent, caps, limit, lease, now))
            if out[8] and self._tx_first_seq is None:
                self._tx_first_seq = out[8][0]
            return out

        now = time.time()
        if not (limit and now - self._last_sweep >= min(1.0, lease / 2)):
            out = self._step_alone(writer, self._step_call(writer, rows, agent, caps, limit, lease, now), agent,
                                   "claim" if limit else "finish")
            claims = self._claims(out, agent)
            if claims or not limit:
                finished = set(out[0])
                accepted = [r[0].task_id in finished for r in rows]
                if self._mirror is None or not out[8]:
                    return accepted, claims, None
                batch = self._batch()
                self._step_events(rows, accepted, claims, now, batch)
                return accepted, claims, batch.appended(writer, out[9], out[8])
            # nothing claimable: resolve expired leases, then claim again (below, one transaction)
            accepted, appended = [r[0].task_id in set(out[0]) for r in rows], None
            if self._mirror is not None and out[8]:
                batch = self._batch()
                self._step_events(rows, accepted, [], now, batch)
                appended = batch.appended(writer, out[9], out[8])
            self._publish(appended)
            rows = []
        else:
            accepted = None
        self._writer_events = None

        def tx(c: psycopg.Connection):
            now = time.time()
            batch = self._batch()  # the events in the order they are appended (for the mirror)
            seqs: list[int] = []
            swept = False
            if limit and now - self._last_sweep >= min(1.0, lease / 2):
                self._sweep(c, policy, now, batch)
                self._last_sweep, swept = now, True
                seqs += self._append(c, batch)[0]
            out = step(c, rows, now)
            finished, n = set(out[0]), out[9]
            seqs += out[8]
            claims = self._claims(out, agent)
            accepted = [r[0].task_id in finished for r in rows]
            self._step_events(rows, accepted, claims, now, batch)
            if limit and not claims and not swept:
                self._last_sweep = now
                more = self._batch()
                if self._sweep(c, policy, now, more):
                    seqs += self._append(c, more)[0]
                    batch.extend(more)
                    out = step(c, [], now)
                    seqs += out[8]
                    n = out[9]
                    claims = self._claims(out, agent)
                    self._step_events([], [], claims, now, batch)
            if self._mirror is None or not seqs:
                return accepted, claims, None
            return accepted, claims, batch.appended(writer, n, seqs)

        out = self._do(tx, "claim" if limit else "finish")
        return out if accepted is None else (accepted, *out[1:])

    def _step_call(self, writer: int, rows: list[tuple], agent, caps, limit: int, lease: float,
                   now: float) -> tuple[str, dict, bool]:
        """The statement of a step, its parameters and whether it is ``step_one`` (one plain
        statement, prepared, answering one row of scalars: see :meth:`_run_step`), which does a
        round of at most one task whose finish, if any, takes it out of the pool (done or failed);
        ``swarm_step`` otherwise (a requeued task may be claimed again in the same step, which
        needs the claim to run after the finish)."""
        base = {"run_id": self.run_id, "writer": writer, "at": now, "agent": agent, "capabilities": caps,
                "lease": lease}
        if self._one_task_round(rows, limit):
            claim, status, score, output, new_p, digest = rows[0] if rows else (None,) * 6
            return Q["step_one"], {
                **base, "claim": limit == 1, "f_id": claim and claim.task_id, "f_attempt": claim and claim.attempt,
                "f_agent": claim and claim.agent_id, "f_status": status, "f_score": score, "f_output": output,
                "f_pheromone": new_p, "f_old_pheromone": claim and claim.pheromone, "f_digest": digest}, True
        finish = orjson.dumps([(r[0].task_id, r[0].attempt, r[0].agent_id, r[1], r[2], r[3], r[4], r[0].pheromone,
                                r[5]) for r in rows]).decode() if rows else None
        return Q["step"], {**base, "finish": finish, "limit": limit}, False

    def _run_step(self, conn: psycopg.Connection, call: tuple[str, dict, bool]) -> tuple:
        """Execute a step; its answer in ``swarm_step``'s shape (finished ids, the claims' columns as
        lists, seqs, the writer's rows). ``step_one`` answers one row of scalars; it runs with
        positional parameters (:func:`positional`) on one raw cursor kept per connection, whose
        parameter dumpers stay resolved (a cursor per call looked up the dumpers of its 16
        parameters each time: a sixth of the client's CPU)."""
        query, params, one = call
        if not one:
            return conn.execute(query, params).fetchone()
        cur = self._step_cursor
        if cur is None or cur.connection is not conn:
            cur = self._step_cursor = psycopg.RawCursor(conn)
        text, names = positional(query)
        finished, *claim, seqs, events = cur.execute(text, [params[k] for k in names], prepare=True).fetchone()
        return ([] if finished is None else [finished], *([] if claim[0] is None else [v] for v in claim), seqs,
                events)

    @staticmethod
    def _one_task_round(rows: list[tuple], limit: int) -> bool:
        """Whether ``step_one`` can do this step (see :meth:`_step_call`)."""
        return limit <= 1 and len(rows) <= 1 and all(r[1] != TaskStatus.pending.value for r in rows)

    def _step_alone(self, writer: int, call: tuple[str, dict, bool], agent, what: str) -> tuple:
        """A step (:meth:`_step_call`) as one autocommit statement: one round trip, one commit.
        When the connection breaks before the answer, the writer's own chain tells whether it
        committed (only this pool appends to it): if it grew, its new rows are the step's result."""
        if self._writer_events is None:
            row = self._one("writer_events", {"run_id": self.run_id, "writer": writer})
            if row is None:
                raise RunNotFound(f"no ledger writer {writer} of run {self.run_id!r} in {self.display_url}")
            self._writer_events = row[0]
        known = self._writer_events
        sent: list[bool] = []

        def attempt() -> tuple:
            conn = self._connection()
            if sent:
                n = conn.execute(Q["writer_events"], {"run_id": self.run_id, "writer": writer}).fetchone()[0]
                if n > known:
                    return self._recovered(conn, writer, known, n, agent)
                sent.clear()
            sent.append(True)
            out = self._run_step(conn, call)
            sent.clear()
            return out

        out = self._retry(attempt, what)
        self._writer_events = out[9]
        return out

    def _recovered(self, conn: psycopg.Connection, writer: int, known: int, n: int, agent) -> tuple:
        """The result of a step that committed although its answer was lost, from the writer's rows."""
        rows = conn.execute(Q["writer_rows_after"], {"run_id": self.run_id, "writer": writer,
                                                     "events": known}).fetchall()
        finished = [r[1] for r in rows if r[2] in ("complete", "fail")]
        picked = [r for r in rows if r[2] == "claim"]
        tasks = {r[0]: r for r in conn.execute(Q["claimed_tasks"], {"ids": [r[1] for r in picked]}).fetchall()}
        cols = [(r[1], r[3], tasks[r[1]][1], tasks[r[1]][2], r[4], tasks[r[1]][3], tasks[r[1]][4]) for r in picked]
        claim_cols = [list(c) for c in zip(*cols, strict=True)] if cols else [[]] * 7
        return (finished, *claim_cols, [r[0] for r in rows], n)

    @staticmethod
    def _claims(out: tuple, agent: str | None) -> list[Claim]:
        if not out[1]:
            return []
        return [Claim(*r[:2], agent, *r[2:]) for r in zip(*out[1:8], strict=True)]

    def _expire(self, policy, now):
        writer = self._ensure_writer()
        self._writer_events = None

        def tx(c: psycopg.Connection):
            batch = self._batch()
            n = self._sweep(c, policy, now, batch)
            seqs, events = self._append(c, batch)
            return n, batch.appended(writer, events, seqs) if seqs and self._mirror is not None else None

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
