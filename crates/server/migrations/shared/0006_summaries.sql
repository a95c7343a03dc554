-- What a list row shows of each review (a `ReviewSummary` as JSON), written
-- with the review, so a page of the list is read without its documents.
-- Reviews stored before this column are summarized when read.
ALTER TABLE reviews ADD COLUMN summary TEXT;
