-- The inbox's indexes hold the pending reviews only. An index led by the
-- status moved each decided review's entry from the pending part to the
-- decided part, and an entry put between others lands on a full page, which
-- SQLite splits with its neighbours: about four pages written for each of
-- those two indexes a decision. Out of a partial index a decided review is
-- only taken (one page). The decided reviews of a status are found through
-- their own index in the inbox's order (the status tabs'), without the search
-- text, whose entries are short; other orders walk the indexes of every review
-- (0023) and check the status in the row.
--
-- Beside them, a requester's pending reviews in each order: SQLite keeps no
-- statistics, and paged "pending, asked by agent-3" by walking every pending
-- review and reading each one's row: at 1,000,000 pending reviews, 107,000
-- rows before that agent's first (270 ms a page).
--
-- Statements name the status as a literal (listing.rs): SQLite uses a
-- partial index only when it can see the condition holds. SQLite only:
-- PostgreSQL plans from its statistics and rewrites a changed row anyway.
DROP INDEX reviews_by_status;
DROP INDEX reviews_by_deadline;
CREATE INDEX reviews_pending_by_time ON reviews (requested_at, id, search) WHERE status = 'pending';
CREATE INDEX reviews_pending_by_deadline ON reviews ((COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id, search) WHERE status = 'pending';
CREATE INDEX reviews_pending_by_requester ON reviews (requester, requested_at, id) WHERE status = 'pending';
CREATE INDEX reviews_pending_by_requester_deadline ON reviews (requester, (COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id) WHERE status = 'pending';
CREATE INDEX reviews_decided_by_deadline ON reviews (status, (COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id) WHERE status <> 'pending';
