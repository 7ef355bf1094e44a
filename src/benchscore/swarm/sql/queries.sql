-- Named queries of the PostgreSQL store (psycopg named parameters).

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
SELECT crash_policy, lease_seconds, ledger_head, ledger_events, ledger_seq FROM swarm_runs WHERE run_id = %(run_id)s;

-- name: lock_ledger
-- taken by every transaction of a run just before it appends ledger rows, held to its commit:
-- serialises the run's appends (and so its hash chain); NO KEY UPDATE leaves the foreign key
-- checks of task inserts unblocked
SELECT ledger_head, ledger_events, ledger_seq FROM swarm_runs WHERE run_id = %(run_id)s FOR NO KEY UPDATE;

-- name: append_events
-- the events of one transaction, a JSON list of [task_id, kind, agent, attempt, value, delta, note,
-- at, hash hex] (hashes computed by the caller), and the run's new chain head
WITH ins AS (
    INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at, hash)
    SELECT %(run_id)s, (v.e->>0)::bigint, v.e->>1, v.e->>2, (v.e->>3)::int, (v.e->>4)::float8, (v.e->>5)::float8,
           v.e->>6, (v.e->>7)::float8, decode(v.e->>8, 'hex')
    FROM jsonb_array_elements(%(events)s::jsonb) WITH ORDINALITY AS v (e, ord)
    ORDER BY v.ord
    RETURNING seq
), head AS (
    UPDATE swarm_runs SET ledger_head = %(head)s, ledger_events = ledger_events + %(n)s,
                          ledger_seq = (SELECT max(seq) FROM ins)
    WHERE run_id = %(run_id)s
)
SELECT seq FROM ins ORDER BY seq;

-- name: allocate_event_seqs
SELECT nextval(pg_get_serial_sequence('swarm_events', 'seq')) FROM generate_series(1, %(n)s);

-- name: set_ledger_head
UPDATE swarm_runs SET ledger_head = %(head)s, ledger_events = %(events)s, ledger_seq = %(seq)s
WHERE run_id = %(run_id)s;

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

-- name: claim_batch
WITH picked AS (
    SELECT id FROM swarm_tasks
    WHERE run_id = %(run_id)s AND status = 'pending' AND capability = ANY (%(capabilities)s::text[])
    ORDER BY pheromone DESC, id
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE swarm_tasks t
SET status = 'claimed', claimed_by = %(agent)s, attempts = t.attempts + 1,
    lease_expires_at = extract(epoch FROM clock_timestamp()) + %(lease)s
FROM picked
WHERE t.id = picked.id
RETURNING t.id, t.attempts, t.capability, t.payload, t.pheromone, t.max_attempts, t.lease_expires_at;

-- name: complete_batch
-- rows: a JSON list of [id, attempt, agent, score, output, pheromone]; the fence: still held by this
-- agent at this attempt (swarm_tasks_holder makes that imply status = 'claimed')
WITH v AS MATERIALIZED (
    SELECT (e->>0)::bigint AS id, (e->>1)::int AS attempt, e->>2 AS agent, (e->>3)::float8 AS score,
           e->>4 AS output, (e->>5)::float8 AS pheromone
    FROM jsonb_array_elements(%(rows)s::jsonb) AS r (e)
)
UPDATE swarm_tasks t
SET status = 'done', score = v.score, output = v.output, pheromone = v.pheromone,
    claimed_by = NULL, lease_expires_at = NULL
FROM v
WHERE t.id = v.id AND t.run_id = %(run_id)s AND t.attempts = v.attempt AND t.claimed_by = v.agent
RETURNING t.id;

-- name: fail_batch
-- rows: a JSON list of [id, attempt, agent, status, error, pheromone]
WITH v AS MATERIALIZED (
    SELECT (e->>0)::bigint AS id, (e->>1)::int AS attempt, e->>2 AS agent, e->>3 AS status, e->>4 AS error,
           (e->>5)::float8 AS pheromone
    FROM jsonb_array_elements(%(rows)s::jsonb) AS r (e)
)
UPDATE swarm_tasks t
SET status = v.status, output = v.error, pheromone = v.pheromone, claimed_by = NULL, lease_expires_at = NULL
FROM v
WHERE t.id = v.id AND t.run_id = %(run_id)s AND t.attempts = v.attempt AND t.claimed_by = v.agent
RETURNING t.id;

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
SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash
FROM swarm_events WHERE run_id = %(run_id)s ORDER BY seq;

-- name: events_after
SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash
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
     c AS (DELETE FROM swarm_convergence WHERE run_id = %(run_id)s),
     t AS (DELETE FROM swarm_tasks WHERE run_id = %(run_id)s)
SELECT 1;

-- name: delete_run_row
DELETE FROM swarm_runs WHERE run_id = %(run_id)s;

-- name: vacuum
-- after a run is deleted: its rows become free space again and the planner's statistics fresh
-- (outside a transaction; PostgreSQL's autovacuum may be off, or behind after a large run)
VACUUM (ANALYZE) swarm_events, swarm_tasks, swarm_convergence, swarm_runs;

-- name: copy_tasks
COPY swarm_tasks (id, run_id, capability, payload, pheromone, max_attempts, created_at) FROM STDIN;

-- name: copy_events
COPY swarm_events (seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash) FROM STDIN;
