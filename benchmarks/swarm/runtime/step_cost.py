"""What one task costs in CPU, per process, at batch 1 on PostgreSQL: the naive loop, the least a
ledgered step can do, and this pool, measured at the same moment.

End-to-end runs on this shared 2-core machine move by 5-20 % from one run to the next, and the
pool's ratio to the naive loop follows what CPU costs against a commit on the day. This script
takes the machine's noise out of the comparison: the three loops run in one process, in turns of
50 tasks each, so a slow minute slows all three alike. Each has its own connection, and the CPU
time of its server backend is read from ``/proc/PID/schedstat`` (nanoseconds; the server must run
on this machine), its client CPU from ``time.process_time``.

- **naive**: the benchmark's naive loop (``bench_runtime.py``): claim (argmax P_t, ``SKIP
  LOCKED``) and complete as two autocommit statements, two commits, no ledger.
- **ledgered step**: one prepared statement that does what the pool's step must do at the least:
  finish the previous task, fenced by attempt and agent; claim the next one; insert the three
  ledger rows (complete, pheromone, claim) with a sha256 each; and lock and move the writer's
  chain row. One commit per task. Its hashes are not chained row to row and cover fewer fields
  than the ledger's encoding, and it takes its finish as parameters, not as JSON: it is a lower
  bound, not a store.
- **pool**: this pool's own step (``work_once`` at batch 1: the prepared ``step_one`` statement,
  one commit per task), no Redis mirror.

Every table lives in a schema of its own in the machine's PostgreSQL (``BENCHSCORE_PG_DSN``), which
is dropped at the end.

    .venv/bin/python benchmarks/swarm/runtime/step_cost.py --tasks 3000
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import psycopg

from benchscore.common.services import pg_dsn
from benchscore.swarm import Agent, TaskSpec, open_pool
from benchscore.swarm.agents import AgentStats, noop_handler, work_once

TURN = 50  # tasks per turn of each loop

#: the tasks as the pool's store keeps them (its CHECKs and indexes), a ledger and one chain row
TABLES = """
CREATE TABLE t (id bigserial PRIMARY KEY, run_id text NOT NULL, capability text NOT NULL, payload text NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
    pheromone float8 NOT NULL, score float8, output text, attempts int NOT NULL DEFAULT 0,
    max_attempts int NOT NULL CHECK (max_attempts >= 1), claimed_by text, lease_expires_at float8,
    created_at float8 NOT NULL, CHECK ((status = 'claimed') = (claimed_by IS NOT NULL)));
CREATE INDEX ON t (run_id, pheromone DESC, id) WHERE status = 'pending';
CREATE INDEX ON t (run_id, lease_expires_at) WHERE status = 'claimed';
CREATE TABLE e (seq bigserial PRIMARY KEY, run_id text NOT NULL, task_id bigint NOT NULL, kind text NOT NULL,
    agent text, attempt int NOT NULL, value float8, delta float8, note text, at float8 NOT NULL, hash bytea,
    writer_id int, writer_seq bigint);
CREATE INDEX ON e (run_id, seq);
CREATE TABLE ch (run_id text NOT NULL, writer_id int NOT NULL, head bytea NOT NULL, events bigint NOT NULL,
    last_seq bigint NOT NULL, PRIMARY KEY (run_id, writer_id));
INSERT INTO ch VALUES ('r', 1, decode(repeat('00', 32), 'hex'), 0, 0);
"""

NAIVE_CLAIM = ("UPDATE t SET status = 'claimed', claimed_by = 'a' WHERE id = (SELECT id FROM t WHERE run_id = 'r' "
               "AND status = 'pending' ORDER BY pheromone DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id")
NAIVE_DONE = "UPDATE t SET status = 'done', claimed_by = NULL, pheromone = pheromone + 0.5 WHERE id = %s"

LEDGERED_STEP = """
WITH f AS (
    UPDATE t SET status = 'done', score = 1, output = '', pheromone = t.pheromone + 0.5, claimed_by = NULL,
                 lease_expires_at = NULL
    WHERE t.id = %(id)s AND t.run_id = 'r' AND t.attempts = %(attempt)s AND t.claimed_by = 'a'
    RETURNING t.id, t.attempts, t.pheromone
), picked AS (
    SELECT id FROM t WHERE run_id = 'r' AND status = 'pending' AND capability = ANY (%(caps)s::text[])
    ORDER BY pheromone DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED
), c AS (
    UPDATE t SET status = 'claimed', claimed_by = 'a', attempts = t.attempts + 1,
                 lease_expires_at = extract(epoch FROM clock_timestamp()) + 60
    FROM picked WHERE t.id = picked.id
    RETURNING t.id, t.attempts, t.capability, t.payload, t.pheromone, t.max_attempts, t.lease_expires_at
), cur AS (
    SELECT head, events FROM ch WHERE run_id = 'r' AND writer_id = 1 FOR UPDATE
), rows AS (
    SELECT 1 AS o, id, 'complete' AS kind, attempts, 1::float8 AS value, NULL::float8 AS delta, 'sha' AS note FROM f
    UNION ALL SELECT 2, id, 'pheromone', attempts, pheromone, 0.5, 'complete' FROM f
    UNION ALL SELECT 3, id, 'claim', attempts, pheromone, NULL, NULL FROM c
), ev AS (
    INSERT INTO e (run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id, writer_seq)
    SELECT 'r', id, kind, 'a', attempts, value, delta, note, 0,
           sha256((SELECT head FROM cur) || convert_to(kind, 'UTF8') || int8send(id) || float8send(coalesce(value, 0))),
           1, (SELECT events FROM cur) + o
    FROM rows
    RETURNING seq, hash
), up AS (
    UPDATE ch SET head = coalesce((SELECT hash FROM ev LIMIT 1), head), events = events + (SELECT count(*) FROM ev),
                  last_seq = coalesce((SELECT max(seq) FROM ev), last_seq)
    WHERE run_id = 'r' AND writer_id = 1
    RETURNING events
)
SELECT c.id, c.attempts, (SELECT array_agg(seq) FROM ev), (SELECT events FROM up) FROM c
"""


def backend_cpu(pid: int) -> float:
    """Seconds on CPU of process ``pid`` (schedstat: nanoseconds)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


class Loop:
    """One loop and its figures: tasks, server CPU, client CPU, wall (seconds)."""

    def __init__(self, name: str, pid: int, step):
        self.name, self.pid, self.step = name, pid, step
        self.tasks, self.server, self.client, self.wall = 0, 0.0, 0.0, 0.0

    def turn(self) -> bool:
        """Up to TURN tasks; False once the loop has none left."""
        s0, c0, w0 = backend_cpu(self.pid), time.process_time(), time.perf_counter()
        n, more = 0, True
        while n < TURN and (more := self.step()):
            n += 1
        self.server += backend_cpu(self.pid) - s0
        self.client += time.process_time() - c0
        self.wall += time.perf_counter() - w0
        self.tasks += n
        return more

    def per_task(self) -> tuple[float, float, float]:
        return tuple(1e6 * x / self.tasks for x in (self.server, self.client, self.wall))


def table_loop(name: str, conn: psycopg.Connection, ledgered: bool) -> Loop:
    state = {"id": 0, "attempt": 0}

    def naive() -> bool:
        row = conn.execute(NAIVE_CLAIM).fetchone()
        if row is not None:
            conn.execute(NAIVE_DONE, row)
        return row is not None

    def step() -> bool:
        row = conn.execute(LEDGERED_STEP, {**state, "caps": ["noop"]}, prepare=True).fetchone()
        if row is not None:
            state["id"], state["attempt"] = row[0], row[1]
        return row is not None

    return Loop(name, conn.info.backend_pid, step if ledgered else naive)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=3000, help="no-op tasks through each loop (default 3000)")
    args = ap.parse_args()
    if args.tasks < 100:
        ap.error("--tasks must be at least 100")
    n, dsn, tag = args.tasks, pg_dsn(), uuid.uuid4().hex[:8]
    schemas = [f"bs_cost_{k}_{tag}" for k in ("naive", "step", "pool")]
    try:
        admin = psycopg.connect(dsn, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        sys.exit(f"step_cost: PostgreSQL at {dsn}: {' '.join(str(exc).split())}")
    conns: list[psycopg.Connection] = []
    try:
        loops = []
        for name, schema, ledgered in (("naive loop", schemas[0], False), ("ledgered step", schemas[1], True)):
            admin.execute(f"CREATE SCHEMA {schema}")
            conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}")
            conns.append(conn)
            conn.execute(TABLES)
            conn.execute("INSERT INTO t (run_id, capability, payload, pheromone, max_attempts, created_at) "
                         "SELECT 'r', 'noop', '{}', 0, 3, 0 FROM generate_series(1, %s)", (n,))
            conn.execute("ANALYZE t")
            loops.append(table_loop(name, conn, ledgered))
        with open_pool(f"{dsn}?schema={schemas[2]}", "cost") as pool:
            pool.create_run()
            pool.add_tasks(TaskSpec(capability="noop", payload={}) for _ in range(n))
            agent, held, stats = Agent("a", ["noop"], noop_handler), {}, AgentStats()
            loops.append(Loop("this pool, batch 1 (step_one)", pool._connection().info.backend_pid,
                              lambda: bool(work_once(pool, agent, batch=1, stats=stats, held=held, next_agent=agent))))
            live = list(loops)
            while live:
                live = [loop for loop in live if loop.turn()]
            assert all(loop.tasks == n for loop in loops), [(loop.name, loop.tasks) for loop in loops]
    finally:
        for conn in conns:
            conn.close()
        for schema in schemas:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.close()
    naive = loops[0].per_task()
    print(f"{n} no-op tasks per loop, batch 1, one process, turns of {TURN} tasks; µs per task:\n")
    print("| loop | server CPU | client CPU | CPU in all | wall | CPU in all / naive loop's |")
    print("| --- | --- | --- | --- | --- | --- |")
    for loop in loops:
        server, client, wall = loop.per_task()
        print(f"| {loop.name} | {server:.0f} | {client:.0f} | {server + client:.0f} | {wall:.0f} "
              f"| {(server + client) / (naive[0] + naive[1]):.2f}x |")


if __name__ == "__main__":
    main()
