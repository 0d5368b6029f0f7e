-- 0004: what each host loaded or skipped, and why (written by hosts, read by `plugboard plugin status`).
--
-- Load reports are telemetry, not changes to the board's policy: they are not audited. Each host replaces
-- its own rows whenever its set of plug-ins changes. plugin_id has no foreign key: a host may report a
-- compiled-in plug-in the board does not know.

CREATE TABLE hosts (
    host_id      TEXT PRIMARY KEY NOT NULL,
    environment  TEXT NOT NULL,
    host_version TEXT NOT NULL,
    os_user      TEXT NOT NULL,
    last_report  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE load_reports (
    host_id     TEXT NOT NULL REFERENCES hosts(host_id) ON DELETE CASCADE,
    plugin_id   TEXT NOT NULL,
    version     TEXT,
    state       TEXT NOT NULL CHECK (state IN ('loaded', 'skipped', 'failed', 'deactivated')),
    reason_code TEXT,
    reason      TEXT,
    reported_at TEXT NOT NULL,
    PRIMARY KEY (host_id, plugin_id),
    CHECK ((state = 'loaded') = (reason_code IS NULL))
) WITHOUT ROWID;

-- What every host last reported, with the host's environment and version.
CREATE VIEW plugin_load_status AS
SELECT r.plugin_id, r.host_id, h.environment, h.host_version, r.version, r.state, r.reason_code, r.reason, r.reported_at
FROM load_reports r JOIN hosts h ON h.host_id = r.host_id
ORDER BY r.plugin_id, r.host_id;
