-- 0022: webhook endpoints, which receive the audit log's rows as signed events.
--
-- webhooks is policy (every change is audited and the state proof covers it): where events go, which ones, in what
-- format, and the endpoint's secret sealed under the board's master key (never in plaintext). webhook_signing_keys
-- holds the board's one Ed25519 key that signs every delivery (v1a): its public half in clear, for receivers to pin,
-- its private half sealed. webhook_deliveries is runtime data written by delivery without an audit row: the cursor
-- (the last audit seq an endpoint acknowledged), the attempts of the event it waits on and when the next one is due,
-- and since when it has been failing.
CREATE TABLE webhooks (
    name          TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
    url           TEXT NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    events        TEXT NOT NULL DEFAULT '*' CHECK (length(events) BETWEEN 1 AND 1024),
    environment   TEXT CHECK (environment IS NULL OR length(environment) BETWEEN 1 AND 64),
    format        TEXT NOT NULL CHECK (format IN ('standard', 'slack', 'teams', 'datadog')),
    enabled       INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    secret_sealed BLOB NOT NULL,
    created_at    TEXT NOT NULL,
    created_by    TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE webhook_signing_keys (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    public_key     TEXT NOT NULL CHECK (length(public_key) BETWEEN 1 AND 128),
    private_sealed BLOB NOT NULL,
    created_at     TEXT NOT NULL,
    created_by     TEXT NOT NULL
);

CREATE TABLE webhook_deliveries (
    name            TEXT PRIMARY KEY,
    cursor          INTEGER NOT NULL CHECK (cursor >= 0),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at TEXT,
    failing_since   TEXT,
    last_status     INTEGER,
    last_error      TEXT CHECK (last_error IS NULL OR length(last_error) <= 512),
    last_attempt_at TEXT
) WITHOUT ROWID;
