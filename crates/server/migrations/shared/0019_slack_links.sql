-- Reviewers' Slack accounts. A click in Slack decides only for a person
-- linked here, and a link needs both sides: a code Countersign sent to that
-- Slack user alone (kept as a SHA-256 hash, taken once, for 10 minutes),
-- redeemed by the person signed in to the desk.
CREATE TABLE slack_link_codes (
    hash        TEXT PRIMARY KEY,
    team_id     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);

CREATE TABLE slack_links (
    team_id     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL,
    person_id   TEXT NOT NULL REFERENCES people (id),
    linked_at   TEXT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX slack_links_by_person ON slack_links (person_id);
