-- 0021: what an access token may do. scope 'all' is every right of its principal (or, with read_only, every read);
-- scope 'stop' may only stop: kill a plug-in or a version its principal could kill, through the alerting trigger
-- (POST /api/triggers/alertmanager). Every other route of the operations API and the console refuse a stop token, and
-- a stop token makes no tokens. access_tokens is a table of policy: on a board with tokens its rows' digests change
-- with the new column, so the migration runner records a board.baseline row.

ALTER TABLE access_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'all' CHECK (scope IN ('all', 'stop'));

DROP VIEW access_token_status;

-- Access tokens as people read them: never the hash.
CREATE VIEW access_token_status AS
SELECT principal, name, token_prefix, read_only, scope, created_at, created_by, expires_at, revoked_at, revoked_by,
    revoke_reason, last_used_at,
    CASE
        WHEN revoked_at IS NOT NULL THEN 'revoked'
        WHEN expires_at IS NOT NULL AND expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN 'expired'
        ELSE 'active'
    END AS state
FROM access_tokens
ORDER BY principal, name;
