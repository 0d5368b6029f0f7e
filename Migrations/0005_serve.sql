-- 0005: what `plugboard serve` needs: API tokens, and which clients read the board and how often they
-- evaluated each flag.
--
-- Tokens are policy: every change to them is audited. The board keeps only the SHA-256 of a token's secret
-- (token_hash) and a short public prefix for people to recognise it; the secret itself is printed once.
-- Client registrations and usage counts are telemetry, not policy: the server writes them in batches without
-- audit rows, and keeps them bounded (old hour buckets and silent instances are deleted, see the store).

CREATE TABLE api_tokens (
    name          TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    environment   TEXT NOT NULL REFERENCES environments(name),
    token_hash    TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),   -- lower-case hex SHA-256 of the secret
    token_prefix  TEXT NOT NULL,                                          -- the first characters, for display only
    created_at    TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    expires_at    TEXT,                                                   -- NULL: never
    revoked_at    TEXT,
    revoked_by    TEXT,
    revoke_reason TEXT,
    last_used_at  TEXT                                                    -- updated in batches by the server
) WITHOUT ROWID;

-- One SDK instance (Unleash `instanceId`) of one application, as it registered or last sent metrics.
CREATE TABLE client_instances (
    app_name     TEXT NOT NULL,
    instance_id  TEXT NOT NULL,
    environment  TEXT NOT NULL,
    sdk_version  TEXT,
    strategies   TEXT,                 -- JSON array of strategy names the SDK knows, as it registered
    token_name   TEXT,                 -- the token it used
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL,
    PRIMARY KEY (app_name, instance_id, environment)
) WITHOUT ROWID;

CREATE INDEX client_instances_last_seen ON client_instances (last_seen);

-- How often a flag was evaluated, per hour (bucket: 'YYYY-MM-DDTHH:00:00Z'), environment and application.
CREATE TABLE flag_usage (
    bucket        TEXT NOT NULL,
    flag_name     TEXT NOT NULL,        -- no foreign key: SDKs report flags the board may not (or no longer) have
    environment   TEXT NOT NULL,
    app_name      TEXT NOT NULL,
    yes           INTEGER NOT NULL DEFAULT 0 CHECK (yes >= 0),
    no            INTEGER NOT NULL DEFAULT 0 CHECK (no >= 0),
    variants_json TEXT NOT NULL DEFAULT '{}',   -- {"variant name": count}
    PRIMARY KEY (bucket, flag_name, environment, app_name)
) WITHOUT ROWID;

CREATE INDEX flag_usage_flag ON flag_usage (flag_name, environment, bucket);

-- Applications and instances that read the board, most recent first.
CREATE VIEW client_inventory AS
SELECT app_name, instance_id, environment, sdk_version, token_name, first_seen, last_seen
FROM client_instances
ORDER BY last_seen DESC;

-- Each flag in each environment: when a client last evaluated it and how often (over the kept buckets).
CREATE VIEW flag_usage_summary AS
SELECT flag_name, environment, max(bucket) AS last_bucket, sum(yes) AS yes, sum(no) AS no
FROM flag_usage
GROUP BY flag_name, environment;

-- Tokens as people read them: never the hash.
CREATE VIEW api_token_status AS
SELECT name, environment, token_prefix, created_at, created_by, expires_at, revoked_at, revoked_by, revoke_reason, last_used_at,
    CASE
        WHEN revoked_at IS NOT NULL THEN 'revoked'
        WHEN expires_at IS NOT NULL AND expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN 'expired'
        ELSE 'active'
    END AS state
FROM api_tokens
ORDER BY name;
