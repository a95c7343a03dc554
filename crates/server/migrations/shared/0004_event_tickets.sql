-- Event-stream tickets: browsers' EventSource cannot send an Authorization
-- header, so a reviewer trades its key for a ticket that opens one stream.
-- Only a SHA-256 hash is stored; a ticket is spent (deleted) when used.
CREATE TABLE event_tickets (
    hash       TEXT PRIMARY KEY,
    key_id     TEXT NOT NULL,
    expires_at TEXT NOT NULL        -- UTC, fixed width
);
