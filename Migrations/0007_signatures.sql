-- 0007: signed plug-ins (issue 13): which publisher keys are trusted for which plug-ins, which keys are revoked,
-- the signatures each release carries, and each environment's signature policy.
--
-- Private keys never enter the board: publishers keep them in files (`plugboard signing-key generate`). A key is
-- named by its key id: the first 8 bytes of the SHA-256 of the raw 32-byte Ed25519 public key, in lower-case hex.
-- A signature covers a statement of one release (plug-in id, version, SHA-256 of the manifest as registered,
-- SHA-256 of the artifact or "none"); hosts re-verify it against the trusted key before any code loads.
-- Every table here is policy: each change is audited and the state proof covers its rows (State/StateTables.swift).

-- A key trusted for one plug-in (plugin_id), or for every plug-in ('*', set by admins).
CREATE TABLE signers (
    key_id     TEXT NOT NULL CHECK (length(key_id) = 16),
    plugin_id  TEXT NOT NULL,
    public_key TEXT NOT NULL,          -- base64 of the raw 32-byte Ed25519 public key
    name       TEXT,
    added_at   TEXT NOT NULL,
    added_by   TEXT NOT NULL,
    PRIMARY KEY (key_id, plugin_id)
) WITHOUT ROWID;

-- A revoked key: no signature it made counts any more, whenever it was made.
CREATE TABLE signer_revocations (
    key_id     TEXT PRIMARY KEY NOT NULL CHECK (length(key_id) = 16),
    reason     TEXT NOT NULL,
    revoked_at TEXT NOT NULL,
    revoked_by TEXT NOT NULL
) WITHOUT ROWID;

-- The signatures of a release, one per key, exactly as the signature file carried them.
CREATE TABLE release_signatures (
    plugin_id  TEXT NOT NULL,
    version    TEXT NOT NULL,
    key_id     TEXT NOT NULL CHECK (length(key_id) = 16),
    algorithm  TEXT NOT NULL CHECK (algorithm = 'ed25519'),
    public_key TEXT NOT NULL,
    statement  TEXT NOT NULL,
    signature  TEXT NOT NULL,          -- base64 of the 64-byte Ed25519 signature of the statement's UTF-8 bytes
    added_at   TEXT NOT NULL,
    added_by   TEXT NOT NULL,
    PRIMARY KEY (plugin_id, version, key_id),
    FOREIGN KEY (plugin_id, version) REFERENCES plugin_versions(plugin_id, version)
) WITHOUT ROWID;

-- Whether hosts in an environment need signed releases; no row means 'off'.
CREATE TABLE signature_policies (
    environment TEXT PRIMARY KEY NOT NULL REFERENCES environments(name),
    signatures  TEXT NOT NULL CHECK (signatures IN ('off', 'warn', 'require')),
    updated_at  TEXT NOT NULL,
    updated_by  TEXT NOT NULL
) WITHOUT ROWID;

-- Trusted keys as people read them, with their revocation.
CREATE VIEW signer_status AS
SELECT s.key_id, s.plugin_id, s.name, s.public_key, s.added_at, s.added_by,
       r.revoked_at, r.revoked_by, r.reason AS revoke_reason,
       CASE WHEN r.key_id IS NULL THEN 'trusted' ELSE 'revoked' END AS state
FROM signers s LEFT JOIN signer_revocations r ON r.key_id = s.key_id
ORDER BY s.key_id, s.plugin_id;

-- A release a host loads under `warn` reports the signature problem beside its `loaded` state.
ALTER TABLE load_reports ADD COLUMN warning TEXT;

DROP VIEW plugin_load_status;
CREATE VIEW plugin_load_status AS
SELECT r.plugin_id, r.host_id, h.environment, h.host_version, r.version, r.state, r.reason_code, r.reason, r.warning, r.reported_at
FROM load_reports r JOIN hosts h ON h.host_id = r.host_id
ORDER BY r.plugin_id, r.host_id;
