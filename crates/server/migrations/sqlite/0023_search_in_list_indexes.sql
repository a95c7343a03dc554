-- A text search that many reviews match walks the list's order until its page
-- is full, checking each review's search text (listing.rs). With that text in
-- the order's index, SQLite checks it there and reads the table only for the
-- page's rows: at 1,000,000 reviews, "Plan 42" in the pending inbox read
-- 18,421 rows from the table (85 ms), and reads their index entries instead
-- (13 ms). Each index is the same order as before, its entries longer by
-- the search text. SQLite only: PostgreSQL plans its own indexes.
DROP INDEX reviews_by_deadline;
CREATE INDEX reviews_by_deadline ON reviews (status, (COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id, search);
DROP INDEX reviews_all_by_deadline;
CREATE INDEX reviews_all_by_deadline ON reviews ((COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id, search);
DROP INDEX reviews_by_status;
CREATE INDEX reviews_by_status ON reviews (status, requested_at, id, search);
DROP INDEX reviews_by_time;
CREATE INDEX reviews_by_time ON reviews (requested_at, id, search);
