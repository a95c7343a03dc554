-- Tool-call approvals: when a pending request expires (the server closes it as
-- denied), and the scope grants that approve later calls without asking.
ALTER TABLE reviews ADD COLUMN expires_at TEXT;   -- UTC, fixed width; tool calls only
ALTER TABLE reviews ADD COLUMN approval_id TEXT;  -- tool calls only: one review per approvalId
CREATE UNIQUE INDEX reviews_by_approval ON reviews (approval_id);
CREATE INDEX reviews_expiring ON reviews (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;

CREATE TABLE scope_grants (
    grant_id   TEXT PRIMARY KEY,
    review_id  TEXT NOT NULL,          -- the approval that made it
    tool_name  TEXT NOT NULL,
    doc        TEXT NOT NULL,          -- the grant as JSON
    created_at TEXT NOT NULL
);
CREATE INDEX scope_grants_by_tool ON scope_grants (tool_name);
