-- Named queries of the PostgreSQL store (psycopg named parameters).

-- name: schema_table_exists
-- whether the store has swarm_meta (stores created before it don't)
SELECT to_regclass('swarm_meta') IS NOT NULL;

-- name: schema_version
SELECT value FROM swarm_meta WHERE key = 'schema_sha256';

-- name: record_schema_version
INSERT INTO swarm_meta (key, value) VALUES ('schema_sha256', %(sha)s)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;

-- name: insert_run
-- no row back when the run is already there (another process's, or this one's own insert whose
-- COMMIT went through before the connection broke: run_created_at tells them apart)
INSERT INTO swarm_runs (run_id, crash_policy, lease_seconds, created_at)
VALUES (%(run_id)s, %(crash_policy)s, %(lease_seconds)s, %(now)s)
ON CONFLICT (run_id) DO NOTHING
RETURNING run_id;

-- name: run_created_at
SELECT created_at FROM swarm_runs WHERE run_id = %(run_id)s;

-- name: event_committed
-- did the transaction that appended this ledger row commit? (seqs come from a sequence: never reused)
SELECT 1 FROM swarm_events WHERE seq = %(seq)s AND run_id = %(run_id)s;

-- name: get_run
SELECT crash_policy, lease_seconds, ledger_writers FROM swarm_runs WHERE run_id = %(run_id)s;

-- name: new_writer
-- a writer id of the run and its chain (NULL when there is no such run)
SELECT swarm_new_writer(%(run_id)s);

-- name: chains
SELECT writer_id, head, events, last_seq FROM swarm_chains WHERE run_id = %(run_id)s ORDER BY writer_id;

-- name: lock_chain
SELECT head, events FROM swarm_chains WHERE run_id = %(run_id)s AND writer_id = %(writer)s FOR UPDATE;

-- name: set_chain_head
UPDATE swarm_chains SET head = %(head)s, events = %(events)s, last_seq = %(seq)s
WHERE run_id = %(run_id)s AND writer_id = %(writer)s;

-- name: writer_events
SELECT events FROM swarm_chains WHERE run_id = %(run_id)s AND writer_id = %(writer)s;

-- name: step
-- finish claims, claim the next ones and append the events of both to the writer's chain: one
-- round trip (swarm_step in schema.sql)
SELECT * FROM swarm_step(%(run_id)s, %(writer)s, %(at)s, %(finish)s::jsonb, %(agent)s, %(capabilities)s::text[],
                         %(limit)s, %(lease)s);

-- name: step_one
-- swarm_step for the common round of one task (at most one finish, done or failed, and a claim of
-- at most one task) as one plain statement, prepared once per connection: no plpgsql, no JSON.
-- Claiming does not wait for the finish (a statement's parts share one snapshot), which changes
-- nothing here: the finished task leaves the pool and its P_t change touches no other task. The
-- ledger rows are built in the order swarm_step appends them (complete or fail, pheromone, claim)
-- and inserted in that order, so their seqs, drawn after the row locks of their tasks, follow it;
-- the hashes chain onto the writer's head exactly as swarm_append's (swarm_content).
WITH f AS (
    UPDATE swarm_tasks t
    SET status = %(f_status)s::text,
        score = CASE WHEN %(f_status)s::text = 'done' THEN %(f_score)s::float8 ELSE t.score END,
        output = %(f_output)s::text, pheromone = %(f_pheromone)s::float8, claimed_by = NULL, lease_expires_at = NULL
    WHERE t.id = %(f_id)s::bigint AND t.run_id = %(run_id)s::text AND t.attempts = %(f_attempt)s::int
      AND t.claimed_by = %(f_agent)s::text
    RETURNING t.id
), picked AS (
    SELECT t.id FROM swarm_tasks t
    WHERE %(claim)s::boolean AND t.run_id = %(run_id)s::text AND t.status = 'pending'
      AND t.capability = ANY (%(capabilities)s::text[])
    ORDER BY t.pheromone DESC, t.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
), c AS (
    UPDATE swarm_tasks t
    SET status = 'claimed', claimed_by = %(agent)s::text, attempts = t.attempts + 1,
        lease_expires_at = extract(epoch FROM clock_timestamp()) + %(lease)s::float8
    FROM picked
    WHERE t.id = picked.id
    RETURNING t.id, t.attempts, t.capability, t.payload, t.pheromone, t.max_attempts, t.lease_expires_at
), e AS (
    SELECT 1 AS o, f.id AS task_id,
           CASE WHEN %(f_status)s::text = 'done' THEN 'complete' ELSE 'fail' END AS kind,
           %(f_agent)s::text AS agent, %(f_attempt)s::int AS attempt,
           CASE WHEN %(f_status)s::text = 'done' THEN %(f_score)s::float8 END AS value, NULL::float8 AS delta,
           CASE WHEN %(f_status)s::text = 'done' THEN %(f_digest)s::text ELSE %(f_status)s::text END AS note
    FROM f
    UNION ALL
    SELECT 2, f.id, 'pheromone', %(f_agent)s::text, %(f_attempt)s::int, %(f_pheromone)s::float8,
           %(f_pheromone)s::float8 - %(f_old_pheromone)s::float8,
           CASE WHEN %(f_status)s::text = 'done' THEN 'complete' ELSE 'fail' END
    FROM f
    UNION ALL
    SELECT 3, c.id, 'claim', %(agent)s::text, c.attempts, c.pheromone, NULL, NULL FROM c
), r AS (
    SELECT e.*, swarm_content(%(run_id)s::text, e.task_id, e.kind, e.agent, e.attempt, e.value, e.delta, e.note)
           AS content
    FROM e
), cur AS (
    SELECT head, events FROM swarm_chains
    WHERE run_id = %(run_id)s::text AND writer_id = %(writer)s::int
    FOR UPDATE
), k AS (
    SELECT cur.events AS n, cur.head AS h0, a.h1, b.h2, d.h3
    FROM cur
    CROSS JOIN LATERAL (SELECT sha256(cur.head || (SELECT content FROM r WHERE o = 1)) AS h1) a
    CROSS JOIN LATERAL (SELECT sha256(a.h1 || (SELECT content FROM r WHERE o = 2)) AS h2) b
    CROSS JOIN LATERAL (SELECT sha256(coalesce(b.h2, cur.head) || (SELECT content FROM r WHERE o = 3)) AS h3) d
), ins AS (
    INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id,
                              writer_seq)
    SELECT %(run_id)s::text, r.task_id, r.kind, r.agent, r.attempt, r.value, r.delta, r.note, %(at)s::float8,
           CASE r.o WHEN 1 THEN k.h1 WHEN 2 THEN k.h2 ELSE k.h3 END, %(writer)s::int,
           k.n + CASE WHEN r.o = 3 AND k.h1 IS NULL THEN 1 ELSE r.o END
    FROM r CROSS JOIN k
    ORDER BY r.o
    RETURNING seq
), up AS (
    UPDATE swarm_chains s
    SET head = coalesce(k.h3, k.h2), events = k.n + (SELECT count(*) FROM ins), last_seq = (SELECT max(seq) FROM ins)
    FROM k
    WHERE s.run_id = %(run_id)s::text AND s.writer_id = %(writer)s::int AND EXISTS (SELECT 1 FROM ins)
    RETURNING s.events
)
-- one row: the id finished (or NULL), the claim's columns (or NULLs), the seqs, the writer's rows
SELECT (SELECT id FROM f), c.id, c.attempts, c.capability, c.payload, c.pheromone, c.max_attempts,
       c.lease_expires_at, ARRAY(SELECT seq FROM ins ORDER BY seq),
       -- no chain row: the whole statement fails, as swarm_append does
       coalesce((SELECT events FROM up), (SELECT n FROM k), swarm_no_writer(%(run_id)s::text, %(writer)s::int))
FROM (VALUES (1)) AS one (x) LEFT JOIN c ON true;

-- name: append_events
-- events built by the caller (lease expiries) appended to the writer's chain; returns their seqs
SELECT swarm_append(%(run_id)s, %(writer)s, %(at)s, %(task)s::bigint[], %(kind)s::text[], %(agent)s::text[],
                    %(attempt)s::int[], %(value)s::float8[], %(delta)s::float8[], %(note)s::text[]);

-- name: allocate_event_seqs
SELECT nextval(pg_get_serial_sequence('swarm_events', 'seq')) FROM generate_series(1, %(n)s);

-- name: list_runs
SELECT run_id FROM swarm_runs ORDER BY created_at, run_id;

-- name: allocate_task_ids
SELECT nextval(pg_get_serial_sequence('swarm_tasks', 'id')) FROM generate_series(1, %(n)s);

-- name: analyze_tasks
ANALYZE swarm_tasks;

-- name: expired_leases
SELECT id, attempts, max_attempts, pheromone, claimed_by, capability
FROM swarm_tasks
WHERE run_id = %(run_id)s AND status = 'claimed' AND lease_expires_at < extract(epoch FROM clock_timestamp())
FOR UPDATE SKIP LOCKED;

-- name: resolve_leases
UPDATE swarm_tasks t
SET status = v.status, pheromone = v.pheromone, claimed_by = NULL, lease_expires_at = NULL
FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(statuses)s::text[], %(pheromones)s::float8[])
     AS v (id, attempt, status, pheromone)
WHERE t.id = v.id AND t.status = 'claimed' AND t.attempts = v.attempt;

-- name: counts
SELECT status, count(*) FROM swarm_tasks WHERE run_id = %(run_id)s GROUP BY status;

-- name: has_open
SELECT EXISTS (
    SELECT 1 FROM swarm_tasks WHERE run_id = %(run_id)s AND status = 'pending'
      AND capability = ANY (%(capabilities)s::text[])
) OR EXISTS (
    SELECT 1 FROM swarm_tasks WHERE run_id = %(run_id)s AND status = 'claimed'
      AND capability = ANY (%(capabilities)s::text[])
);

-- name: tasks
SELECT id, capability, payload, status, pheromone, score, output, attempts, max_attempts, claimed_by
FROM swarm_tasks WHERE run_id = %(run_id)s ORDER BY id;

-- name: task_states
SELECT id, status, pheromone, score, attempts, claimed_by, capability, output
FROM swarm_tasks WHERE run_id = %(run_id)s ORDER BY id;

-- name: capabilities
SELECT DISTINCT capability FROM swarm_tasks WHERE run_id = %(run_id)s ORDER BY capability;

-- name: pheromones
SELECT id, capability, pheromone FROM swarm_tasks WHERE run_id = %(run_id)s ORDER BY id;

-- name: converge_run
SELECT id, score, output FROM swarm_tasks
WHERE run_id = %(run_id)s AND status = 'done'
ORDER BY score DESC, id LIMIT 1;

-- name: converge_capability
SELECT id, score, output FROM swarm_tasks
WHERE run_id = %(run_id)s AND status = 'done' AND capability = %(capability)s
ORDER BY score DESC, id LIMIT 1;

-- name: record_convergence
INSERT INTO swarm_convergence (run_id, scope, accepted_task_id, accepted_score, accepted_output, blob_sha256, at)
VALUES (%(run_id)s, %(scope)s, %(accepted_task_id)s, %(accepted_score)s, %(accepted_output)s, %(blob_sha256)s, %(now)s)
ON CONFLICT (run_id, scope) DO UPDATE SET
    accepted_task_id = excluded.accepted_task_id, accepted_score = excluded.accepted_score,
    accepted_output = excluded.accepted_output, blob_sha256 = excluded.blob_sha256, at = excluded.at;

-- name: convergences
SELECT scope, accepted_task_id, accepted_score, accepted_output, blob_sha256
FROM swarm_convergence WHERE run_id = %(run_id)s ORDER BY scope;

-- name: events
SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id, writer_seq
FROM swarm_events WHERE run_id = %(run_id)s ORDER BY seq;

-- name: events_after
SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id, writer_seq
FROM swarm_events WHERE run_id = %(run_id)s AND seq > %(seq)s ORDER BY seq;

-- name: completions_per_capability
SELECT t.capability, count(*) FROM swarm_events e JOIN swarm_tasks t ON t.id = e.task_id
WHERE e.run_id = %(run_id)s AND e.kind = 'complete' GROUP BY t.capability ORDER BY t.capability;

-- name: completions_per_second
SELECT greatest(0, floor(at - %(start)s))::bigint AS second, count(*) FROM swarm_events
WHERE run_id = %(run_id)s AND kind = 'complete' GROUP BY second ORDER BY second;

-- name: budget_lock
SELECT pg_advisory_xact_lock(hashtext(%(budget_id)s));

-- name: budget_windows_from
SELECT minute, tokens, reserved FROM swarm_budget_windows
WHERE budget_id = %(budget_id)s AND minute >= %(minute)s ORDER BY minute;

-- name: budget_add
INSERT INTO swarm_budget_windows (budget_id, minute, tokens, reserved)
VALUES (%(budget_id)s, %(minute)s, %(tokens)s, %(reserved)s)
ON CONFLICT (budget_id, minute) DO UPDATE SET tokens = swarm_budget_windows.tokens + excluded.tokens,
                                              reserved = swarm_budget_windows.reserved + excluded.reserved;

-- name: budget_release
UPDATE swarm_budget_windows SET tokens = greatest(0, tokens - %(tokens)s)
WHERE budget_id = %(budget_id)s AND minute = %(minute)s;

-- name: delete_run
WITH e AS (DELETE FROM swarm_events WHERE run_id = %(run_id)s),
     h AS (DELETE FROM swarm_chains WHERE run_id = %(run_id)s),
     c AS (DELETE FROM swarm_convergence WHERE run_id = %(run_id)s),
     t AS (DELETE FROM swarm_tasks WHERE run_id = %(run_id)s)
SELECT 1;

-- name: delete_run_row
DELETE FROM swarm_runs WHERE run_id = %(run_id)s;

-- name: vacuum
-- after a run is deleted: its rows become free space again and the planner's statistics fresh
-- (outside a transaction; PostgreSQL's autovacuum may be off, or behind after a large run)
VACUUM (ANALYZE) swarm_events, swarm_chains, swarm_tasks, swarm_convergence, swarm_runs;

-- name: copy_tasks
COPY swarm_tasks (id, run_id, capability, payload, pheromone, max_attempts, created_at) FROM STDIN;

-- name: copy_events
COPY swarm_events (seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id, writer_seq) FROM STDIN;

-- name: writer_rows_after
-- the rows a writer appended after its first N (what a step whose commit was not confirmed did)
SELECT seq, task_id, kind, attempt, value FROM swarm_events
WHERE run_id = %(run_id)s AND writer_id = %(writer)s AND writer_seq > %(events)s ORDER BY writer_seq;

-- name: claimed_tasks
SELECT id, capability, payload, max_attempts, lease_expires_at FROM swarm_tasks WHERE id = ANY (%(ids)s::bigint[]);
