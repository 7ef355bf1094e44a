-- Named queries of the PostgreSQL store (psycopg named parameters).

-- name: insert_run
INSERT INTO swarm_runs (run_id, crash_policy, lease_seconds, created_at)
VALUES (%(run_id)s, %(crash_policy)s, %(lease_seconds)s, %(now)s);

-- name: get_run
SELECT crash_policy, lease_seconds FROM swarm_runs WHERE run_id = %(run_id)s;

-- name: list_runs
SELECT run_id FROM swarm_runs ORDER BY created_at, run_id;

-- name: allocate_task_ids
SELECT nextval(pg_get_serial_sequence('swarm_tasks', 'id')) FROM generate_series(1, %(n)s);

-- name: insert_tasks
INSERT INTO swarm_tasks (id, run_id, capability, payload, pheromone, max_attempts, created_at)
SELECT v.id, %(run_id)s, v.capability, v.payload, v.pheromone, v.max_attempts, %(now)s
FROM unnest(%(ids)s::bigint[], %(capabilities)s::text[], %(payloads)s::text[], %(pheromones)s::float8[],
            %(max_attempts)s::int[]) AS v (id, capability, payload, pheromone, max_attempts);

-- name: insert_events
INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at)
SELECT %(run_id)s, v.task_id, v.kind, v.agent, v.attempt, v.value, v.delta, v.note, v.at
FROM unnest(%(task_ids)s::bigint[], %(kinds)s::text[], %(agents)s::text[], %(attempts)s::int[],
            %(values)s::float8[], %(deltas)s::float8[], %(notes)s::text[], %(ats)s::float8[])
     WITH ORDINALITY AS v (task_id, kind, agent, attempt, value, delta, note, at, ord)
ORDER BY v.ord;

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
UPDATE swarm_tasks t
SET status = 'done', score = v.score, output = v.output, pheromone = v.pheromone,
    claimed_by = NULL, lease_expires_at = NULL
FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(agents)s::text[], %(scores)s::float8[],
            %(outputs)s::text[], %(pheromones)s::float8[]) AS v (id, attempt, agent, score, output, pheromone)
WHERE t.id = ANY (%(ids)s::bigint[])
  AND t.id = v.id AND t.run_id = %(run_id)s AND t.attempts = v.attempt AND t.claimed_by = v.agent
RETURNING t.id;

-- name: fail_batch
UPDATE swarm_tasks t
SET status = v.status, output = v.error, pheromone = v.pheromone, claimed_by = NULL, lease_expires_at = NULL
FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(agents)s::text[], %(statuses)s::text[],
            %(errors)s::text[], %(pheromones)s::float8[]) AS v (id, attempt, agent, status, error, pheromone)
WHERE t.id = ANY (%(ids)s::bigint[])
  AND t.id = v.id AND t.run_id = %(run_id)s AND t.attempts = v.attempt AND t.claimed_by = v.agent
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
SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, at
FROM swarm_events WHERE run_id = %(run_id)s ORDER BY seq;

-- name: budget_lock
SELECT pg_advisory_xact_lock(hashtext(%(budget_id)s));

-- name: budget_windows_from
SELECT minute, tokens FROM swarm_budget_windows
WHERE budget_id = %(budget_id)s AND minute >= %(minute)s ORDER BY minute;

-- name: budget_add
INSERT INTO swarm_budget_windows (budget_id, minute, tokens) VALUES (%(budget_id)s, %(minute)s, %(tokens)s)
ON CONFLICT (budget_id, minute) DO UPDATE SET tokens = swarm_budget_windows.tokens + excluded.tokens;

-- name: budget_release
UPDATE swarm_budget_windows SET tokens = greatest(0, tokens - %(tokens)s)
WHERE budget_id = %(budget_id)s AND minute = %(minute)s;

-- name: claim_batch_logged
-- claim_batch and its ledger rows in one statement (one round trip per batch)
WITH picked AS (
    SELECT id FROM swarm_tasks
    WHERE run_id = %(run_id)s AND status = 'pending' AND capability = ANY (%(capabilities)s::text[])
    ORDER BY pheromone DESC, id
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE swarm_tasks t
    SET status = 'claimed', claimed_by = %(agent)s, attempts = t.attempts + 1,
        lease_expires_at = extract(epoch FROM clock_timestamp()) + %(lease)s
    FROM picked
    WHERE t.id = picked.id
    RETURNING t.id, t.attempts, t.capability, t.payload, t.pheromone, t.max_attempts, t.lease_expires_at
), logged AS (
    INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at)
    SELECT %(run_id)s, c.id, 'claim', %(agent)s, c.attempts, c.pheromone, NULL, NULL, %(now)s
    FROM claimed c ORDER BY c.pheromone DESC, c.id
)
SELECT id, attempts, capability, payload, pheromone, max_attempts, lease_expires_at FROM claimed;

-- name: complete_batch_logged
-- complete_batch and its ledger rows (complete + pheromone per accepted task) in one statement
WITH v AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(agents)s::text[], %(scores)s::float8[],
                         %(outputs)s::text[], %(pheromones)s::float8[], %(deltas)s::float8[])
                  AS v (id, attempt, agent, score, output, pheromone, delta)
), done AS (
    UPDATE swarm_tasks t
    SET status = 'done', score = v.score, output = v.output, pheromone = v.pheromone,
        claimed_by = NULL, lease_expires_at = NULL
    FROM v
    -- the fence: still held by this agent at this attempt (swarm_tasks_holder makes that imply
    -- status = 'claimed'; leaving status out keeps the planner on the primary key instead of
    -- walking the partial index of claimed tasks, dead entries included)
    WHERE t.id = ANY (%(ids)s::bigint[])
      AND t.id = v.id AND t.run_id = %(run_id)s AND t.attempts = v.attempt AND t.claimed_by = v.agent
    RETURNING t.id, v.attempt, v.agent, v.score, v.pheromone, v.delta
), logged AS (
    INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at)
    SELECT %(run_id)s, d.id, k.kind, d.agent, d.attempt,
           CASE k.kind WHEN 'complete' THEN d.score ELSE d.pheromone END,
           CASE k.kind WHEN 'pheromone' THEN d.delta END,
           CASE k.kind WHEN 'pheromone' THEN 'complete' END,
           %(now)s
    FROM done d CROSS JOIN (VALUES (1, 'complete'), (2, 'pheromone')) AS k (ord, kind)
    ORDER BY d.id, k.ord
)
SELECT id FROM done;

-- name: delete_run
WITH e AS (DELETE FROM swarm_events WHERE run_id = %(run_id)s),
     c AS (DELETE FROM swarm_convergence WHERE run_id = %(run_id)s),
     t AS (DELETE FROM swarm_tasks WHERE run_id = %(run_id)s)
SELECT 1;

-- name: delete_run_row
DELETE FROM swarm_runs WHERE run_id = %(run_id)s;

-- name: copy_tasks
COPY swarm_tasks (id, run_id, capability, payload, pheromone, max_attempts, created_at) FROM STDIN;

-- name: copy_events
COPY swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at) FROM STDIN;
