-- The runner's own bookkeeping, applied before every pending migration (it is not a numbered migration, so adding
-- this file changed no board): which migration files a board has applied, with the SHA-256 of each.
--   version     the digits before the first `_` of the file name
--   file_name   the file in Migrations/
--   checksum    SHA-256 (hex) of the file's SQL; a board whose applied file changed is refused
--   applied_at  when it was applied (UTC ISO-8601)
--   applied_by  the OS user who applied it
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    file_name  TEXT NOT NULL,
    checksum   TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    applied_by TEXT NOT NULL
)
