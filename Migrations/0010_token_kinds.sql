-- 0010: an API token reads either the flag routes of SDKs or the routes of plug-in hosts.
--
-- kind is 'sdk' (the Unleash client API and OFREP), 'hosts' (the routes under /api/host/: registry snapshots, the
-- host event stream, artifacts, load reports) or 'sdk+hosts' (both). Tokens made before this migration could read
-- both, and fleets rely on that: they become 'sdk+hosts' and keep working. A new token is one kind or the other
-- (`plugboard token create --for sdk|hosts`, sdk by default); the column's default is the narrower kind, so that a
-- row written without it can read flags and nothing else.
--
-- api_tokens is a table of policy: its rows' digests change with the new column, so on a board with tokens the
-- migration runner records a board.baseline row with the digests of every row of policy after this migration.

ALTER TABLE api_tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'sdk' CHECK (kind IN ('sdk', 'hosts', 'sdk+hosts'));

UPDATE api_tokens SET kind = 'sdk+hosts';

-- Tokens as people read them: never the hash.
DROP VIEW api_token_status;
CREATE VIEW api_token_status AS
SELECT name, environment, kind, token_prefix, created_at, created_by, expires_at, revoked_at, revoked_by, revoke_reason,
    last_used_at,
    CASE
        WHEN revoked_at IS NOT NULL THEN 'revoked'
        WHEN expires_at IS NOT NULL AND expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN 'expired'
        ELSE 'active'
    END AS state
FROM api_tokens
ORDER BY name;
