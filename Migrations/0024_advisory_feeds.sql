-- 0024: advisory feeds this board subscribes to: signed, expiring feeds of OSV advisories that a publisher hosts as a
-- static file (plugboard advisory feed publish), fetched by plugboard serve at each feed's interval (or once by
-- plugboard advisory feed fetch), verified with the feed's trusted keys, and imported as the feed.
--
-- keys_json is the list of trusted Ed25519 public keys (base64 of the raw 32 bytes); a feed is taken when one of its
-- signatures verifies with one of them. sequence and head are those of the last feed applied: a feed whose sequence is
-- not greater is refused (a replay), or with the same head is unchanged. expires is that feed's expiry, applied_at when
-- it was applied. Every change of a row is audited (advisory-feed.subscribe, advisory-feed.unsubscribe,
-- advisory-feed.apply, whose after holds the feed's sequence, head and previous head).
CREATE TABLE advisory_feeds (
    name             TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
    url              TEXT NOT NULL UNIQUE CHECK (length(url) BETWEEN 1 AND 2048),
    keys_json        TEXT NOT NULL,
    interval_seconds INTEGER NOT NULL CHECK (interval_seconds BETWEEN 60 AND 604800),
    created_at       TEXT NOT NULL,
    created_by       TEXT NOT NULL,
    sequence         INTEGER,
    head             TEXT,
    expires          TEXT,
    applied_at       TEXT
) WITHOUT ROWID;
