-- Schema of the PostgreSQL store, applied at connect (idempotent, under an advisory lock).
CREATE TABLE IF NOT EXISTS swarm_runs (
    run_id text PRIMARY KEY,
    crash_policy text NOT NULL CHECK (crash_policy IN ('requeue', 'fail')),
    lease_seconds double precision NOT NULL CHECK (lease_seconds > 0),
    created_at double precision NOT NULL,
    -- the head of the run's ledger hash chain: last row's hash, number of rows, last row's seq;
    -- a transaction locks this row (FOR NO KEY UPDATE) just before it appends ledger rows
    ledger_head bytea,
    ledger_events bigint NOT NULL DEFAULT 0,
    ledger_seq bigint NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS swarm_tasks (
    id bigserial PRIMARY KEY,
    run_id text NOT NULL REFERENCES swarm_runs (run_id),
    capability text NOT NULL,
    payload text NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
    pheromone double precision NOT NULL,
    score double precision,
    output text,
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL CHECK (max_attempts >= 1),
    claimed_by text,
    lease_expires_at double precision,
    created_at double precision NOT NULL,
    -- a task has a holder exactly while it is claimed: the attempt fence of completions and
    -- failures (claimed_by = agent AND attempts = attempt) therefore implies status = 'claimed'
    CONSTRAINT swarm_tasks_holder CHECK ((status = 'claimed') = (claimed_by IS NOT NULL))
);

-- the claim order: argmax P_t, ties oldest first, among pending tasks
CREATE INDEX IF NOT EXISTS swarm_tasks_pending
    ON swarm_tasks (run_id, pheromone DESC, id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS swarm_tasks_claimed
    ON swarm_tasks (run_id, lease_expires_at) WHERE status = 'claimed';

-- the audit ledger, written in the same transaction as the change it records; hash chains the
-- rows of a run (benchscore.swarm.ledger.event_digest)
CREATE TABLE IF NOT EXISTS swarm_events (
    seq bigserial PRIMARY KEY,
    run_id text NOT NULL,
    task_id bigint NOT NULL,
    kind text NOT NULL,
    agent text,
    attempt integer NOT NULL,
    value double precision,
    delta double precision,
    note text,
    at double precision NOT NULL,
    hash bytea
);
CREATE INDEX IF NOT EXISTS swarm_events_run ON swarm_events (run_id, seq);

CREATE TABLE IF NOT EXISTS swarm_convergence (
    run_id text NOT NULL,
    scope text NOT NULL,
    accepted_task_id bigint NOT NULL,
    accepted_score double precision NOT NULL,
    accepted_output text NOT NULL,
    blob_sha256 text,
    at double precision NOT NULL,
    PRIMARY KEY (run_id, scope)
);

-- per discrete minute window: tokens held after reconciliation, and every token ever reserved in it
CREATE TABLE IF NOT EXISTS swarm_budget_windows (
    budget_id text NOT NULL,
    minute bigint NOT NULL,
    tokens bigint NOT NULL CHECK (tokens >= 0),
    reserved bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (budget_id, minute)
);

-- stores created before the hash chain and the budget's reserved column get the new columns (the
-- catalog is checked first: ALTER TABLE would lock the table even when the column exists)
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT * FROM (VALUES
        ('swarm_runs', 'ledger_head', 'bytea'),
        ('swarm_runs', 'ledger_events', 'bigint NOT NULL DEFAULT 0'),
        ('swarm_runs', 'ledger_seq', 'bigint NOT NULL DEFAULT 0'),
        ('swarm_events', 'hash', 'bytea'),
        ('swarm_budget_windows', 'reserved', 'bigint NOT NULL DEFAULT 0')
    ) AS v (tab, col, typ) LOOP
        IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_schema = current_schema() AND table_name = c.tab AND column_name = c.col) THEN
            EXECUTE format('ALTER TABLE %I ADD COLUMN %I %s', c.tab, c.col, c.typ);
        END IF;
    END LOOP;
END
$$;
