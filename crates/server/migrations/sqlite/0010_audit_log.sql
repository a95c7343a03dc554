-- The tamper-evident audit chain: one entry per change, written in the
-- change's own transaction. Each entry's hash covers the previous entry's
-- hash, its own position and its body, so an edited, removed or reordered
-- entry breaks every link after it (`countersign audit verify`).
CREATE TABLE audit_log (
    seq  INTEGER PRIMARY KEY,   -- 1, 2, 3... with no gaps
    body TEXT NOT NULL,         -- RFC 8785 canonical JSON of the change
    hash TEXT NOT NULL          -- hex SHA-256 of: previous hash, "\n", seq, "\n", body
);
