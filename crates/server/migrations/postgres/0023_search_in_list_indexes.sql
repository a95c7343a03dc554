-- A text search that many reviews match walks the inbox's order (pending, what
-- expires first) until its page is full, checking each review's search text
-- (listing.rs). Read from the table, that is a page read per review: at
-- 1,000,000 reviews, "Plan 42" read 31,050 rows in 235-250 ms. With the text
-- in the order's index, PostgreSQL checks it there (an index-only scan) and
-- reads the table for the page's rows alone: 27-42 ms. A B-tree entry holds at
-- most 2,704 bytes, so this index holds the reviews whose text is at most
-- 2,000 bytes; the longer ones (a tool call's long arguments) are in an index
-- of their own, in the same order, which the search reads beside it.
CREATE INDEX reviews_by_deadline_searchable ON reviews (status, (COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id)
    INCLUDE (expires_at, search) WHERE octet_length(search) <= 2000;
CREATE INDEX reviews_by_deadline_long_search ON reviews (status, (COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id)
    WHERE octet_length(search) > 2000;
