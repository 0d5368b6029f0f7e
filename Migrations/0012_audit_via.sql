-- 0012: how a change arrived. A change made through the admin API (plugboard serve --admin) is recorded with its
-- principal as the actor and, in via, the access token's name and the client's address: `token NAME from ADDRESS`.
-- Rows with via are chain format v3 (plugboard-audit-v3): the v2 fields, then via. Rows without it keep v1 or v2.

ALTER TABLE audit_log ADD COLUMN via TEXT CHECK (via IS NULL OR length(via) BETWEEN 1 AND 512);
