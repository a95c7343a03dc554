-- Reviewers who sign in with their organisation's identity provider (OpenID
-- Connect). A person is their issuer and subject; the name, e-mail address
-- and roles are as the provider gave them at the last sign-in or check.
CREATE TABLE people (
    id           TEXT PRIMARY KEY,      -- per_<hex>, public
    issuer       TEXT NOT NULL,
    subject      TEXT NOT NULL,
    name         TEXT,
    email        TEXT,
    created_at   TEXT NOT NULL,
    UNIQUE (issuer, subject)
);

-- A signed-in browser. Only a SHA-256 hash of the cookie's secret is kept.
-- `validated_at` is when the provider last confirmed the person and their
-- groups; past the server's bound the session is checked again before it may
-- act. Ended sessions are kept (with ended_at) so they can be listed.
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,     -- ses_<hex>, public: what decisions record
    hash          TEXT NOT NULL UNIQUE,
    person_id     TEXT NOT NULL REFERENCES people (id),
    provider      TEXT NOT NULL,        -- the configured provider's id
    roles         TEXT NOT NULL,        -- JSON array, from the person's groups
    csrf          TEXT NOT NULL,        -- the token state-changing requests carry
    refresh_token TEXT,                 -- to ask the provider again, when it gave one
    user_agent    TEXT,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    validated_at  TEXT NOT NULL,
    last_used_at  TEXT,
    ended_at      TEXT,
    ended_why     TEXT
);
CREATE INDEX sessions_by_person ON sessions (person_id, created_at);

-- A sign-in under way: its state (hashed), nonce and PKCE verifier, taken
-- once by the callback (a replayed state finds nothing).
CREATE TABLE sign_in_attempts (
    state_hash  TEXT PRIMARY KEY,
    browser     TEXT NOT NULL,          -- hash of the cookie that binds it to one browser
    provider    TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    verifier    TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
