"""An interleaved A/B of the pool's one-task step on PostgreSQL: ``step_one`` against a variant.

Two pools, each on a run of its own in a schema of its own, step one agent at batch 1 through the
same no-op tasks with the pool's own code (``work_once``, no Redis mirror), in turns of 50 tasks, so
that a slow minute of this shared machine slows both alike. Pool A runs ``step_one`` as the store
has it (``sql/queries.sql``); pool B runs the statement in ``VARIANT`` (the same parameters, the
same one-row answer), or ``step_one`` too when no file is given (an A/A run: how far apart two
identical loops land). The server's CPU is read per backend from ``/proc/PID/schedstat`` (the
server must run on this machine), the client's from ``time.process_time``.

A variant is only measured, not checked: one that writes a ledger the audit would refuse (a
constant instead of a hash, say) still runs, and says what that part costs.

    .venv/bin/python benchmarks/swarm/runtime/step_ab.py                    # A/A
    .venv/bin/python benchmarks/swarm/runtime/step_ab.py variant.sql --tasks 3000
    .venv/bin/python benchmarks/swarm/runtime/step_ab.py --cut no-ledger     # step_variants.py
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import psycopg
from step_cost import backend_cpu  # this folder's step_cost.py (a script's folder is on sys.path)
from step_variants import CUTS

from benchscore.common.services import pg_dsn
from benchscore.swarm import Agent, TaskSpec, open_pool
from benchscore.swarm.agents import AgentStats, noop_handler, work_once
from benchscore.swarm.stores.postgres import Q

TURN = 50  # tasks per turn of each pool


class Side:
    """One pool stepping through its tasks with ``query`` as its one-task statement."""

    def __init__(self, url: str, tasks: int, query: str):
        self.pool = open_pool(url, "ab")
        self.pool.create_run()
        self.pool.add_tasks(TaskSpec(capability="noop", payload={}) for _ in range(tasks))
        real = self.pool._step_call

        def call(*args):
            statement, params, one = real(*args)
            return (query if one else statement), params, one

        self.pool._step_call = call
        self.agent, self.held, self.stats = Agent("a", ["noop"], noop_handler), {}, AgentStats()
        self.pid = self.pool._connection().info.backend_pid
        self.tasks, self.server, self.client = 0, 0.0, 0.0

    def turn(self) -> bool:
        """Up to TURN tasks; False once none is left."""
        s0, c0, n = backend_cpu(self.pid), time.process_time(), 0
        while n < TURN and work_once(self.pool, self.agent, batch=1, stats=self.stats, held=self.held,
                                     next_agent=self.agent):
            n += 1
        self.server += backend_cpu(self.pid) - s0
        self.client += time.process_time() - c0
        self.tasks += n
        return n == TURN


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variant", nargs="?", type=Path, help="SQL of the variant (default: step_one itself)")
    ap.add_argument("--tasks", type=int, default=3000, help="no-op tasks through each pool (default 3000)")
    ap.add_argument("--cut", choices=sorted(CUTS), help="B runs step_one with this part of its ledger taken out "
                    "(measure only: step_variants.py)")
    args = ap.parse_args()
    if args.cut and args.variant:
        ap.error("give a variant or --cut, not both")
    if args.tasks < 100:
        ap.error("--tasks must be at least 100")
    try:
        if args.cut:
            variant, label = CUTS[args.cut](Q["step_one"]), f"step_one, --cut {args.cut}"
        else:
            variant = args.variant.read_text() if args.variant else Q["step_one"]
            label = str(args.variant or "step_one (A/A)")
    except OSError as exc:
        ap.error(f"{args.variant}: {exc.strerror}")
    dsn, tag = pg_dsn(), uuid.uuid4().hex[:8]
    schemas = [f"bs_step_ab_a_{tag}", f"bs_step_ab_b_{tag}"]
    try:
        admin = psycopg.connect(dsn, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        sys.exit(f"step_ab: PostgreSQL at {dsn}: {' '.join(str(exc).split())}")
    sides: list[Side] = []
    try:
        for schema, query in zip(schemas, (Q["step_one"], variant), strict=True):
            sides.append(Side(f"{dsn}?schema={schema}", args.tasks, query))
        try:
            live = list(sides)
            while live:
                live = [s for s in live if s.turn()]
        except psycopg.Error as exc:
            sys.exit(f"step_ab: the variant failed: {' '.join(str(exc).split())}")
    finally:
        for s in sides:
            s.pool.close()
        for schema in schemas:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.close()
    a, b = sides
    print(f"{args.tasks} no-op tasks per pool, batch 1, one process, turns of {TURN}; µs per task:\n")
    print("| pool | server CPU | client CPU |")
    print("| --- | --- | --- |")
    for name, s in (("A: step_one", a), (f"B: {label}", b)):
        print(f"| {name} | {1e6 * s.server / s.tasks:.0f} | {1e6 * s.client / s.tasks:.0f} |")
    print(f"\nB / A: server CPU {b.server / a.server:.3f}, server and client {(b.server + b.client) / (a.server + a.client):.3f}")


if __name__ == "__main__":
    main()
