-- 0016: protected environments, change requests and approvals.
--
-- An environment with approvals > 0 is protected: an operation that can start or widen what runs there becomes a
-- change request instead of being applied. A request stores the operation as it travels in the operations API: its
-- name and its canonical JSON body (sorted keys); its digest is the SHA-256, in lower-case hex, of
-- "plugboard-change-v1\n" + operation + "\n" + body. base records the state of the rows a rehearsal of the operation
-- touched (sorted lines `table<TAB>key<TAB>digest`, `-` for a row that did not exist, digests as the state proof has
-- them); diff the audit entries the rehearsal would have written (JSON). Each approval records the digest and the base
-- it approved: applying is refused when the rows moved since.
-- A request is open, scheduled (approved or not, with a time), applied, rejected or cancelled. An emergency is a
-- request applied at once by an admin, with a reason, shown until another admin acknowledges it.
-- approvers are the Ed25519 keys whose signatures over a change's digest count as signed approvals; a release enabled
-- in an environment whose policy requires signed approvals carries them (enablement_approvals), and hosts check them.
-- Every table here is policy: each change is audited and the state proof covers its rows.

CREATE TABLE approval_policies (
    environment TEXT PRIMARY KEY NOT NULL REFERENCES environments(name),
    approvals   INTEGER NOT NULL CHECK (typeof(approvals) = 'integer' AND approvals BETWEEN 0 AND 10),
    signed      TEXT NOT NULL DEFAULT 'off' CHECK (signed IN ('off', 'require')),
    updated_at  TEXT NOT NULL,
    updated_by  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE change_requests (
    id               INTEGER PRIMARY KEY CHECK (id > 0),
    operation        TEXT NOT NULL CHECK (length(operation) BETWEEN 1 AND 64),
    body             TEXT NOT NULL CHECK (length(body) <= 1048576),
    digest           TEXT NOT NULL CHECK (length(digest) = 64),
    environment      TEXT,
    summary          TEXT NOT NULL,
    author           TEXT NOT NULL,
    required         INTEGER NOT NULL CHECK (typeof(required) = 'integer' AND required BETWEEN 0 AND 10),
    signed           INTEGER NOT NULL DEFAULT 0 CHECK (signed IN (0, 1)),
    author_applies   INTEGER NOT NULL DEFAULT 0 CHECK (author_applies IN (0, 1)),
    state            TEXT NOT NULL CHECK (state IN ('open', 'scheduled', 'applied', 'rejected', 'cancelled')),
    base             TEXT NOT NULL,
    diff             TEXT NOT NULL,
    scheduled_at     TEXT,
    opened_at        TEXT NOT NULL,
    closed_at        TEXT,
    closed_by        TEXT,
    close_reason     TEXT,
    result           TEXT,
    emergency        INTEGER NOT NULL DEFAULT 0 CHECK (emergency IN (0, 1)),
    acknowledged_at  TEXT,
    acknowledged_by  TEXT
);

CREATE INDEX change_requests_by_state ON change_requests (state, id);

CREATE TABLE change_approvals (
    change_id   INTEGER NOT NULL REFERENCES change_requests(id),
    principal   TEXT NOT NULL,
    digest      TEXT NOT NULL CHECK (length(digest) = 64),
    base        TEXT NOT NULL,
    comment     TEXT,
    key_id      TEXT CHECK (key_id IS NULL OR length(key_id) = 16),
    signature   TEXT,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (change_id, principal)
) WITHOUT ROWID;

CREATE TABLE approvers (
    key_id        TEXT PRIMARY KEY NOT NULL CHECK (length(key_id) = 16),
    principal     TEXT NOT NULL,
    public_key    TEXT NOT NULL,
    added_at      TEXT NOT NULL,
    added_by      TEXT NOT NULL,
    revoked_at    TEXT,
    revoked_by    TEXT,
    revoke_reason TEXT
) WITHOUT ROWID;

-- The signed approvals of the change that enabled a plug-in in an environment whose policy requires them: the
-- operation and body approved, its digest, and the approvers' signatures (JSON array of {key_id, signature}).
CREATE TABLE enablement_approvals (
    plugin_id   TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
    environment TEXT NOT NULL REFERENCES environments(name),
    change_id   INTEGER NOT NULL,
    operation   TEXT NOT NULL,
    body        TEXT NOT NULL,
    digest      TEXT NOT NULL CHECK (length(digest) = 64),
    signatures  TEXT NOT NULL,
    PRIMARY KEY (plugin_id, environment)
) WITHOUT ROWID;
