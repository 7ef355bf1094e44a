"""Issue 19: the ledger as one hash chain per writer (no run-wide head that every commit waits for).
Two writers interleaved keep one auditable ledger; every writer's chain and recorded head is
checked: an edited, deleted, moved or reordered row, a deleted tail and a deleted writer are
refuted on SQLite and PostgreSQL; PostgreSQL's SQL computes the same bytes as the Python side."""

from __future__ import annotations

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.swarm import TaskSpec, audit_pool, open_pool
from benchscore.swarm.ledger import GENESIS, WriterHead, event_content, event_contents, run_head
from benchscore.swarm.stores.postgres import Q, split_schema

from .test_audit_tamper import audit, sql


@pytest.fixture
def interleaved(store_url):
    """A run written by three writers: the creator (writer 1) and two pools on the same run taking
    turns (writers 2 and 3); returns the run id."""
    run_id = "chains"
    with open_pool(store_url, run_id) as creator:
        creator.create_run()
        creator.add_tasks(TaskSpec(capability="a", payload={}, pheromone=0.1 * i) for i in range(8))
        with open_pool(store_url, run_id) as one, open_pool(store_url, run_id) as two:
            turn = 0
            while True:
                pool, agent = (one, "x") if turn % 2 == 0 else (two, "y")
                claims = pool.claim(agent, ["a"])
                if not claims:
                    break
                if turn == 3:
                    pool.fail(claims[0], "once")
                else:
                    pool.complete(claims[0], 0.25 + 0.05 * turn, f"out {turn}")
                turn += 1
        report = audit_pool(creator)
        assert report.verdict == "PASS", report.violations
    return run_id


def writer_rows(store_url, run_id):
    return sql(store_url, "SELECT writer_id, writer_seq, seq FROM swarm_events WHERE run_id = :r "
                          "ORDER BY writer_id, writer_seq", {"r": run_id})


def test_two_writers_interleaved_keep_one_ledger_with_a_chain_each(store_url, interleaved):
    rows = writer_rows(store_url, interleaved)
    by_writer: dict[int, list[tuple]] = {}
    for w, k, seq in rows:
        by_writer.setdefault(w, []).append((k, seq))
    assert sorted(by_writer) == [1, 2, 3]
    for chain in by_writer.values():
        assert [k for k, _ in chain] == list(range(1, len(chain) + 1))  # writer_seq 1, 2, 3, ...
        assert [q for _, q in chain] == sorted(q for _, q in chain)  # seq rises along the chain
    # the two workers' chains interleave in seq order: neither waited for the other's head
    order = [w for w, _k, _q in sorted(rows, key=lambda r: r[2]) if w != 1]
    assert order[:4].count(2) and order[:4].count(3)
    with open_pool(store_url, interleaved) as pool:
        head = pool.ledger_head()
        r = audit_pool(pool)
    assert head.writer_count == 3 and [w.writer_id for w in head.writers] == [1, 2, 3]
    assert [w.events for w in head.writers] == [len(by_writer[w]) for w in (1, 2, 3)]
    assert head.events == len(rows) == r.events and r.ledger_writers == 3
    # the run's head is the hash over the writers' recorded heads, and the audit recomputes it
    assert head.hash == run_head(head.writers) and r.ledger_head == r.ledger_head_stored == head.hash.hex()


def _last_row_of(store_url, run_id, writer):
    return sql(store_url, "SELECT seq, task_id FROM swarm_events WHERE run_id = :r AND writer_id = :w "
                          "ORDER BY writer_seq DESC LIMIT 1", {"r": run_id, "w": writer})[0]


def test_deleted_tail_of_one_writer_is_caught_by_its_recorded_head(store_url, interleaved):
    """The last row of a chain has no successor whose hash would break: the head recorded for its
    writer catches it."""
    seq, task = _last_row_of(store_url, interleaved, 2)
    sql(store_url, "DELETE FROM swarm_events WHERE seq = :s", {"s": seq})
    r = audit(store_url, interleaved)
    assert r.verdict == "FAIL" and not r.chain_intact
    heads = [v for v in r.violations if v.reason.startswith("writer 2 records")]
    assert len(heads) == 1 and "rows were deleted" in heads[0].reason
    assert not [v for v in r.violations if "hash chain broken" in v.reason]  # only the head can tell


def test_row_moved_to_another_writers_chain_breaks_both(store_url, interleaved):
    seq, _task = _last_row_of(store_url, interleaved, 3)
    (n2,) = sql(store_url, "SELECT max(writer_seq) FROM swarm_events WHERE run_id = :r AND writer_id = 2",
                {"r": interleaved})[0]
    sql(store_url, "UPDATE swarm_events SET writer_id = 2, writer_seq = :k WHERE seq = :s", {"k": n2 + 1, "s": seq})
    r = audit(store_url, interleaved)
    assert r.verdict == "FAIL" and not r.chain_intact
    reasons = [v.reason for v in r.violations]
    assert any("hash chain broken" in x for x in reasons)  # it does not chain onto writer 2's head
    assert any(x.startswith("writer 3 records") for x in reasons)  # writer 3's chain lost its tail
    assert any(x.startswith("writer 2 records") for x in reasons)  # writer 2's head did not grow


def test_rows_reordered_within_a_writer_are_refuted(store_url, interleaved):
    rows = sql(store_url, "SELECT seq, writer_seq FROM swarm_events WHERE run_id = :r AND writer_id = 2 "
                          "ORDER BY writer_seq", {"r": interleaved})
    (a, ka), (b, kb) = rows[1], rows[2]
    sql(store_url, "UPDATE swarm_events SET writer_seq = -1 WHERE seq = :s", {"s": a})
    sql(store_url, "UPDATE swarm_events SET writer_seq = :k WHERE seq = :s", {"k": ka, "s": b})
    sql(store_url, "UPDATE swarm_events SET writer_seq = :k WHERE seq = :s", {"k": kb, "s": a})
    r = audit(store_url, interleaved)
    assert r.verdict == "FAIL" and not r.chain_intact
    assert {v.seq for v in r.violations if "hash chain broken" in v.reason} >= {b}


def test_renumbered_seq_along_a_chain_is_refuted(store_url, interleaved):
    """Swapping the seqs of two rows of one writer (contents and chain untouched) reorders the
    ledger's replay: seq no longer rises along the chain."""
    rows = sql(store_url, "SELECT seq FROM swarm_events WHERE run_id = :r AND writer_id = 3 ORDER BY writer_seq",
               {"r": interleaved})
    a, b = rows[0][0], rows[1][0]
    sql(store_url, "UPDATE swarm_events SET seq = -5 WHERE seq = :s", {"s": a})
    sql(store_url, "UPDATE swarm_events SET seq = :a WHERE seq = :b", {"a": a, "b": b})
    sql(store_url, "UPDATE swarm_events SET seq = :b WHERE seq = -5", {"b": b})
    r = audit(store_url, interleaved)
    assert r.verdict == "FAIL"
    assert any("seq does not rise" in v.reason for v in r.violations)


def test_deleted_writer_is_caught_by_the_writer_count(store_url, interleaved):
    """A writer's rows and its recorded head deleted together leave no broken hash: the run's
    writer count (and the tasks' histories) still tell."""
    sql(store_url, "DELETE FROM swarm_events WHERE run_id = :r AND writer_id = 3", {"r": interleaved})
    sql(store_url, "DELETE FROM swarm_chains WHERE run_id = :r AND writer_id = 3", {"r": interleaved})
    r = audit(store_url, interleaved)
    assert r.verdict == "FAIL"
    assert any("handed out 3 writers" in v.reason and "[1, 2]" in v.reason for v in r.violations)


def test_expect_head_of_a_quiet_moment_is_found_after_more_writers_wrote(store_url, interleaved):
    with open_pool(store_url, interleaved) as pool:
        head = audit_pool(pool).ledger_head
        last = pool.ledger_head().seq
    with open_pool(store_url, interleaved) as later:  # a fourth writer
        later.add_tasks([TaskSpec(capability="a", payload={})])
        later.complete(later.claim("z", ["a"])[0], 0.5, "later")
        r = audit_pool(later, expect_head=head)
    assert r.verdict == "PASS" and r.expected_head_found_at == last and r.ledger_head != head
    assert r.ledger_writers == 4


def test_run_head_covers_each_writer_and_ignores_writers_without_rows():
    a = WriterHead(1, bytes(range(32)), 3, 10)
    b = WriterHead(2, bytes(32), 0, 0)
    assert run_head([]) == GENESIS and run_head([b]) == GENESIS
    assert run_head([a, b]) == run_head([a]) != run_head([WriterHead(1, bytes(range(32)), 4, 10)])
    assert run_head([a, WriterHead(2, bytes(range(32)), 1, 11)]) != run_head([a, WriterHead(3, bytes(range(32)), 1, 11)])


@pytest.mark.pg
@pytest.mark.parametrize("values", [
    ("r", 1, "claim", "ag", 1, 0.5, None, None),
    ("run-ü", 2**40, "pheromone", None, 7, -1.25, 1e-300, "complete"),
    ("", 0, "complete", "名前", 0, 0.0, None, "e3b0c442" * 8),
    ("r", 5, "fail", "x", 3, None, -0.0, "pending"),
])
def test_postgres_hashes_the_same_bytes_as_python(pg_url, values):
    dsn, schema = split_schema(pg_url)
    with open_pool(pg_url, "schema-only"):
        pass  # applies the schema (and its functions)
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        got = conn.execute("SELECT swarm_content(%s, %s, %s, %s, %s, %s, %s, %s)", values).fetchone()[0]
    assert bytes(got) == event_content(*values)


@pytest.mark.pg
def test_postgres_inlines_the_row_encoding_so_hashing_calls_no_sql_function(pg_url):
    """swarm_content and swarm_text must be inlinable (declared no less volatile than convert_to,
    which is STABLE): declared IMMUTABLE, PostgreSQL kept them as calls and each ledger row's hash
    ran seven SQL-function calls, a fifth of swarm_step's server time (issue 19)."""
    dsn, schema = split_schema(pg_url)
    with open_pool(pg_url, "schema-only"):
        pass
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN (VERBOSE) SELECT sha256(swarm_content(v.r, v.t, v.k, v.a, v.n, v.x, v.d, v.o)) FROM (VALUES "
            "('r', 1::bigint, 'claim', 'a', 1, 0.5::float8, NULL::float8, NULL::text)) AS v (r, t, k, a, n, x, d, o)"))
    assert "convert_to" in plan  # the encoding's body, inlined
    assert "swarm_content" not in plan and "swarm_text" not in plan and "swarm_float" not in plan, plan


def _function_versions(conn) -> dict[str, int]:
    """name -> xmin of the store's swarm_* functions (a new xmin: the function was replaced)."""
    return {name: int(xmin) for name, xmin in conn.execute(
        "SELECT proname, xmin::text FROM pg_proc WHERE pronamespace = current_schema()::regnamespace "
        "AND proname LIKE 'swarm%'")}


@pytest.mark.pg
def test_a_store_at_this_schema_version_is_not_altered_by_a_new_connection(pg_url):
    """Applying the schema replaces every function, and every other connection then compiles its
    functions and plans their statements again: a worker joining a run under way must not do that
    to the running ones (issue 19). A store that records this version (swarm_meta) is left alone."""
    dsn, schema = split_schema(pg_url)
    with open_pool(pg_url, "v") as running:
        running.create_run()
        running.add_tasks(TaskSpec(capability="a", payload={}) for _ in range(2))
        with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
            before = _function_versions(conn)
            assert {"swarm_step", "swarm_append", "swarm_new_writer"} <= set(before)
            with open_pool(pg_url, "v") as joining:  # connects while the other pool is open
                joining.complete(joining.claim("y", ["a"])[0], 0.5, "ok")
            assert _function_versions(conn) == before
        running.complete(running.claim("x", ["a"])[0], 0.5, "ok")
        assert audit_pool(running).verdict == "PASS"


@pytest.mark.pg
def test_a_store_at_another_schema_version_is_upgraded_at_connect(pg_url):
    """A store written by another version (its swarm_meta says so, and a function is missing) gets
    this schema applied and records this version."""
    from benchscore.swarm.stores.postgres import _schema

    dsn, schema = split_schema(pg_url)
    with open_pool(pg_url, "u") as pool:
        pool.create_run()
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        conn.execute("UPDATE swarm_meta SET value = 'an older version' WHERE key = 'schema_sha256'")
        conn.execute("DROP FUNCTION swarm_step")
        with open_pool(pg_url, "u") as pool:
            pool.add_tasks([TaskSpec(capability="a", payload={})])
            pool.complete(pool.claim("x", ["a"])[0], 0.5, "ok")
            assert audit_pool(pool).verdict == "PASS"
        assert "swarm_step" in _function_versions(conn)
        assert conn.execute("SELECT value FROM swarm_meta WHERE key = 'schema_sha256'").fetchone()[0] == _schema()[1]


@pytest.mark.pg
@pytest.mark.parametrize("batch", [1, 2], ids=["step_one", "swarm_step"])
def test_a_step_whose_answer_was_lost_is_recovered_from_the_writers_chain(pg_url, batch):
    """The connection breaks after the step committed but before its answer arrived: the retry
    finds the writer's chain grown and returns what the step did (no second claim, no lost one).
    Batch 1 runs the one-task statement (step_one), batch 2 swarm_step."""
    with open_pool(pg_url, "lost-answer") as pool:
        pool.create_run()
        pool.add_tasks(TaskSpec(capability="a", payload={"i": i}) for i in range(3 * batch))
        claims = pool.claim("x", ["a"], limit=batch)
        broken, statement = [], Q["step_one"] if batch == 1 else Q["step"]
        run_step = pool._run_step

        def breaks(conn, call):
            out = run_step(conn, call)  # the step ran and committed (autocommit) ...
            if call[0] == statement and not broken:
                broken.append(True)
                conn.close()  # ... and the answer is lost with the connection
                raise psycopg.OperationalError("connection lost")
            return out

        pool._run_step = breaks
        accepted, _statuses, claims = pool.finish_and_claim([(c, 0.5, "ok") for c in claims], [], "x", ["a"],
                                                            limit=batch)
        assert broken and accepted == [True] * batch and len(claims) == batch
        assert pool.service_log.retries.get("postgresql", 0) >= 1
        while claims:
            accepted, _s, claims = pool.finish_and_claim([(c, 0.5, "ok") for c in claims], [], "x", ["a"],
                                                         limit=batch)
        r = audit_pool(pool)
        assert r.verdict == "PASS" and r.duplicate_claim_count == 0 and r.tasks_done == 3 * batch


_text = st.one_of(st.none(), st.text(max_size=80))
_float = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))


@given(st.lists(st.tuples(st.text(max_size=20), st.integers(-2**63, 2**63 - 1), st.text(max_size=12), _text,
                          st.integers(-2**63, 2**63 - 1), _float, _float, _text), max_size=30))
def test_contents_a_column_at_a_time_equal_each_rows_content(rows):
    assert event_contents(rows) == [event_content(*r) for r in rows]
    assert event_contents([(0, *r, 1.0) for r in rows], 1) == [event_content(*r) for r in rows]
