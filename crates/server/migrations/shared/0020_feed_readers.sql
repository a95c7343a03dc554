-- Readers of the change feed that act outside (Countersign's Slack bot,
-- its mailer): each one's place in the feed and the instance whose turn it
-- is to read (one at a time, for a lease), so what one reader sends is sent
-- in order and by one instance.
CREATE TABLE feed_readers (
    id           TEXT PRIMARY KEY,
    position     BIGINT NOT NULL,
    holder       TEXT NOT NULL,
    lease_until  TEXT NOT NULL
);

-- Each review's message in Slack (`serve --slack-bot-token-file`), updated
-- after every decision whatever the channel it came from.
CREATE TABLE slack_messages (
    review_id  TEXT NOT NULL,
    channel    TEXT NOT NULL,
    ts         TEXT NOT NULL,
    posted_at  TEXT NOT NULL,
    PRIMARY KEY (review_id, channel)
);
