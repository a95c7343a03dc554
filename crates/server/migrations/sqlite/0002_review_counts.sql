-- Reviews per status, kept by triggers, so a list answers its counts without
-- scanning every review.
CREATE TABLE review_counts (
    status TEXT PRIMARY KEY,
    n      INTEGER NOT NULL
);
INSERT INTO review_counts (status, n) SELECT status, COUNT(*) FROM reviews GROUP BY status;

CREATE TRIGGER reviews_counted_on_insert AFTER INSERT ON reviews
BEGIN
    INSERT INTO review_counts (status, n) VALUES (NEW.status, 1)
        ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER reviews_counted_on_status AFTER UPDATE OF status ON reviews
WHEN OLD.status <> NEW.status
BEGIN
    UPDATE review_counts SET n = n - 1 WHERE status = OLD.status;
    INSERT INTO review_counts (status, n) VALUES (NEW.status, 1)
        ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
