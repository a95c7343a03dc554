-- Room kept in each review's row for its decision. Reviews are appended in the
-- order they are asked, so the table's pages are full; a decision adds its
-- entry and receipt (about 860 bytes) to the review, and a row that grows on a
-- full page makes SQLite rebalance that page with its neighbours: four pages
-- written a decision instead of one. A review is now stored with this many
-- zero bytes beside it (row.rs: ROOM), and each change gives back what its
-- review grew by, so the row keeps its size and its page is rewritten in
-- place. Rows stored before keep none. SQLite only: PostgreSQL writes a new
-- version of a changed row in any case.
ALTER TABLE reviews ADD COLUMN spare BLOB;
