-- Schema of the SQLite store (the embedded default). Applied at open; idempotent.
CREATE TABLE IF NOT EXISTS swarm_runs (
    run_id TEXT PRIMARY KEY,
    crash_policy TEXT NOT NULL CHECK (crash_policy IN ('requeue', 'fail')),
    lease_seconds REAL NOT NULL CHECK (lease_seconds > 0),
    created_at REAL NOT NULL,
    -- the single chain head of stores before the per-writer chains (no longer written)
    ledger_head BLOB,
    ledger_events INTEGER NOT NULL DEFAULT 0,
    ledger_seq INTEGER NOT NULL DEFAULT 0,
    -- writer ids handed out for the run (1..ledger_writers, each with its row in swarm_chains)
    ledger_writers INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS swarm_tasks (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES swarm_runs (run_id),
    capability TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
    pheromone REAL NOT NULL,
    score REAL,
    output TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
    claimed_by TEXT,
    lease_expires_at REAL,
    created_at REAL NOT NULL,
    -- a task has a holder exactly while it is claimed
    CHECK ((status = 'claimed') = (claimed_by IS NOT NULL))
);

-- the claim order: argmax P_t, ties oldest first, among pending tasks
CREATE INDEX IF NOT EXISTS swarm_tasks_pending
    ON swarm_tasks (run_id, pheromone DESC, id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS swarm_tasks_claimed
    ON swarm_tasks (run_id, lease_expires_at) WHERE status = 'claimed';

-- the audit ledger, written in the same transaction as the change it records; hash chains the
-- rows of a run (benchscore.swarm.ledger.event_digest)
CREATE TABLE IF NOT EXISTS swarm_events (
    seq INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    task_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    agent TEXT,
    attempt INTEGER NOT NULL,
    value REAL,
    delta REAL,
    note TEXT,
    at REAL NOT NULL,
    hash BLOB,
    writer_id INTEGER,
    writer_seq INTEGER
);
CREATE INDEX IF NOT EXISTS swarm_events_run ON swarm_events (run_id, seq);

-- the head of each writer's chain (benchscore.swarm.ledger)
CREATE TABLE IF NOT EXISTS swarm_chains (
    run_id TEXT NOT NULL,
    writer_id INTEGER NOT NULL,
    head BLOB NOT NULL,
    events INTEGER NOT NULL DEFAULT 0,
    last_seq INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, writer_id)
);

CREATE TABLE IF NOT EXISTS swarm_convergence (
    run_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    accepted_task_id INTEGER NOT NULL,
    accepted_score REAL NOT NULL,
    accepted_output TEXT NOT NULL,
    blob_sha256 TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (run_id, scope)
);

-- the TPM budget ledger (benchscore.swarm.budget): per discrete minute window, the tokens held
-- after reconciliation (tokens) and every token ever reserved in it (reserved)
CREATE TABLE IF NOT EXISTS swarm_budget_windows (
    budget_id TEXT NOT NULL,
    minute INTEGER NOT NULL,
    tokens INTEGER NOT NULL CHECK (tokens >= 0),
    reserved INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (budget_id, minute)
);
