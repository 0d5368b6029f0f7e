-- 0009: the audit log without an index on `hash`.
--
-- 0001 declared `hash` UNIQUE, which made SQLite keep an index of every row's hash. Nothing reads the log by hash
-- (rows are found by `seq`, target or actor), and a hash cannot repeat in a chain that verifies: each row's hash
-- covers its `seq` and the hash before it. The index cost every audited change a write to a random page of it,
-- which misses the cache once the log is long (on a log of 1,000,000 rows, a secure put's SQL took 194-199 us with it
-- and 175-181 us without), and 15 % of the file.
--
-- SQLite cannot drop an index that a UNIQUE constraint made, so the table is made again with the same columns,
-- rows, indexes, append-only triggers and view, in this migration's one transaction. The rows are copied as they
-- are: the chain, its hashes and every later `audit verify` are unchanged. On a log of 1,000,000 rows it takes
-- seconds, and the old table's pages stay in the file as free pages that later rows reuse (`VACUUM` returns them
-- to the file system).

DROP VIEW audit_trail;

CREATE TABLE audit_log_rebuilt (
    seq           INTEGER PRIMARY KEY,
    at            TEXT NOT NULL,
    actor         TEXT NOT NULL,
    on_behalf_of  TEXT,
    action        TEXT NOT NULL,
    outcome       TEXT NOT NULL CHECK (outcome IN ('ok', 'refused')),
    target_type   TEXT NOT NULL,
    target_id     TEXT,
    environment   TEXT,
    reason        TEXT,
    before_json   TEXT,
    after_json    TEXT,
    prev_hash     TEXT NOT NULL CHECK (length(prev_hash) = 64),
    hash          TEXT NOT NULL CHECK (length(hash) = 64),
    state_changes TEXT,
    state_root    TEXT CHECK (state_root IS NULL OR length(state_root) = 64)
);

INSERT INTO audit_log_rebuilt (seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment, reason,
                               before_json, after_json, prev_hash, hash, state_changes, state_root)
SELECT seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment, reason,
       before_json, after_json, prev_hash, hash, state_changes, state_root
FROM audit_log ORDER BY seq;

-- Dropping a table drops its triggers first, so the append-only triggers do not refuse this. The board zeroes freed
-- pages (`secure_delete`); here every freed page would first be copied into the statement journal, which the board
-- keeps in memory: as much memory as the old table. These pages hold the same audit rows as the new table, nothing
-- secret, so they are freed without zeroing, and the migration runner turns `secure_delete` back on after every
-- migration, whether it succeeded or not.
PRAGMA secure_delete = OFF;
DROP TABLE audit_log;
ALTER TABLE audit_log_rebuilt RENAME TO audit_log;

CREATE INDEX audit_log_by_target ON audit_log (target_type, target_id, seq);
CREATE INDEX audit_log_by_actor ON audit_log (actor, seq);

-- The same SQL as 0001's: `audit verify` compares them.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be updated');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be deleted');
END;

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
