-- 0002: the feature-flag store. Definitions follow the Unleash client API: per environment, a flag is
-- enabled or not and has strategies and variants (kept as the Unleash JSON arrays); segments are shared by
-- every environment. Every change writes an audit row with the flag's definition before and after.

CREATE TABLE flags (
    name              TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    type              TEXT NOT NULL DEFAULT 'release'
                      CHECK (type IN ('release', 'experiment', 'operational', 'kill-switch', 'permission')),
    description       TEXT,
    owner             TEXT NOT NULL,                 -- the principal who may change it (besides admins)
    impression_data   INTEGER NOT NULL DEFAULT 0 CHECK (impression_data IN (0, 1)),
    dependencies_json TEXT NOT NULL DEFAULT '[]',    -- Unleash "dependencies": [{"feature":…,"enabled":…,"variants":[…]}]
    created_at        TEXT NOT NULL,
    created_by        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    updated_by        TEXT NOT NULL,
    archived_at       TEXT,                          -- archived flags are not evaluated and not exported
    archived_by       TEXT
) WITHOUT ROWID;

-- A flag in one environment. No row means disabled with no strategies.
CREATE TABLE flag_environments (
    flag_name       TEXT NOT NULL REFERENCES flags(name) ON DELETE CASCADE,
    environment     TEXT NOT NULL REFERENCES environments(name),
    enabled         INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
    strategies_json TEXT NOT NULL DEFAULT '[]',      -- Unleash "strategies"; empty = on for everyone when enabled
    variants_json   TEXT NOT NULL DEFAULT '[]',      -- Unleash flag-level "variants"
    updated_at      TEXT NOT NULL,
    updated_by      TEXT NOT NULL,
    PRIMARY KEY (flag_name, environment)
) WITHOUT ROWID;

-- Reusable sets of constraints, referenced by id from strategies.
CREATE TABLE segments (
    id               INTEGER PRIMARY KEY,
    name             TEXT,
    constraints_json TEXT NOT NULL DEFAULT '[]',
    updated_at       TEXT NOT NULL,
    updated_by       TEXT NOT NULL
);

-- Each flag in each environment, with Unleash's "potentially stale" rule: a flag older than its type's
-- expected lifetime (release and experiment 40 days, operational 7; kill-switch and permission never).
CREATE VIEW flag_state AS
SELECT
    f.name,
    e.name AS environment,
    ifnull(fe.enabled, 0) AS enabled,
    f.type,
    f.owner,
    json_array_length(ifnull(fe.strategies_json, '[]')) AS strategy_count,
    json_array_length(ifnull(fe.variants_json, '[]')) AS variant_count,
    f.archived_at IS NOT NULL AS archived,
    CASE f.type
        WHEN 'release' THEN julianday('now') - julianday(f.created_at) > 40
        WHEN 'experiment' THEN julianday('now') - julianday(f.created_at) > 40
        WHEN 'operational' THEN julianday('now') - julianday(f.created_at) > 7
        ELSE 0
    END AS potentially_stale,
    f.created_at,
    f.updated_at
FROM flags f
CROSS JOIN environments e
LEFT JOIN flag_environments fe ON fe.flag_name = f.name AND fe.environment = e.name;
