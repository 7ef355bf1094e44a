"""Where the server time of one PostgreSQL step goes: each statement inside ``swarm_step``.

End-to-end A/B runs on this shared 2-core machine move by 20 % from one run to the next, more than
most changes to ``swarm_step`` are worth; the shares of one run are steadier. This script:

1. starts a PostgreSQL of its own (``initdb`` into a temporary folder, a free port, removed at the
   end; the machine's server is not touched) with ``pg_stat_statements`` preloaded
   (``track = all``, so the statements run inside plpgsql functions are counted one by one) and
   ``track_functions = all``;
2. runs one agent at batch 1 through ``--tasks`` no-op tasks with the pool's own code
   (``run_agents``, one connection, no Redis mirror), through ``swarm_step``: at batch 1 the pool
   runs ``step_one`` (one plain statement, nothing inside to split; ``step_cost.py`` measures it),
   so this script turns that off to profile the plpgsql step that every larger batch runs;
3. prints per step: the wall time and the client's CPU, ``swarm_step``'s server time, each
   statement inside it, and the rest: what ``pg_stat_statements`` does not count of those
   statements (executor start-up and shut-down, the check of the cached plan), and plpgsql itself.

The private server runs with ``fsync = off`` (a test cluster, like the tests' own), so the commit's
flush is in none of these figures: they are CPU.

    .venv/bin/python benchmarks/swarm/runtime/profile_step.py --tasks 3000
    .venv/bin/python benchmarks/swarm/runtime/profile_step.py --sql variant.sql   # a variant of the functions
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tests.swarm.runtime.own_services import OwnPostgres, Unavailable  # noqa: E402

from benchscore.swarm import Agent, TaskSpec, open_pool  # noqa: E402
from benchscore.swarm.agents import noop_handler, run_agents  # noqa: E402

#: the statements of swarm_step and swarm_append by how their text starts (pg_stat_statements keeps
#: the text as written in the function, constants replaced by $n)
NAMES = [
    ("WITH v AS MATERIALIZED", "finish: update the finished tasks"),
    ("WITH picked AS", "claim: pick and update the next tasks"),
    ("SELECT head, events", "append: lock the writer's head"),
    ("SELECT array_agg(q", "append: draw the seqs"),
    ("INSERT INTO swarm_events", "append: insert the events"),
    ("UPDATE swarm_chains", "append: move the head"),
    ("SELECT events", "the writer's row count"),
]


def name_of(query: str) -> str:
    text = " ".join(query.split())
    for start, name in NAMES:
        if text.startswith(start):
            return name
    return text[:60]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=3000, help="no-op tasks, one step each (default 3000)")
    ap.add_argument("--sql", type=Path, action="append", default=[],
                    help="SQL run in the store's schema after its set-up, e.g. another swarm_step to profile "
                         "(repeatable)")
    args = ap.parse_args()
    if args.tasks < 100:
        ap.error("--tasks must be at least 100")
    for sql in args.sql:
        if not sql.is_file():
            ap.error(f"--sql {sql}: no such file")
    try:
        pg = OwnPostgres("-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all "
                         "-c track_functions=all")
    except Unavailable as exc:
        sys.exit(f"profile_step: {exc}")
    try:
        with psycopg.connect(pg.dsn(), autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            version = c.execute("SHOW server_version").fetchone()[0]
        schema = f"profile_{uuid.uuid4().hex[:8]}"
        url = f"{pg.dsn()}?schema={schema}"
        n = args.tasks
        with open_pool(url, "profile") as pool:
            pool.create_run()
            pool.add_tasks(TaskSpec(capability="noop", payload={}) for _ in range(n))
        with open_pool(url, "profile") as pool:
            pool._one_task_round = lambda rows, limit: False  # swarm_step at batch 1 too (see 2. above)
            with psycopg.connect(pg.dsn(), autocommit=True) as c:  # after the pool's set-up
                c.execute(f"SET search_path = {schema}, public")
                for sql in args.sql:
                    try:
                        c.execute(sql.read_text())
                    except psycopg.Error as exc:
                        sys.exit(f"profile_step: --sql {sql}: {' '.join(str(exc).split())}")
                c.execute("SELECT pg_stat_statements_reset(), pg_stat_reset()")
            t0, c0 = time.perf_counter(), time.process_time()
            run_agents(pool, [Agent("a", ["noop"], noop_handler)], batch=1)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        # the pool's connection is closed: its backend has reported its function counts on exit
        time.sleep(0.5)
        with psycopg.connect(pg.dsn(), autocommit=True) as c:
            rows = c.execute("SELECT query, calls, total_exec_time FROM pg_stat_statements WHERE calls >= %s "
                             "ORDER BY total_exec_time DESC", (n // 2,)).fetchall()
            funcs = c.execute("SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions "
                              "WHERE calls > 0 ORDER BY total_time DESC").fetchall()
    finally:
        pg.destroy()
    step = next((r for r in rows if " ".join(r[0].split()).startswith("SELECT * FROM swarm_step")), None)
    if step is None:
        sys.exit("profile_step: pg_stat_statements counted no call of swarm_step")
    steps = step[1]
    per_step = step[2] / steps * 1e3  # µs
    print(f"PostgreSQL {version} of its own (fsync off), {n} no-op tasks, one agent at batch 1, {steps} steps")
    print(f"wall {wall / steps * 1e3:.3f} ms per step; client CPU {cpu / steps * 1e3:.3f} ms per step\n")
    print("| inside swarm_step, per step | µs | share |")
    print("| --- | --- | --- |")
    print(f"| **swarm_step, the whole call** | **{per_step:.0f}** | 100 % |")
    inner = 0.0  # every statement run at least once per two steps but the call is one of swarm_step's
    for query, _calls, total in rows:
        if query == step[0]:
            continue
        us = total / steps * 1e3
        inner += us
        print(f"| {name_of(query)} | {us:.0f} | {us / per_step:.0%} |")
    rest = per_step - inner
    print(f"| the rest: executor start-up and shut-down, plan checks, plpgsql | {rest:.0f} | {rest / per_step:.0%} |")
    if funcs:
        print("\nfunctions (track_functions; self = not in the functions it calls, its statements included):")
        for name, calls, total, self_time in funcs:
            print(f"  {name}: {calls} calls, {total / calls * 1e3:.0f} µs each, self {self_time / calls * 1e3:.0f} µs")


if __name__ == "__main__":
    main()
