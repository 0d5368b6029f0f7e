-- 0001: the plug-in registry, owners, admins, environments, kill switches and the audit log.
--
-- Conventions (see README "The board schema"):
--   * times are UTC ISO-8601 text with milliseconds, e.g. '2026-11-21T18:40:00.123Z';
--   * booleans are INTEGER 0/1 with a CHECK;
--   * every change made through Plugboard writes one audit_log row in the same transaction.

-- Key/value facts about the board itself (board_id, created_at, created_by).
CREATE TABLE board_info (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Principals (OS user names) allowed to administer the whole board.
CREATE TABLE admins (
    principal TEXT PRIMARY KEY NOT NULL,
    added_at  TEXT NOT NULL,
    added_by  TEXT NOT NULL
) WITHOUT ROWID;

-- Environments such as 'default', 'staging', 'production'. 'default' is created by `plugboard init`;
-- others are created the first time a command names them.
CREATE TABLE environments (
    name       TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 63),
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL
) WITHOUT ROWID;

-- One row per plug-in id (reverse-DNS, lower case).
CREATE TABLE plugins (
    id          TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 3 AND 255),
    name        TEXT NOT NULL,
    description TEXT,
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL
) WITHOUT ROWID;

-- Content-addressed artifacts (plug-in shared libraries) copied beside the board.
CREATE TABLE artifacts (
    sha256     TEXT PRIMARY KEY NOT NULL CHECK (length(sha256) = 64),
    size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
    file_name  TEXT NOT NULL,              -- the name the file had when it was registered
    stored_at  TEXT NOT NULL,
    stored_by  TEXT NOT NULL
) WITHOUT ROWID;

-- One row per registered version. The manifest is kept verbatim (manifest_json) and its parsed fields
-- are copied into columns for querying. sort_key orders versions by SemVer precedence with plain ORDER BY.
CREATE TABLE plugin_versions (
    plugin_id       TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
    version         TEXT NOT NULL,
    sort_key        TEXT NOT NULL,
    is_prerelease   INTEGER NOT NULL CHECK (is_prerelease IN (0, 1)),
    name            TEXT NOT NULL,
    description     TEXT,
    host_range      TEXT,
    gate_flag       TEXT,
    entry_symbol    TEXT,
    capabilities    TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    manifest_json   TEXT NOT NULL,                -- the manifest exactly as registered
    artifact_sha256 TEXT REFERENCES artifacts(sha256),
    registered_at   TEXT NOT NULL,
    registered_by   TEXT NOT NULL,
    yanked_at       TEXT,
    yanked_by       TEXT,
    yank_reason     TEXT,
    PRIMARY KEY (plugin_id, version),
    CHECK ((yanked_at IS NULL) = (yank_reason IS NULL))
) WITHOUT ROWID;

CREATE INDEX plugin_versions_by_precedence ON plugin_versions (plugin_id, sort_key);

-- Dependencies of one version: the plug-in id it needs and the accepted version range.
CREATE TABLE plugin_dependencies (
    plugin_id     TEXT NOT NULL,
    version       TEXT NOT NULL,
    dependency_id TEXT NOT NULL,
    version_range TEXT NOT NULL,
    PRIMARY KEY (plugin_id, version, dependency_id),
    FOREIGN KEY (plugin_id, version) REFERENCES plugin_versions(plugin_id, version) ON DELETE CASCADE,
    CHECK (dependency_id <> plugin_id)
) WITHOUT ROWID;

-- Who owns or maintains a plug-in.
CREATE TABLE plugin_owners (
    plugin_id TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
    principal TEXT NOT NULL,
    role      TEXT NOT NULL CHECK (role IN ('owner', 'maintainer')),
    added_at  TEXT NOT NULL,
    added_by  TEXT NOT NULL,
    PRIMARY KEY (plugin_id, principal)
) WITHOUT ROWID;

-- Enablement and version pin of a plug-in in one environment. No row means disabled and unpinned.
CREATE TABLE plugin_environments (
    plugin_id      TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
    environment    TEXT NOT NULL REFERENCES environments(name),
    enabled        INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
    pinned_version TEXT,
    updated_at     TEXT NOT NULL,
    updated_by     TEXT NOT NULL,
    PRIMARY KEY (plugin_id, environment),
    FOREIGN KEY (plugin_id, pinned_version) REFERENCES plugin_versions(plugin_id, version)
) WITHOUT ROWID;

-- Kill switches. scope 'all' covers every plug-in, 'plugin' one plug-in, 'version' one version.
-- A kill switch covers every environment. It is active while revived_at IS NULL; reviving keeps the row.
CREATE TABLE kill_switches (
    id            INTEGER PRIMARY KEY,
    scope         TEXT NOT NULL CHECK (scope IN ('all', 'plugin', 'version')),
    plugin_id     TEXT REFERENCES plugins(id) ON DELETE CASCADE,
    version       TEXT,
    reason        TEXT NOT NULL CHECK (length(reason) > 0),
    killed_at     TEXT NOT NULL,
    killed_by     TEXT NOT NULL,
    revived_at    TEXT,
    revived_by    TEXT,
    revive_reason TEXT,
    CHECK ((scope = 'all' AND plugin_id IS NULL AND version IS NULL)
        OR (scope = 'plugin' AND plugin_id IS NOT NULL AND version IS NULL)
        OR (scope = 'version' AND plugin_id IS NOT NULL AND version IS NOT NULL)),
    CHECK ((revived_at IS NULL) = (revived_by IS NULL))
);

-- At most one active kill switch per target.
CREATE UNIQUE INDEX kill_switches_one_active
    ON kill_switches (scope, ifnull(plugin_id, ''), ifnull(version, ''))
    WHERE revived_at IS NULL;

-- The append-only, hash-chained audit log. See README "Audit log" for the exact hash input.
--   actor          the OS user who ran the command (always recorded)
--   on_behalf_of   the principal that automation declared with --as, if any
--   outcome        'ok' for a change, 'refused' for a refused attempt (not allowed, not found)
--   before_json / after_json  the state of the target before and after, as JSON (NULL when absent)
--   prev_hash      hash of the previous row (64 zeros for the first row)
--   hash           SHA-256 over prev_hash and the canonical encoding of this row
CREATE TABLE audit_log (
    seq          INTEGER PRIMARY KEY,
    at           TEXT NOT NULL,
    actor        TEXT NOT NULL,
    on_behalf_of TEXT,
    action       TEXT NOT NULL,
    outcome      TEXT NOT NULL CHECK (outcome IN ('ok', 'refused')),
    target_type  TEXT NOT NULL,
    target_id    TEXT,
    environment  TEXT,
    reason       TEXT,
    before_json  TEXT,
    after_json   TEXT,
    prev_hash    TEXT NOT NULL CHECK (length(prev_hash) = 64),
    hash         TEXT NOT NULL UNIQUE CHECK (length(hash) = 64)
);

CREATE INDEX audit_log_by_target ON audit_log (target_type, target_id, seq);
CREATE INDEX audit_log_by_actor ON audit_log (actor, seq);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be updated');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be deleted');
END;

-- ---------------------------------------------------------------------------------------------
-- Views for auditors: each answers a usual question with one SELECT.
-- ---------------------------------------------------------------------------------------------

-- Active kill switches, newest first.
CREATE VIEW active_kill_switches AS
SELECT id, scope, plugin_id, version, reason, killed_at, killed_by
FROM kill_switches
WHERE revived_at IS NULL
ORDER BY killed_at DESC, id DESC;

-- The state of each plug-in in each environment.
--   enabled          1 if enabled in that environment
--   killed           1 if a kill switch covers the plug-in or all plug-ins
--   pinned_version   the pinned version, if any
--   latest_version   highest registered version that is not yanked and not killed (host compatibility
--                    is decided by each host at load time and is not part of this view)
--   active_version   the version a compatible host would pick: pinned_version, else latest_version
CREATE VIEW plugin_state AS
SELECT
    p.id AS plugin_id,
    e.name AS environment,
    ifnull(pe.enabled, 0) AS enabled,
    CASE WHEN EXISTS (
        SELECT 1 FROM kill_switches k
        WHERE k.revived_at IS NULL
          AND (k.scope = 'all' OR (k.scope = 'plugin' AND k.plugin_id = p.id))
    ) THEN 1 ELSE 0 END AS killed,
    pe.pinned_version AS pinned_version,
    (SELECT v.version FROM plugin_versions v
      WHERE v.plugin_id = p.id AND v.yanked_at IS NULL AND v.is_prerelease = 0
        AND NOT EXISTS (SELECT 1 FROM kill_switches k
                        WHERE k.revived_at IS NULL AND k.scope = 'version'
                          AND k.plugin_id = v.plugin_id AND k.version = v.version)
      ORDER BY v.sort_key DESC LIMIT 1) AS latest_version,
    ifnull(pe.pinned_version,
      (SELECT v.version FROM plugin_versions v
        WHERE v.plugin_id = p.id AND v.yanked_at IS NULL AND v.is_prerelease = 0
          AND NOT EXISTS (SELECT 1 FROM kill_switches k
                          WHERE k.revived_at IS NULL AND k.scope = 'version'
                            AND k.plugin_id = v.plugin_id AND k.version = v.version)
        ORDER BY v.sort_key DESC LIMIT 1)) AS active_version
FROM plugins p
CROSS JOIN environments e
LEFT JOIN plugin_environments pe ON pe.plugin_id = p.id AND pe.environment = e.name;

-- The audit trail with readable columns, newest first.
CREATE VIEW audit_trail AS
SELECT
    seq,
    at,
    actor || CASE WHEN on_behalf_of IS NULL THEN '' ELSE ' (for ' || on_behalf_of || ')' END AS who,
    action,
    outcome,
    target_type || CASE WHEN target_id IS NULL THEN '' ELSE ':' || target_id END AS target,
    environment,
    reason,
    before_json,
    after_json
FROM audit_log
ORDER BY seq DESC;
