-- Measure only (insert_only.sql, for step_ab.py): step_one with its three ledger rows inserted unhashed: no chain row read or moved, hash and
-- writer_seq NULL.
-- A run stepped by it has a ledger the audit refuses. Cut from sql/queries.sql step_one as of
-- issue 19's ninth look (docs/performance.md), edited by hand: it does not follow later changes.
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
), ins AS (
    INSERT INTO swarm_events (run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id,
                              writer_seq)
    SELECT %(run_id)s::text, e.task_id, e.kind, e.agent, e.attempt, e.value, e.delta, e.note, %(at)s::float8,
           NULL, %(writer)s::int, NULL
    FROM e ORDER BY e.o
    RETURNING seq
)
SELECT (SELECT id FROM f), c.id, c.attempts, c.capability, c.payload, c.pheromone, c.max_attempts,
       c.lease_expires_at, ARRAY(SELECT seq FROM ins ORDER BY seq),
       (SELECT events FROM swarm_chains WHERE run_id = %(run_id)s::text AND writer_id = %(writer)s::int)
FROM (VALUES (1)) AS one (x) LEFT JOIN c ON true;
