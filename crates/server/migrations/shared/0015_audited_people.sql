-- Who may decide or be told is audited too (keys minted and revoked, devices
-- paired and unpaired, webhooks added). The subjects a chain has adopted as
-- they stood when it started recording them, once each.
CREATE TABLE audit_adopted (
    subject_type TEXT PRIMARY KEY,
    at           TEXT NOT NULL
);
