-- Schema of the PostgreSQL store, applied at connect (idempotent, under an advisory lock) when the
-- store does not hold this version yet: swarm_meta's schema_sha256 is the sha256 of this file's text
-- (benchscore.swarm.stores.postgres._apply_schema).
CREATE TABLE IF NOT EXISTS swarm_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE IF NOT EXISTS swarm_runs (
    run_id text PRIMARY KEY,
    crash_policy text NOT NULL CHECK (crash_policy IN ('requeue', 'fail')),
    lease_seconds double precision NOT NULL CHECK (lease_seconds > 0),
    created_at double precision NOT NULL,
    -- the single chain head of stores before the per-writer chains (no longer written)
    ledger_head bytea,
    ledger_events bigint NOT NULL DEFAULT 0,
    ledger_seq bigint NOT NULL DEFAULT 0,
    -- writer ids handed out for the run (1..ledger_writers, each with its row in swarm_chains)
    ledger_writers integer NOT NULL DEFAULT 0
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
    hash bytea,
    writer_id integer,
    writer_seq bigint
);
CREATE INDEX IF NOT EXISTS swarm_events_run ON swarm_events (run_id, seq);

-- the head of each writer's chain (benchscore.swarm.ledger): only its writer appends to it, so
-- appends of different writers never wait for each other
CREATE TABLE IF NOT EXISTS swarm_chains (
    run_id text NOT NULL,
    writer_id integer NOT NULL,
    head bytea NOT NULL,
    events bigint NOT NULL DEFAULT 0,
    last_seq bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, writer_id)
);

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
        ('swarm_runs', 'ledger_writers', 'integer NOT NULL DEFAULT 0'),
        ('swarm_events', 'hash', 'bytea'),
        ('swarm_events', 'writer_id', 'integer'),
        ('swarm_events', 'writer_seq', 'bigint'),
        ('swarm_budget_windows', 'reserved', 'bigint NOT NULL DEFAULT 0')
    ) AS v (tab, col, typ) LOOP
        IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_schema = current_schema() AND table_name = c.tab AND column_name = c.col) THEN
            EXECUTE format('ALTER TABLE %I ADD COLUMN %I %s', c.tab, c.col, c.typ);
        END IF;
    END LOOP;
END
$$;

-- What a ledger row's hash covers (benchscore.swarm.ledger.event_content: texts as 01 || int32
-- length || UTF-8, integers as int64, floats as IEEE-754 binary64, big-endian, 00 for NULL)
-- STABLE, not IMMUTABLE: convert_to is STABLE, and PostgreSQL inlines a SQL function only when it is
-- declared no less volatile than its body; inlined, hashing a row calls no SQL function (declared
-- IMMUTABLE, each of the seven calls per row ran through the SQL-function executor: issue 19)
CREATE OR REPLACE FUNCTION swarm_text(s text) RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN s IS NULL THEN '\x00'::bytea
                ELSE '\x01'::bytea || int4send(octet_length(s)) || convert_to(s, 'UTF8') END
$$;

CREATE OR REPLACE FUNCTION swarm_float(x float8) RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN x IS NULL THEN '\x00'::bytea ELSE '\x01'::bytea || float8send(x) END
$$;

CREATE OR REPLACE FUNCTION swarm_content(run_id text, task_id bigint, kind text, agent text, attempt integer,
                                         value float8, delta float8, note text)
RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT swarm_text(run_id) || int8send(task_id) || swarm_text(kind) || swarm_text(agent)
           || int8send(attempt::bigint) || swarm_float(value) || swarm_float(delta) || swarm_text(note)
$$;

-- A new writer of a run: the next writer id and its chain (head GENESIS); NULL when no such run.
CREATE OR REPLACE FUNCTION swarm_new_writer(p_run text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    w integer;
BEGIN
    UPDATE swarm_runs SET ledger_writers = ledger_writers + 1 WHERE run_id = p_run RETURNING ledger_writers INTO w;
    IF w IS NOT NULL THEN
        INSERT INTO swarm_chains (run_id, writer_id, head) VALUES (p_run, w, decode(repeat('00', 32), 'hex'));
    END IF;
    RETURN w;
END
$$;

-- The error of a write to a chain that is not there (called by the step_one query only then).
CREATE OR REPLACE FUNCTION swarm_no_writer(p_run text, p_writer integer) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'no ledger writer % of run %', p_writer, p_run;
END
$$;

-- Append events to writer p_writer's chain: hash each onto the writer's head, insert them with
-- seqs drawn now (after the caller's row locks on their tasks) and move the head. Returns the seqs.
CREATE OR REPLACE FUNCTION swarm_append(p_run text, p_writer integer, p_at float8, p_task bigint[], p_kind text[],
                                        p_agent text[], p_attempt integer[], p_value float8[], p_delta float8[],
                                        p_note text[])
RETURNS bigint[] LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    h bytea;
    n bigint;
    k integer := coalesce(array_length(p_task, 1), 0);
    hashes bytea[] := '{}';
    seqs bigint[];
BEGIN
    IF k = 0 THEN
        RETURN '{}';
    END IF;
    SELECT head, events INTO h, n FROM swarm_chains WHERE run_id = p_run AND writer_id = p_writer FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no ledger writer % of run %', p_writer, p_run;
    END IF;
    FOR i IN 1..k LOOP
        h := sha256(h || swarm_content(p_run, p_task[i], p_kind[i], p_agent[i], p_attempt[i], p_value[i], p_delta[i],
                                       p_note[i]));
        hashes := hashes || h;
    END LOOP;
    -- the serial's own sequence by name (pg_get_serial_sequence looks it up in the catalog each call)
    SELECT array_agg(q ORDER BY q) INTO seqs
    FROM (SELECT nextval('swarm_events_seq_seq') AS q FROM generate_series(1, k)) s;
    INSERT INTO swarm_events (seq, run_id, task_id, kind, agent, attempt, value, delta, note, at, hash, writer_id,
                              writer_seq)
    SELECT seqs[i], p_run, p_task[i], p_kind[i], p_agent[i], p_attempt[i], p_value[i], p_delta[i], p_note[i], p_at,
           hashes[i], p_writer, n + i
    FROM generate_series(1, k) AS i;
    UPDATE swarm_chains SET head = h, events = n + k, last_seq = seqs[k]
    WHERE run_id = p_run AND writer_id = p_writer;
    RETURN seqs;
END
$$;

-- One round trip of an agent: finish its claims (p_finish: a JSON list of [id, attempt, agent,
-- status, score, output, pheromone, old pheromone, output sha256] with status done, pending or
-- failed; fenced by attempt and agent), then claim up to p_limit pending tasks of p_caps in claim
-- order (argmax P_t, ties oldest first; FOR UPDATE SKIP LOCKED), and append the events of both to
-- the writer's chain (per finished task: complete or fail, then its pheromone change; per claim:
-- claim). Returns the ids finished, the claims (ordered) and the seqs of the events appended.
CREATE OR REPLACE FUNCTION swarm_step(p_run text, p_writer integer, p_at float8, p_finish jsonb, p_agent text,
                                      p_caps text[], p_limit integer, p_lease float8,
                                      OUT finished bigint[], OUT ids bigint[], OUT attempts integer[],
                                      OUT capabilities text[], OUT payloads text[], OUT pheromones float8[],
                                      OUT max_attempts integer[], OUT lease_expires float8[], OUT seqs bigint[],
                                      OUT writer_events bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    e_task bigint[] := '{}';
    e_kind text[] := '{}';
    e_agent text[] := '{}';
    e_attempt integer[] := '{}';
    e_value float8[] := '{}';
    e_delta float8[] := '{}';
    e_note text[] := '{}';
    r record;
BEGIN
    finished := '{}';
    IF p_finish IS NOT NULL THEN
        FOR r IN
            WITH v AS MATERIALIZED (
                SELECT ord, (e->>0)::bigint AS id, (e->>1)::int AS attempt, e->>2 AS agent, e->>3 AS status,
                       (e->>4)::float8 AS score, e->>5 AS output, (e->>6)::float8 AS pheromone,
                       (e->>7)::float8 AS old_pheromone, e->>8 AS digest
                FROM jsonb_array_elements(p_finish) WITH ORDINALITY AS x (e, ord)
            ), u AS (
                UPDATE swarm_tasks t
                SET status = v.status, score = CASE WHEN v.status = 'done' THEN v.score ELSE t.score END,
                    output = v.output, pheromone = v.pheromone, claimed_by = NULL, lease_expires_at = NULL
                FROM v
                -- the ids as an index condition: joined on v alone, the generic plan estimates 100
                -- rows from jsonb_array_elements and scans the whole table per step (issue 19)
                WHERE t.id = ANY (ARRAY(SELECT v.id FROM v)) AND t.id = v.id AND t.run_id = p_run
                  AND t.attempts = v.attempt AND t.claimed_by = v.agent
                RETURNING t.id
            )
            SELECT v.* FROM v JOIN u ON u.id = v.id ORDER BY v.ord
        LOOP
            finished := finished || r.id;
            e_task := e_task || r.id || r.id;
            e_agent := e_agent || r.agent || r.agent;
            e_attempt := e_attempt || r.attempt || r.attempt;
            IF r.status = 'done' THEN
                e_kind := e_kind || 'complete'::text || 'pheromone'::text;
                e_value := e_value || r.score || r.pheromone;
                e_note := e_note || r.digest || 'complete'::text;
            ELSE
                e_kind := e_kind || 'fail'::text || 'pheromone'::text;
                e_value := e_value || NULL::float8 || r.pheromone;
                e_note := e_note || r.status || 'fail'::text;
            END IF;
            e_delta := e_delta || NULL::float8 || (r.pheromone - r.old_pheromone);
        END LOOP;
    END IF;
    IF p_limit > 0 THEN
        WITH picked AS (
            SELECT t.id FROM swarm_tasks t
            WHERE t.run_id = p_run AND t.status = 'pending' AND t.capability = ANY (p_caps)
            ORDER BY t.pheromone DESC, t.id
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ), c AS (
            UPDATE swarm_tasks t
            SET status = 'claimed', claimed_by = p_agent, attempts = t.attempts + 1,
                lease_expires_at = extract(epoch FROM clock_timestamp()) + p_lease
            FROM picked
            WHERE t.id = ANY (ARRAY(SELECT picked.id FROM picked)) AND t.id = picked.id
            RETURNING t.id, t.attempts, t.capability, t.payload, t.pheromone, t.max_attempts, t.lease_expires_at
        )
        SELECT coalesce(array_agg(c.id ORDER BY c.pheromone DESC, c.id), '{}'),
               array_agg(c.attempts ORDER BY c.pheromone DESC, c.id),
               array_agg(c.capability ORDER BY c.pheromone DESC, c.id),
               array_agg(c.payload ORDER BY c.pheromone DESC, c.id),
               array_agg(c.pheromone ORDER BY c.pheromone DESC, c.id),
               array_agg(c.max_attempts ORDER BY c.pheromone DESC, c.id),
               array_agg(c.lease_expires_at ORDER BY c.pheromone DESC, c.id)
        INTO ids, attempts, capabilities, payloads, pheromones, max_attempts, lease_expires
        FROM c;
        IF array_length(ids, 1) > 0 THEN
            e_task := e_task || ids;
            e_kind := e_kind || array_fill('claim'::text, ARRAY[array_length(ids, 1)]);
            e_agent := e_agent || array_fill(p_agent, ARRAY[array_length(ids, 1)]);
            e_attempt := e_attempt || attempts;
            e_value := e_value || pheromones;
            e_delta := e_delta || array_fill(NULL::float8, ARRAY[array_length(ids, 1)]);
            e_note := e_note || array_fill(NULL::text, ARRAY[array_length(ids, 1)]);
        END IF;
    ELSE
        ids := '{}';
    END IF;
    seqs := swarm_append(p_run, p_writer, p_at, e_task, e_kind, e_agent, e_attempt, e_value, e_delta, e_note);
    SELECT events INTO writer_events FROM swarm_chains WHERE run_id = p_run AND writer_id = p_writer;
END
$$;
