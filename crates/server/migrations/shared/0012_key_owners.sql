-- Who a key belongs to (`countersign keys add --owner alice`): a person or a
-- team. Policies forbid the owner of an asking agent's key from approving
-- its request. NULL: the key stands for itself.
ALTER TABLE api_keys ADD COLUMN owner TEXT;
