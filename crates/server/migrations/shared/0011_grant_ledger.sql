-- The grants ledger: a grant is revoked (by which reviewer key, when) rather
-- than deleted, and counts the calls it approved without asking.
ALTER TABLE scope_grants ADD COLUMN revoked_at TEXT;
ALTER TABLE scope_grants ADD COLUMN revoked_by TEXT;
ALTER TABLE scope_grants ADD COLUMN uses BIGINT NOT NULL DEFAULT 0;
