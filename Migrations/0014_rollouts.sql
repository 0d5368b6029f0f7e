-- 0014: staged rollouts of a release. One row per plug-in and environment: the release rolled out (version), the
-- release hosts ran before it (previous), the percentages of hosts of each step (steps, a JSON array, increasing, the
-- last 100), the current step (an index into steps) and the state. A host decides for itself whether it is in the
-- cohort of the current step, from a stable hash of the plug-in id and its own host id. The row stays when the rollout
-- ends: a completed rollout lets every host run version, an aborted one keeps every host on previous, and a later
-- release of the plug-in waits for a rollout of its own. Steps advance on schedule (every_seconds after
-- step_started_at) while the guard holds: the guard aborts the rollout when more than max_failure_bp (basis points of
-- hosts, 500 = 5%) of at least min_hosts hosts that loaded version failed. history is a JSON array with one object per
-- step reached (percent, when, by whom, and the guard's figures when the step ended).
-- rollouts is a table of policy: each change is audited, and the state proof covers its rows.

CREATE TABLE rollouts (
    plugin_id       TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
    environment     TEXT NOT NULL REFERENCES environments(name),
    version         TEXT NOT NULL,
    previous        TEXT,
    steps           TEXT NOT NULL,
    step            INTEGER NOT NULL CHECK (typeof(step) = 'integer' AND step >= 0),
    state           TEXT NOT NULL CHECK (state IN ('running', 'paused', 'completed', 'aborted')),
    every_seconds   INTEGER NOT NULL CHECK (typeof(every_seconds) = 'integer' AND every_seconds BETWEEN 1 AND 31536000),
    max_failure_bp  INTEGER NOT NULL CHECK (typeof(max_failure_bp) = 'integer' AND max_failure_bp BETWEEN 0 AND 10000),
    min_hosts       INTEGER NOT NULL CHECK (typeof(min_hosts) = 'integer' AND min_hosts BETWEEN 1 AND 1000000),
    step_started_at TEXT NOT NULL,
    started_at      TEXT NOT NULL,
    started_by      TEXT NOT NULL,
    ended_at        TEXT,
    ended_by        TEXT,
    end_reason      TEXT,
    history         TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (plugin_id, environment),
    FOREIGN KEY (plugin_id, version) REFERENCES plugin_versions(plugin_id, version)
) WITHOUT ROWID;
