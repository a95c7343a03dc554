-- The inbox's default order, what expires first: the soonest deadline first,
-- then the requests without one (a far-future stand-in), each in request
-- order. `listing.rs` writes the same expression so these indexes serve it,
-- by status and across statuses, a page at a time.
CREATE INDEX reviews_by_deadline ON reviews (status, (COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id);
CREATE INDEX reviews_all_by_deadline ON reviews ((COALESCE(expires_at, '9999-12-31T23:59:59.999999Z')), requested_at, id);
