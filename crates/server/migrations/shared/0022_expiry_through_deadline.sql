-- Expired tool calls are found through the index the inbox's order reads
-- (status, then the deadline: reviews_by_deadline, migration 0016). The
-- partial index on `expires_at` it replaces was passed over by SQLite's
-- planner for the equality on `status`, so each second's sweep read every
-- pending review (1.5 to 2.8 s at 1,000,000 reviews).
DROP INDEX reviews_expiring;
