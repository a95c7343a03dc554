-- Devices paired from a reviewer key (Settings > Add a device): each gets its
-- own reviewer key with the same roles and owner, listed by device name with
-- its last use, and revocable on its own. The pairing key never leaves the
-- first device.
ALTER TABLE api_keys ADD COLUMN paired_from TEXT;   -- the key that paired it
ALTER TABLE api_keys ADD COLUMN device TEXT;        -- the name the device gave
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;  -- updated at most once a minute

-- One-time pairing codes: only a SHA-256 hash is kept; a code works once,
-- within minutes. A used code is kept until it would have expired, so that
-- using it again is told "already used" rather than "unknown".
CREATE TABLE pairing_codes (
    hash       TEXT PRIMARY KEY,
    key_id     TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
);
