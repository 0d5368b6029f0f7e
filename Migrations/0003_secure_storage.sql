-- 0003: secure storage, the encrypted plug-in secrets (`plugboard secret …`, `plugboard keys …`, the host's
-- SecureStorage SPI).
--
-- Envelope encryption (README "Secure storage"): a master key (KEK) that never reaches the board wraps each
-- plug-in's data keys (DEKs); each value is sealed with AES-256-GCM under its plug-in's data key, bound by its
-- associated data to the plug-in id, the key name and the data key version. These tables hold ONLY what is safe
-- to store: a key check value, wrapped data keys and sealed values. No plaintext value and no unwrapped key is
-- ever written here, nor to the WAL: encryption happens in memory before any row is written.
--
-- Key names (`secret_values.key`) are NOT secret: they are stored in clear, shown by `plugboard secret list` and
-- written to the audit log. Values are secret.
--
-- Values and data keys exist only for registered plug-ins: plugin_id references plugins(id). Should a plug-in
-- ever be removed from the board, its data keys and values go with it (ON DELETE CASCADE; the board runs with
-- PRAGMA secure_delete, so the deleted bytes are overwritten with zeros).
--
-- Byte formats (see Envelope and MasterKey in Sources/PlugboardSecureStorage): every blob starts with a format
-- byte 0x01; wrapped keys and sealed values continue with a 12-byte nonce, the ciphertext and a 16-byte tag.

-- The master key's key check value: one row, written by `plugboard init` (or `plugboard keys init`) and replaced
-- by each master-key rotation. Every secure-storage operation compares it with the master key first, so a wrong
-- key is refused before anything is read or written.
--   id               always 1: the table holds at most one row
--   key_check_value  33 bytes: 0x01 || HMAC-SHA256(HKDF(master key, "plugboard/kek/check/v1"),
--                    "plugboard/key-check/v1"). Reveals nothing about the key; bytes 2-9 in hex are the key's
--                    non-secret id, as printed by the CLI (lower(hex(substr(key_check_value, 2, 8))))
--   updated_at       when the master key was set or last rotated
CREATE TABLE secret_master_key (
    id              INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    key_check_value BLOB NOT NULL CHECK (length(key_check_value) = 33),
    updated_at      TEXT NOT NULL
);

-- Each plug-in's data keys, versioned. At most one is active and seals new values; retired ones still open the
-- values sealed with them; shredded ones are destroyed (wrapped_key erased) and open nothing.
--   plugin_id         the plug-in that owns the key
--   version           1, 2, 3 … increasing by one with each rotation, never reused
--   state             'active' (seals new values), 'retired' (only opens older values) or 'shredded' (destroyed)
--   wrapped_key       61 bytes: the data key encrypted under the master key with AES-256-GCM, bound to
--                     (plugin_id, version) by its associated data; NULL exactly when the key is shredded
--   encryption_count  how many values this key has sealed; the key is rotated before it reaches the engine's
--                     threshold (2^30 by default, far below the AES-GCM random-nonce limit of 2^32)
--   created_at        when the key was created
--   retired_at        when it stopped being active (retired or shredded); NULL while active
CREATE TABLE secret_data_keys (
    plugin_id        TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
    version          INTEGER NOT NULL CHECK (version >= 1),
    state            TEXT NOT NULL CHECK (state IN ('active', 'retired', 'shredded')),
    wrapped_key      BLOB CHECK (wrapped_key IS NULL OR length(wrapped_key) = 61),
    encryption_count INTEGER NOT NULL DEFAULT 0 CHECK (encryption_count >= 0),
    created_at       TEXT NOT NULL,
    retired_at       TEXT,
    PRIMARY KEY (plugin_id, version),
    CHECK ((state = 'shredded') = (wrapped_key IS NULL)),
    CHECK ((state = 'active') = (retired_at IS NULL))
) WITHOUT ROWID;

-- One active data key per plug-in.
CREATE UNIQUE INDEX secret_data_keys_one_active ON secret_data_keys (plugin_id) WHERE state = 'active';

-- The sealed values.
--   plugin_id         the plug-in whose namespace holds the value (the host binds it; a plug-in cannot name another)
--   key               the key name, Unicode NFC, 1-256 bytes, no control characters; NOT secret (stored in clear)
--   data_key_version  the version of the plug-in's data key that sealed the value
--   sealed            0x01 || nonce (12) || AES-256-GCM ciphertext (as long as the value) || tag (16); the
--                     associated data binds it to (plugin_id, key, data_key_version), so a blob copied to another
--                     row does not open. The length of a value is not hidden
--   updated_at        when the value was last set or re-encrypted
CREATE TABLE secret_values (
    plugin_id        TEXT NOT NULL,
    key              TEXT NOT NULL CHECK (length(key) >= 1),
    data_key_version INTEGER NOT NULL,
    sealed           BLOB NOT NULL CHECK (length(sealed) >= 29),
    updated_at       TEXT NOT NULL,
    PRIMARY KEY (plugin_id, key),
    FOREIGN KEY (plugin_id, data_key_version) REFERENCES secret_data_keys(plugin_id, version) ON DELETE CASCADE
) WITHOUT ROWID;

-- For auditors: every stored secret with the state of the data key that sealed it (never the value).
--   readable  0 when the data key was shredded: the value can no longer be decrypted
CREATE VIEW secret_inventory AS
SELECT v.plugin_id, v.key, v.data_key_version, k.state AS data_key_state,
       CASE WHEN k.state = 'shredded' THEN 0 ELSE 1 END AS readable, v.updated_at
FROM secret_values v
JOIN secret_data_keys k ON k.plugin_id = v.plugin_id AND k.version = v.data_key_version
ORDER BY v.plugin_id, v.key;
