-- The decision a change recorded (a decision or an expiry), as JSON: who made
-- it, as what, and when. Webhooks and messages name the person from it; the
-- review's document holds the same record, but a later decision may follow it.
ALTER TABLE changes ADD COLUMN decision TEXT;
