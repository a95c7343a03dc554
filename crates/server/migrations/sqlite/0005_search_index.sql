-- Text search without a scan: an FTS5 index of `search` with the trigram
-- tokenizer, so a search of 3 characters or more still matches any substring
-- (as `LIKE '%text%'` does) but reads only the rows that hold it. It indexes
-- the reviews table's own column (external content, by rowid): reviews are
-- never VACUUMed, which could renumber rowids.
CREATE VIRTUAL TABLE reviews_search USING fts5(
    search, content = 'reviews', content_rowid = 'rowid', tokenize = 'trigram'
);
INSERT INTO reviews_search (reviews_search) VALUES ('rebuild');

CREATE TRIGGER reviews_search_insert AFTER INSERT ON reviews BEGIN
    INSERT INTO reviews_search (rowid, search) VALUES (new.rowid, new.search);
END;
CREATE TRIGGER reviews_search_delete AFTER DELETE ON reviews BEGIN
    INSERT INTO reviews_search (reviews_search, rowid, search) VALUES ('delete', old.rowid, old.search);
END;
CREATE TRIGGER reviews_search_update AFTER UPDATE OF search ON reviews
    WHEN old.search IS NOT new.search BEGIN
    INSERT INTO reviews_search (reviews_search, rowid, search) VALUES ('delete', old.rowid, old.search);
    INSERT INTO reviews_search (rowid, search) VALUES (new.rowid, new.search);
END;
