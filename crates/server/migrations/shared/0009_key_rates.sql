-- A key's own request rate (`countersign keys add --rate`, e.g. `20/s,200`);
-- NULL: its kind's default.
ALTER TABLE api_keys ADD COLUMN rate TEXT;
