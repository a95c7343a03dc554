-- The requester filter and the list of requesters read this index: a
-- requester's reviews in time order, and each distinct requester in a few
-- lookups (a skip scan), whatever the number of reviews.
CREATE INDEX reviews_by_requester ON reviews (requester, requested_at, id);
