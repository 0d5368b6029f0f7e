-- 0013: releases of hosts' quarantines. A host quarantines a release that keeps crashing it in its own state folder;
-- a row here tells that host (host_id) to lift its quarantine of plugin_id@version when the quarantine was recorded
-- before released_at. A later release of the same host and release replaces the row. The row does not stop future
-- crashes from quarantining the release again.
-- quarantine_releases is a table of policy: each change is audited and the state proof covers its rows.

CREATE TABLE quarantine_releases (
    host_id     TEXT NOT NULL CHECK (length(host_id) BETWEEN 1 AND 255),
    plugin_id   TEXT NOT NULL,
    version     TEXT NOT NULL,
    released_at TEXT NOT NULL,
    released_by TEXT NOT NULL,
    reason      TEXT,
    PRIMARY KEY (host_id, plugin_id, version),
    FOREIGN KEY (plugin_id, version) REFERENCES plugin_versions(plugin_id, version)
) WITHOUT ROWID;
