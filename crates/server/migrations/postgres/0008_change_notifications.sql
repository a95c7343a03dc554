-- Every statement that stores changes notifies the instances listening on
-- `countersign_changes` (sent when its transaction commits), so each instance's
-- feed reader learns of other instances' changes at once instead of polling.
CREATE FUNCTION announce_changes() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('countersign_changes', '');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER changes_announced AFTER INSERT ON changes
    FOR EACH STATEMENT EXECUTE FUNCTION announce_changes();
