-- 0008: hosts on other machines report through `plugboard serve`; each report says where the host read the board.
--
-- source is NULL for a host that opened the board file itself, and otherwise a short phrase such as
-- "served by https://flags.example.com" or "a cached snapshot of 2026-11-23T10:00:00Z (server unreachable)".

ALTER TABLE hosts ADD COLUMN source TEXT;

DROP VIEW plugin_load_status;
CREATE VIEW plugin_load_status AS
SELECT r.plugin_id, r.host_id, h.environment, h.host_version, h.source, r.version, r.state, r.reason_code, r.reason, r.warning,
       r.reported_at
FROM load_reports r JOIN hosts h ON h.host_id = r.host_id
ORDER BY r.plugin_id, r.host_id;
