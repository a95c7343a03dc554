-- Reviews: the stored MPLP review (confirm + target) and the columns that list filters use.
CREATE TABLE reviews (
    id           TEXT PRIMARY KEY,      -- the confirm_id
    status       TEXT NOT NULL,         -- pending | approved | rejected | cancelled
    target_type  TEXT NOT NULL,
    requester    TEXT NOT NULL,         -- requested_by_role
    requested_at TEXT NOT NULL,         -- UTC, fixed width, so text order is time order
    search       TEXT NOT NULL,         -- lowercased title, objective, reason, requester
    doc          TEXT NOT NULL,         -- the review as JSON
    version      BIGINT NOT NULL,      -- bumped by every change (compare-and-swap)
    created_by   TEXT NOT NULL,         -- the agent key that created it
    updated_at   TEXT NOT NULL
);
CREATE INDEX reviews_by_time ON reviews (requested_at, id);
CREATE INDEX reviews_by_status ON reviews (status, requested_at, id);

-- One row per (API key, Idempotency-Key): the first result of a decision post.
CREATE TABLE decision_requests (
    key_id     TEXT NOT NULL,
    idem_key   TEXT NOT NULL,
    review_id  TEXT NOT NULL,
    request    TEXT NOT NULL,
    response   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (key_id, idem_key)
);

-- The change feed behind live updates and long polls (shared by every server instance).
CREATE TABLE changes (
    seq       BIGSERIAL PRIMARY KEY,
    review_id TEXT NOT NULL,
    kind      TEXT NOT NULL,            -- review.created | review.decided | review.resubmitted
    status    TEXT NOT NULL,
    at        TEXT NOT NULL
);

-- API keys, stored as SHA-256 hashes of the secret.
CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,           -- agent | reviewer
    roles      TEXT NOT NULL,           -- JSON array of decided_by_role values (reviewer keys)
    label      TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
