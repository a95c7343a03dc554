-- Escalation: when a pending review is escalated if nobody has decided it
-- (its policy rule's escalate_after, fixed when asked). NULL once escalated
-- or decided, so the index holds only what the sweeper may have to do.
ALTER TABLE reviews ADD COLUMN escalate_at TEXT;
CREATE INDEX reviews_escalating ON reviews (escalate_at) WHERE escalate_at IS NOT NULL;

-- Webhooks: each endpoint's signing secret and the last change feed entry
-- turned into its deliveries. The feed entry is written in the change's own
-- transaction, so the feed is the outbox: nothing committed is ever missed.
CREATE TABLE webhooks (
    url        TEXT PRIMARY KEY,
    secret     TEXT NOT NULL,
    position   BIGINT NOT NULL,
    created_at TEXT NOT NULL
);

-- One delivery per (webhook, change), sent at least once, retried with
-- backoff for up to a day; its id is what receivers deduplicate on.
CREATE TABLE webhook_deliveries (
    id         TEXT PRIMARY KEY,
    url        TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    review_id  TEXT NOT NULL,
    body       TEXT NOT NULL,
    state      TEXT NOT NULL,           -- pending | sent | failed
    attempts   BIGINT NOT NULL,
    next_at    TEXT NOT NULL,           -- when to try (again); a claim moves it on
    last_error TEXT,
    created_at TEXT NOT NULL,
    sent_at    TEXT,
    UNIQUE (url, seq)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (created_at);
