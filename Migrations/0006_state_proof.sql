-- 0006: the audit log proves the board's state, not only itself.
--
-- Every audit row from here on carries the digests of the rows its change left behind (`state_changes`: sorted
-- lines `table<TAB>key<TAB>digest`, `-` for a removed row) and the board-wide state root after it (`state_root`),
-- both inside the row's hash (chain format plugboard-audit-v2). The runner records a `board.baseline` row with the
-- digests of every row that exists when this migration is applied. `plugboard audit verify` replays the digests and
-- compares them with the rows; the store's DocC article "Reading the board" gives the encoding and a script.
--
-- state_digests and state_buckets are an index of the log's digests kept in the same transactions, so that a host
-- can check the rows it relies on without replaying the log. They prove nothing on their own: `audit verify`
-- checks them against the log.

ALTER TABLE audit_log ADD COLUMN state_changes TEXT;
ALTER TABLE audit_log ADD COLUMN state_root TEXT CHECK (state_root IS NULL OR length(state_root) = 64);

CREATE TABLE state_digests (
    tbl    TEXT NOT NULL,
    key    TEXT NOT NULL,
    bucket INTEGER NOT NULL CHECK (bucket BETWEEN 0 AND 255),
    digest TEXT NOT NULL CHECK (length(digest) = 64),
    PRIMARY KEY (tbl, key)
) WITHOUT ROWID;

CREATE INDEX state_digests_by_bucket ON state_digests (bucket, tbl, key);

CREATE TABLE state_buckets (
    bucket INTEGER PRIMARY KEY CHECK (bucket BETWEEN 0 AND 255),
    hash   TEXT NOT NULL CHECK (length(hash) = 64)
);
