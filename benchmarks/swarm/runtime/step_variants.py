"""Measure-only cuts of the pool's one-task step (``step_one`` in ``sql/queries.sql``), for
``step_ab.py --cut NAME`` and ``bench_runtime.py --bound``: each takes a part of the ledger out, so
that a benchmark can say what that part costs (docs/performance.md, issue 19, ninth look).

Each is made from the statement as the store has it, so it follows later changes; a cut whose
anchor text is gone stops with a message instead of measuring something else. A run stepped by any
of them has a ledger the audit refuses: they are for measuring only.
"""

from __future__ import annotations

#: answer of a cut that writes no ledger row: step_one's shape, no seqs, the writer's rows unchanged
_NO_ROWS_ANSWER = """
SELECT (SELECT id FROM f), c.id, c.attempts, c.capability, c.payload, c.pheromone, c.max_attempts,
       c.lease_expires_at, {seqs},
       (SELECT events FROM swarm_chains WHERE run_id = %(run_id)s::text AND writer_id = %(writer)s::int)
FROM (VALUES (1)) AS one (x) LEFT JOIN c ON true
"""


def _once(text: str, part: str, cut: str) -> None:
    if text.count(part) != 1:
        raise SystemExit(f"step variant {cut!r}: step_one no longer holds {part.strip()[:60]!r} once; "
                         "update benchmarks/swarm/runtime/step_variants.py")


def no_ledger(step_one: str) -> str:
    """Everything after the claim cut off: no ledger rows, no hashes, the chain row neither read nor
    moved."""
    _once(step_one, "), e AS (", "no-ledger")
    return step_one.split("), e AS (")[0] + ")" + _NO_ROWS_ANSWER.format(seqs="ARRAY[]::bigint[]")


def insert_only(step_one: str) -> str:
    """The three ledger rows inserted unhashed (hash and writer_seq NULL); the chain row neither
    read nor moved."""
    _once(step_one, "), r AS (", "insert-only")
    return step_one.split("), r AS (")[0] + """), ins AS (
    INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id,
                              writer_seq)
    SELECT %(run_id)s::text, e.task_id, e.kind, e.agent, e.attempt, e.value, e.delta, e.note, %(at)s::float8,
           NULL, %(writer)s::int, NULL
    FROM e ORDER BY e.o
    RETURNING seq
)""" + _NO_ROWS_ANSWER.format(seqs="ARRAY(SELECT seq FROM ins ORDER BY seq)")


def no_chain_update(step_one: str) -> str:
    """The rows hashed and inserted and the chain row read and locked as before, but never moved."""
    start, answer = "), up AS (", "SELECT (SELECT id FROM f), c.id"
    events = "coalesce((SELECT events FROM up), (SELECT n FROM k),"
    for part in (start, answer, events):
        _once(step_one, part, "no-chain-update")
    head, rest = step_one.split(start)
    return head + ")\n" + answer + rest.split(answer)[1].replace(events, "coalesce((SELECT n FROM k),")


def one_row(step_one: str) -> str:
    """Only the claim's ledger row: the complete (or fail) row and the pheromone row left out."""
    complete = "    FROM f\n    UNION ALL\n    SELECT 2, f.id, 'pheromone'"
    pheromone = "'complete' ELSE 'fail' END\n    FROM f\n    UNION ALL"
    for part in (complete, pheromone):
        _once(step_one, part, "one-row")
    return (step_one.replace(complete, complete.replace("FROM f\n", "FROM f WHERE false\n", 1))
            .replace(pheromone, pheromone.replace("FROM f\n", "FROM f WHERE false\n")))


CUTS = {"no-ledger": no_ledger, "insert-only": insert_only, "no-chain-update": no_chain_update, "one-row": one_row}
