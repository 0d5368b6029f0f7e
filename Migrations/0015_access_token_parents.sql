-- 0015: the access token that made an access token. A token created through the admin API with another access token
-- (a person's laptop token making one for a CI job) records that token as its parent: (parent_principal, parent_name)
-- names a row of this table. It expires no later than its parent, and revoking the parent revokes it, and what it made,
-- in the same change. Both are NULL for a token made on the board's machine (by an OS user), which has no parent.
-- access_tokens is a table of policy: on a board with tokens its rows' digests change with the new columns, so the
-- migration runner records a board.baseline row.

ALTER TABLE access_tokens ADD COLUMN parent_principal TEXT;
ALTER TABLE access_tokens ADD COLUMN parent_name TEXT;

CREATE INDEX access_tokens_by_parent ON access_tokens (parent_principal, parent_name) WHERE parent_principal IS NOT NULL;
