-- 0018: what an approver signs binds the request and the moment it was opened.
--
-- opened_seq is the audit log's head (its last seq) when the request was opened. An approver signs
-- "plugboard-approval-v2\n" + digest + "\n" + request id + "\n" + opened_seq + "\n": a signature kept from one request
-- never counts for another, even for the very same change (a plug-in disabled, then enabled again), since no two
-- requests share a number and an opening moment. An enablement carries both, and hosts verify the signatures over them.
-- Requests opened before this migration have none: their approvals sign "plugboard-approval-v1\n" + digest + "\n".
ALTER TABLE change_requests ADD COLUMN opened_seq INTEGER
    CHECK (opened_seq IS NULL OR (typeof(opened_seq) = 'integer' AND opened_seq >= 0));
ALTER TABLE enablement_approvals ADD COLUMN opened_seq INTEGER
    CHECK (opened_seq IS NULL OR (typeof(opened_seq) = 'integer' AND opened_seq >= 0));
