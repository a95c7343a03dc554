-- Text search without a scan: a trigram index (pg_trgm, a trusted extension
-- shipped with PostgreSQL) over `search`, which `LIKE '%text%'` uses for a
-- search of 3 characters or more.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX reviews_search_trgm ON reviews USING gin (search gin_trgm_ops);
