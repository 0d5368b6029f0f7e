-- 0023: advisories: plug-in versions known to be vulnerable, in OSV's format, and what hosts do about them.
--
-- advisories holds one OSV document per id, as imported (raw_json, bounded) with the fields the board reads from it.
-- withdrawn is the document's own withdrawal; withdrawn_at/withdrawn_by a withdrawal made on this board (plugboard
-- advisory withdraw), which a later import of the same id does not undo. severity is the qualitative level the board
-- computed at import: from database_specific.severity, else from a CVSS v3 vector's base score, else 'unknown'.
-- advisory_ranges holds what each document says is affected, per plug-in (OSV's package name is the plug-in id):
-- kind 'SEMVER' with its events ([{"introduced":"0"},{"fixed":"1.4.2"}]), or kind 'versions' with a list of versions.
-- advisory_actions is an action chosen for one advisory in one environment; without one, the severity decides
-- (critical: stop, high: refuse-new, else warn). advisory_policies raises every advisory's action in an environment to
-- at least its floor. Every table is policy: each change is audited and the state proof covers its rows.
CREATE TABLE advisories (
    id           TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
    modified     TEXT NOT NULL,
    published    TEXT,
    withdrawn    TEXT,
    aliases_json TEXT NOT NULL DEFAULT '[]',
    summary      TEXT CHECK (summary IS NULL OR length(summary) <= 1024),
    severity     TEXT NOT NULL CHECK (severity IN ('critical', 'high', 'medium', 'low', 'unknown')),
    raw_json     TEXT NOT NULL CHECK (length(raw_json) <= 65536),
    source       TEXT NOT NULL,
    imported_at  TEXT NOT NULL,
    imported_by  TEXT NOT NULL,
    withdrawn_at TEXT,
    withdrawn_by TEXT,
    withdraw_reason TEXT
) WITHOUT ROWID;

CREATE TABLE advisory_ranges (
    advisory_id TEXT NOT NULL REFERENCES advisories(id),
    plugin_id   TEXT NOT NULL,
    ordinal     INTEGER NOT NULL CHECK (ordinal >= 0),
    kind        TEXT NOT NULL CHECK (kind IN ('SEMVER', 'versions')),
    values_json TEXT NOT NULL,
    PRIMARY KEY (advisory_id, plugin_id, ordinal)
) WITHOUT ROWID;

CREATE INDEX advisory_ranges_by_plugin ON advisory_ranges (plugin_id);

CREATE TABLE advisory_actions (
    advisory_id TEXT NOT NULL REFERENCES advisories(id),
    environment TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('warn', 'refuse-new', 'stop')),
    set_at      TEXT NOT NULL,
    set_by      TEXT NOT NULL,
    PRIMARY KEY (advisory_id, environment)
) WITHOUT ROWID;

CREATE TABLE advisory_policies (
    environment TEXT PRIMARY KEY,
    floor       TEXT NOT NULL CHECK (floor IN ('warn', 'refuse-new', 'stop')),
    updated_at  TEXT NOT NULL,
    updated_by  TEXT NOT NULL
) WITHOUT ROWID;
