-- Reviews per status, kept by triggers, so a list answers its counts without
-- scanning every review.
CREATE TABLE review_counts (
    status TEXT PRIMARY KEY,
    n      BIGINT NOT NULL
);
INSERT INTO review_counts (status, n) SELECT status, COUNT(*) FROM reviews GROUP BY status;

CREATE FUNCTION count_review_status() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.status = NEW.status THEN
            RETURN NEW;
        END IF;
        UPDATE review_counts SET n = n - 1 WHERE status = OLD.status;
    END IF;
    INSERT INTO review_counts (status, n) VALUES (NEW.status, 1)
        ON CONFLICT (status) DO UPDATE SET n = review_counts.n + 1;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER reviews_counted AFTER INSERT OR UPDATE OF status ON reviews
    FOR EACH ROW EXECUTE FUNCTION count_review_status();
