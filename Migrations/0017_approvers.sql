-- 0017: who may approve a change request, and the person behind each approval.
--
-- approval_policies.approvers says who may approve (and reject) a request of the environment: 'default' (board admins,
-- and for a plug-in's change its owners and maintainers), 'admins', 'owners' (board admins and the plug-in's owners),
-- or the name of a principal group (principal_groups), whose members approve if they also hold the default right.
-- A request records the access token its author opened it with (author_token, NULL on the board's machine), and an
-- approval the token it was given with (token): the person behind each is the OS user who made the first token of
-- the token's chain as themselves, and the author's person and each approval's person must all differ; an approval
-- whose token (or a token it was made with) is revoked, or whose principal lost the right, no longer counts.
-- Every table here is policy: each change is audited and the state proof covers its rows.

ALTER TABLE approval_policies ADD COLUMN approvers TEXT NOT NULL DEFAULT 'default'
    CHECK (length(approvers) BETWEEN 1 AND 64);
ALTER TABLE change_requests ADD COLUMN author_token TEXT;
ALTER TABLE change_approvals ADD COLUMN token TEXT;

CREATE TABLE principal_groups (
    name      TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    principal TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 128),
    added_at  TEXT NOT NULL,
    added_by  TEXT NOT NULL,
    PRIMARY KEY (name, principal)
) WITHOUT ROWID;
