-- The links Countersign's e-mails carry (`serve --smtp-url`). Each is bound
-- to one request, the one address it was sent to and an expiry, and kept as
-- a SHA-256 hash; opening it decides nothing, and it counts for one decision,
-- made in the desk by the person signed in with that address.
CREATE TABLE mail_links (
    hash        TEXT PRIMARY KEY,
    review_id   TEXT NOT NULL,
    email       TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
