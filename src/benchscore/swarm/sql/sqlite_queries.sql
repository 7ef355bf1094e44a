-- Named queries of the SQLite store. Parameters are named (:name).

-- name: insert_run
-- no row inserted when the run is already there (another process created it a moment before)
INSERT INTO swarm_runs (run_id, crash_policy, lease_seconds, created_at)
VALUES (:run_id, :crash_policy, :lease_seconds, :now)
ON CONFLICT (run_id) DO NOTHING;

-- name: get_run
SELECT crash_policy, lease_seconds, ledger_writers FROM swarm_runs WHERE run_id = :run_id;

-- name: count_writer
UPDATE swarm_runs SET ledger_writers = ledger_writers + 1 WHERE run_id = :run_id RETURNING ledger_writers;

-- name: insert_chain
INSERT INTO swarm_chains (run_id, writer_id, head) VALUES (:run_id, :writer, :head);

-- name: chains
SELECT writer_id, head, events, last_seq FROM swarm_chains WHERE run_id = :run_id ORDER BY writer_id;

-- name: run_created_at
SELECT created_at FROM swarm_runs WHERE run_id = :run_id;

-- name: chain_head
SELECT head, events FROM swarm_chains WHERE run_id = :run_id AND writer_id = :writer;

-- name: set_chain_head
UPDATE swarm_chains SET head = :head, events = :events, last_seq = :seq WHERE run_id = :run_id AND writer_id = :writer;

-- name: max_seq
SELECT coalesce(max(seq), 0) FROM swarm_events;

-- name: list_runs
SELECT run_id FROM swarm_runs ORDER BY created_at, run_id;

-- name: max_task_id
SELECT coalesce(max(id), 0) FROM swarm_tasks;

-- name: insert_task
INSERT INTO swarm_tasks (run_id, capability, payload, pheromone, max_attempts, created_at)
VALUES (?, ?, ?, ?, ?, ?);

-- name: insert_event
INSERT INTO swarm_events (seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id,
                          writer_seq)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: expired_leases
SELECT id, attempts, max_attempts, pheromone, claimed_by, capability
FROM swarm_tasks
WHERE run_id = :run_id AND status = 'claimed' AND lease_expires_at < :now;

-- name: resolve_lease
UPDATE swarm_tasks SET status = :status, pheromone = :pheromone, claimed_by = NULL, lease_expires_at = NULL
WHERE id = :id AND status = 'claimed' AND attempts = :attempt;

-- name: claim_batch
UPDATE swarm_tasks
SET status = 'claimed', claimed_by = :agent, attempts = attempts + 1, lease_expires_at = :lease
WHERE id IN (
    SELECT id FROM swarm_tasks
    WHERE run_id = :run_id AND status = 'pending'
      AND capability IN (SELECT value FROM json_each(:capabilities))
    ORDER BY pheromone DESC, id
    LIMIT :limit
)
RETURNING id, attempts, capability, payload, pheromone, max_attempts;

-- name: holders
-- the fence of completions and failures: who holds each of these tasks at which attempt
SELECT id, attempts, claimed_by FROM swarm_tasks
WHERE id IN (SELECT value FROM json_each(:ids)) AND run_id = :run_id AND status = 'claimed';

-- name: complete_task
UPDATE swarm_tasks
SET status = 'done', score = ?, output = ?, pheromone = ?, claimed_by = NULL, lease_expires_at = NULL
WHERE id = ?;

-- name: fail_task
UPDATE swarm_tasks
SET status = ?, output = ?, pheromone = ?, claimed_by = NULL, lease_expires_at = NULL
WHERE id = ?;

-- name: counts
SELECT status, count(*) FROM swarm_tasks WHERE run_id = :run_id GROUP BY status;

-- name: has_open
SELECT EXISTS (
    SELECT 1 FROM swarm_tasks WHERE run_id = :run_id AND status = 'pending'
      AND capability IN (SELECT value FROM json_each(:capabilities))
) OR EXISTS (
    SELECT 1 FROM swarm_tasks WHERE run_id = :run_id AND status = 'claimed'
      AND capability IN (SELECT value FROM json_each(:capabilities))
);

-- name: tasks
SELECT id, capability, payload, status, pheromone, score, output, attempts, max_attempts, claimed_by
FROM swarm_tasks WHERE run_id = :run_id ORDER BY id;

-- name: task_states
SELECT id, status, pheromone, score, attempts, claimed_by, capability, output
FROM swarm_tasks WHERE run_id = :run_id ORDER BY id;

-- name: capabilities
SELECT DISTINCT capability FROM swarm_tasks WHERE run_id = :run_id ORDER BY capability;

-- name: pheromones
SELECT id, capability, pheromone FROM swarm_tasks WHERE run_id = :run_id ORDER BY id;

-- name: converge_run
SELECT id, score, output FROM swarm_tasks
WHERE run_id = :run_id AND status = 'done'
ORDER BY score DESC, id LIMIT 1;

-- name: converge_capability
SELECT id, score, output FROM swarm_tasks
WHERE run_id = :run_id AND status = 'done' AND capability = :capability
ORDER BY score DESC, id LIMIT 1;

-- name: record_convergence
INSERT INTO swarm_convergence (run_id, scope, accepted_task_id, accepted_score, accepted_output, blob_sha256, at)
VALUES (:run_id, :scope, :accepted_task_id, :accepted_score, :accepted_output, :blob_sha256, :now)
ON CONFLICT (run_id, scope) DO UPDATE SET
    accepted_task_id = excluded.accepted_task_id, accepted_score = excluded.accepted_score,
    accepted_output = excluded.accepted_output, blob_sha256 = excluded.blob_sha256, at = excluded.at;

-- name: convergences
SELECT scope, accepted_task_id, accepted_score, accepted_output, blob_sha256
FROM swarm_convergence WHERE run_id = :run_id ORDER BY scope;

-- name: events
SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id, writer_seq
FROM swarm_events WHERE run_id = :run_id ORDER BY seq;

-- name: events_after
SELECT seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id, writer_seq
FROM swarm_events WHERE run_id = :run_id AND seq > :seq ORDER BY seq;

-- name: completions_per_capability
SELECT t.capability, count(*) FROM swarm_events e JOIN swarm_tasks t ON t.id = e.task_id
WHERE e.run_id = :run_id AND e.kind = 'complete' GROUP BY t.capability ORDER BY t.capability;

-- name: completions_per_second
SELECT max(0, CAST(at - :start AS INTEGER)) AS second, count(*) FROM swarm_events
WHERE run_id = :run_id AND kind = 'complete' GROUP BY second ORDER BY second;

-- name: budget_first_open_window
SELECT minute, tokens, reserved FROM swarm_budget_windows
WHERE budget_id = :budget_id AND minute >= :minute ORDER BY minute;

-- name: budget_add
INSERT INTO swarm_budget_windows (budget_id, minute, tokens, reserved) VALUES (:budget_id, :minute, :tokens, :reserved)
ON CONFLICT (budget_id, minute) DO UPDATE SET tokens = tokens + excluded.tokens, reserved = reserved + excluded.reserved;

-- name: budget_release
UPDATE swarm_budget_windows SET tokens = max(0, tokens - :tokens)
WHERE budget_id = :budget_id AND minute = :minute;

-- name: delete_events
DELETE FROM swarm_events WHERE run_id = :run_id;

-- name: delete_chains
DELETE FROM swarm_chains WHERE run_id = :run_id;

-- name: delete_convergence
DELETE FROM swarm_convergence WHERE run_id = :run_id;

-- name: delete_tasks
DELETE FROM swarm_tasks WHERE run_id = :run_id;

-- name: delete_run_row
DELETE FROM swarm_runs WHERE run_id = :run_id;
