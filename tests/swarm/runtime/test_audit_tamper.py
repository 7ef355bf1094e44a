"""Issue 9 item 2: what the audit catches when someone edits the store behind the pool's back
(on SQLite and PostgreSQL), and what only a head recorded elsewhere can catch."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from urllib.parse import urlsplit

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.swarm import TaskSpec, audit_pool, open_pool
from benchscore.swarm.ledger import GENESIS, event_digest
from benchscore.swarm.pool import sqlite_path
from benchscore.swarm.stores.postgres import split_schema


def sql(store_url: str, query: str, params: dict | None = None) -> list[tuple]:
    """Run raw SQL on the store (``:name`` parameters), as someone with write access would."""
    params = params or {}
    if urlsplit(store_url).scheme == "sqlite":
        with closing(sqlite3.connect(sqlite_path(store_url)[0], isolation_level=None)) as conn:
            return conn.execute(query, params).fetchall()
    import psycopg

    dsn, schema = split_schema(store_url)
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        cur = conn.execute(re.sub(r":(\w+)", r"%(\1)s", query), params)
        return cur.fetchall() if cur.description else []


@pytest.fixture
def finished(store_url):
    """A finished run: 6 tasks, one failed attempt, all done; returns (run_id, ids, head hex)."""
    run_id = "tamper"
    with open_pool(store_url, run_id) as pool:
        pool.create_run()
        ids = pool.add_tasks(TaskSpec(capability="a", payload={}, pheromone=0.1 * i) for i in range(6))
        first = pool.claim("x", ["a"])[0]
        pool.fail(first, "once")
        while claims := pool.claim("y", ["a"], limit=2):
            pool.complete_many([(c, 0.3 + 0.1 * (c.task_id % 5), f"out {c.task_id}") for c in claims])
        report = audit_pool(pool)
        assert report.verdict == "PASS" and report.chain_intact and report.tasks_table_consistent
    return run_id, ids, report.ledger_head


def audit(store_url, run_id, **kw):
    with open_pool(store_url, run_id) as pool:
        return audit_pool(pool, **kw)


def rows_of(store_url, run_id, task_id):
    return sql(store_url, "SELECT seq, kind FROM swarm_events WHERE run_id = :r AND task_id = :t ORDER BY seq",
               {"r": run_id, "t": task_id})


def test_edited_task_score_is_refuted_naming_the_task(store_url, finished):
    run_id, ids, _ = finished
    victim = ids[2]
    sql(store_url, "UPDATE swarm_tasks SET score = 0.99 WHERE id = :t", {"t": victim})
    with open_pool(store_url, run_id) as pool:
        assert pool.converge().accepted_task_id == victim  # the edit would win the convergence
    r = audit(store_url, run_id)
    assert r.verdict == "FAIL" and r.chain_intact and r.tasks_table_mismatches == [victim]
    [v] = r.violations
    last_seq = rows_of(store_url, run_id, victim)[-1][0]
    assert (v.task_id, v.seq) == (victim, last_seq) and "score 0.99 (table)" in v.reason


def test_edited_output_and_pheromone_are_refuted(store_url, finished):
    run_id, ids, _ = finished
    sql(store_url, "UPDATE swarm_tasks SET output = 'forged' WHERE id = :t", {"t": ids[1]})
    sql(store_url, "UPDATE swarm_tasks SET pheromone = 7.0 WHERE id = :t", {"t": ids[4]})
    r = audit(store_url, run_id)
    assert r.verdict == "FAIL" and r.tasks_table_mismatches == sorted([ids[1], ids[4]])
    reasons = {v.task_id: v.reason for v in r.violations}
    assert "output sha256" in reasons[ids[1]] and "P_t 7.0 (table)" in reasons[ids[4]]


def test_deleting_every_ledger_row_of_a_task_is_refuted(store_url, finished):
    run_id, ids, _ = finished
    victim = ids[3]
    seqs = [s for s, _ in rows_of(store_url, run_id, victim)]
    sql(store_url, "DELETE FROM swarm_events WHERE task_id = :t", {"t": victim})
    r = audit(store_url, run_id)
    assert r.verdict == "FAIL" and not r.chain_intact and r.tasks_created == 5
    by_task = {}
    for v in r.violations:
        by_task.setdefault(v.task_id, []).append(v)
    assert [v.seq for v in by_task[victim]] == [None]  # in the table, no history at all
    assert "no history" in by_task[victim][0].reason
    # the chain breaks at each row that followed a deleted one, named by its seq
    breaks = [v for v in r.violations if "hash chain broken" in v.reason]
    assert breaks and all(v.seq is not None and v.task_id not in (None, victim) for v in breaks)
    assert all(v.seq > min(seqs) for v in breaks)


def test_consistent_edit_of_a_completion_and_its_pheromone_row_is_refuted(store_url, finished):
    """The old blind spot: score and P_t rewritten consistently in the ledger (and in the table)
    pass every protocol rule; the hash chain still names the rewritten row."""
    run_id, ids, _ = finished
    victim = ids[5]
    rows = dict((kind, seq) for seq, kind in rows_of(store_url, run_id, victim) if kind in ("complete", "pheromone"))
    (score,) = sql(store_url, "SELECT score FROM swarm_tasks WHERE id = :t", {"t": victim})[0]
    (p0,) = sql(store_url, "SELECT value - delta FROM swarm_events WHERE seq = :s", {"s": rows["pheromone"]})[0]
    sql(store_url, "UPDATE swarm_events SET value = 0.99 WHERE seq = :s", {"s": rows["complete"]})
    sql(store_url, "UPDATE swarm_events SET value = :v, delta = 0.99 WHERE seq = :s", {"s": rows["pheromone"],
                                                                                        "v": p0 + 0.99})
    sql(store_url, "UPDATE swarm_tasks SET score = 0.99, pheromone = :v WHERE id = :t", {"t": victim, "v": p0 + 0.99})
    assert score != 0.99
    r = audit(store_url, run_id)
    assert r.verdict == "FAIL" and r.pheromone_consistent and r.tasks_table_consistent and not r.chain_intact
    assert [(v.task_id, v.seq) for v in r.violations] == [(victim, rows["complete"]), (victim, rows["pheromone"])]


def test_deleted_completion_pair_names_the_task_and_the_row(store_url, finished):
    run_id, ids, _ = finished
    victim = ids[0]
    pair = [seq for seq, kind in rows_of(store_url, run_id, victim) if kind in ("complete", "pheromone")][-2:]
    sql(store_url, "DELETE FROM swarm_events WHERE seq IN (:a, :b)", {"a": pair[0], "b": pair[1]})
    r = audit(store_url, run_id)
    assert r.verdict == "FAIL"
    mine = [v for v in r.violations if v.task_id == victim]
    assert any("not accounted for" in v.reason for v in mine)
    assert any("status 'done' (table) vs 'claimed' (ledger)" in v.reason for v in mine)
    assert all(v.seq is not None for v in mine)
    assert any("hash chain broken" in v.reason or "rows were deleted" in v.reason for v in r.violations)


def _rechain(store_url: str, run_id: str) -> None:
    """What the chains cannot catch: recompute every hash of every writer's chain and the recorded
    heads after an edit."""
    heads: dict[int, bytes] = {}
    rows = sql(store_url, "SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, writer_id "
                          "FROM swarm_events WHERE run_id = :r ORDER BY writer_id, writer_seq", {"r": run_id})
    for row in rows:
        heads[row[9]] = event_digest(heads.get(row[9], GENESIS), *row[1:9])
        sql(store_url, "UPDATE swarm_events SET hash = :h WHERE seq = :s", {"h": heads[row[9]], "s": row[0]})
    for writer, head in heads.items():
        sql(store_url, "UPDATE swarm_chains SET head = :h WHERE run_id = :r AND writer_id = :w",
            {"h": head, "r": run_id, "w": writer})


def test_rewrite_with_recomputed_chain_needs_the_recorded_head(store_url, finished):
    run_id, ids, head = finished
    victim = ids[1]
    (seq,) = [s for s, kind in rows_of(store_url, run_id, victim) if kind == "complete"]
    (pher,) = [s for s, kind in rows_of(store_url, run_id, victim) if kind == "pheromone" and s > seq]
    (p_before,) = sql(store_url, "SELECT value - delta FROM swarm_events WHERE seq = :s", {"s": pher})[0]
    sql(store_url, "UPDATE swarm_events SET value = 0.97 WHERE seq = :s", {"s": seq})
    sql(store_url, "UPDATE swarm_events SET value = :v, delta = 0.97 WHERE seq = :s", {"s": pher, "v": p_before + 0.97})
    sql(store_url, "UPDATE swarm_tasks SET score = 0.97, pheromone = :v WHERE id = :t", {"t": victim,
                                                                                         "v": p_before + 0.97})
    _rechain(store_url, run_id)
    r = audit(store_url, run_id)
    assert r.verdict == "PASS" and r.ledger_head != head  # the ledger alone cannot tell
    r = audit(store_url, run_id, expect_head=head)
    assert r.verdict == "FAIL" and r.expected_head_found_at is None
    assert r.violations[-1].task_id is None and "recorded earlier" in r.violations[-1].reason


def test_expect_head_accepts_an_earlier_head_of_a_longer_run(store_url, finished):
    run_id, _ids, head = finished
    (last_seq,) = sql(store_url, "SELECT max(seq) FROM swarm_events WHERE run_id = :r", {"r": run_id})[0]
    with open_pool(store_url, run_id) as pool:
        pool.add_tasks([TaskSpec(capability="a", payload={})])
        pool.complete(pool.claim("z", ["a"])[0], 0.5, "later")
        r = audit_pool(pool, expect_head=head)
    assert r.verdict == "PASS" and r.expected_head_found_at == last_seq and r.ledger_head != head


def test_cli_prints_every_violation_with_task_and_seq(store_url, finished):
    run_id, ids, head = finished
    sql(store_url, "UPDATE swarm_tasks SET score = 0.99 WHERE id IN (:a, :b)", {"a": ids[0], "b": ids[4]})
    r = CliRunner().invoke(cli, ["swarm", "audit", run_id, "--store", store_url, "--expect-head", head],
                           catch_exceptions=False)
    assert r.exit_code == 1
    lines = [line for line in r.output.splitlines() if line.startswith("violation: ")]
    assert len(lines) == 2
    for task_id, line in zip((ids[0], ids[4]), lines, strict=True):
        last_seq = rows_of(store_url, run_id, task_id)[-1][0]
        assert line.startswith(f"violation: task {task_id} seq {last_seq} ") and "score 0.99 (table)" in line
    assert "tasks_table_mismatch_count" in r.output and "violation_count" in r.output
    r = CliRunner().invoke(cli, ["swarm", "audit", run_id, "--store", store_url, "--expect-head", "xyz"])
    assert r.exit_code == 2 and "64 lowercase hex" in r.output


def test_run_report_carries_the_head_the_audit_recomputes(tmp_path, pinned_time):
    from .test_cli import invoke, write_inputs

    tasks, agents = write_inputs(tmp_path)
    store = f"sqlite:///{tmp_path}/run.db"
    assert invoke("run", tasks, agents, "--store", store, "--run-id", "h", "--processes", "1", "--blobs",
                  tmp_path / "b", "--output", tmp_path / "run.json").exit_code == 0
    run = orjson.loads((tmp_path / "run.json").read_bytes())
    assert invoke("audit", "h", "--store", store, "--expect-head", run["ledger_head"], "--output",
                  tmp_path / "audit.json").exit_code == 0
    audit_report = orjson.loads((tmp_path / "audit.json").read_bytes())
    assert audit_report["ledger_head"] == audit_report["ledger_head_stored"] == run["ledger_head"]
    assert audit_report["ledger_events_stored"] == audit_report["events"] == run["ledger_events"]


OLD_SCHEMA = [  # the tables as stores created before the hash chain had them
    "CREATE TABLE swarm_runs (run_id TEXT PRIMARY KEY, crash_policy TEXT NOT NULL, lease_seconds REAL NOT NULL, "
    "created_at REAL NOT NULL)",
    "CREATE TABLE swarm_events (seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL, task_id INTEGER NOT NULL, "
    "kind TEXT NOT NULL, agent TEXT, attempt INTEGER NOT NULL, value REAL, delta REAL, note TEXT, at REAL NOT NULL)",
    "CREATE TABLE swarm_budget_windows (budget_id TEXT NOT NULL, minute INTEGER NOT NULL, tokens INTEGER NOT NULL, "
    "PRIMARY KEY (budget_id, minute))",
]


def test_store_created_before_the_chain_is_upgraded_and_its_old_runs_say_so(store_url):
    for statement in OLD_SCHEMA:
        sql(store_url, statement.replace("INTEGER PRIMARY KEY,", "bigserial PRIMARY KEY,")
            if urlsplit(store_url).scheme != "sqlite" else statement)
    sql(store_url, "INSERT INTO swarm_runs VALUES ('old', 'requeue', 30, 0)")
    with open_pool(store_url, "new") as pool:  # adds the missing columns
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="a", payload={})])
        pool.complete(pool.claim("x", ["a"])[0], 0.5, "ok")
        assert audit_pool(pool).verdict == "PASS"
    (task_id,) = sql(store_url, "SELECT id FROM swarm_tasks WHERE run_id = 'new'")[0]
    sql(store_url, "INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at) "
                   "VALUES ('old', :t, 'create', NULL, 0, 0.0, NULL, 'a', 0)", {"t": task_id + 1000})
    r = audit(store_url, "old")
    assert r.verdict == "FAIL" and r.violations[0].reason == "ledger row without a chain hash"
