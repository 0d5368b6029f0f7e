-- 0011: people's access tokens. A token acts as its principal, with exactly the rights that principal has on the board
-- (admin, owner, maintainer), or, when read_only, may only read. The board keeps only the SHA-256 of its secret.
--
-- A principal is a name: an OS user, a person (alice), a service (ci-bot@example.com), and later an identity provider's
-- subject (oidc:ISSUER-HOST/SUBJECT). Token names are unique per principal: two people may both call theirs "laptop".
-- access_tokens is a table of policy (the audit log proves its rows); last_used_at is runtime data, left out of the proof.

CREATE TABLE access_tokens (
    principal     TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 128),
    name          TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    token_hash    TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),   -- lower-case hex SHA-256 of the secret
    token_prefix  TEXT NOT NULL,                                          -- the first characters, for display only
    read_only     INTEGER NOT NULL DEFAULT 1 CHECK (read_only IN (0, 1)),
    created_at    TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    expires_at    TEXT,                                                   -- NULL: never
    revoked_at    TEXT,
    revoked_by    TEXT,
    revoke_reason TEXT,
    last_used_at  TEXT,
    PRIMARY KEY (principal, name)
) WITHOUT ROWID;

-- Access tokens as people read them: never the hash.
CREATE VIEW access_token_status AS
SELECT principal, name, token_prefix, read_only, created_at, created_by, expires_at, revoked_at, revoked_by, revoke_reason,
    last_used_at,
    CASE
        WHEN revoked_at IS NOT NULL THEN 'revoked'
        WHEN expires_at IS NOT NULL AND expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN 'expired'
        ELSE 'active'
    END AS state
FROM access_tokens
ORDER BY principal, name;
