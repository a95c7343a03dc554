-- Countersign's own messages in Slack (`serve --slack-bot-token-file`): the
-- bot's place in the change feed with the instance whose turn it is to post
-- (one at a time, for a lease), and each review's message, updated after
-- every decision whatever the channel it came from.
CREATE TABLE slack_poster (
    id           TEXT PRIMARY KEY,
    position     BIGINT NOT NULL,
    holder       TEXT NOT NULL,
    lease_until  TEXT NOT NULL
);

CREATE TABLE slack_messages (
    review_id  TEXT NOT NULL,
    channel    TEXT NOT NULL,
    ts         TEXT NOT NULL,
    posted_at  TEXT NOT NULL,
    PRIMARY KEY (review_id, channel)
);
