-- A redelivered audit record is recognised by its id (see appendToChains). The lookup used
-- (tenant_id, id) with both columns matched against arrays: Postgres 15 probes every pair,
-- and once the day's partition had statistics the planner chose a full scan of the day
-- instead (a cost that grows with the day's records). Ids are unique across tenants (they
-- carry a random session or record id), so the index is on id alone and the lookup probes
-- each id once; the writer still matches (tenant, id) pairs exactly.
-- On a database holding months of records this builds an index over every daily partition
-- in the migration's transaction, and the sink's writes wait for it (records queue in Redis
-- meanwhile, nothing is lost). A large installation can build it beforehand without
-- blocking: CREATE INDEX audit_records_by_id ON ONLY audit_records (id), then for each
-- partition CREATE INDEX CONCURRENTLY on (id) and ALTER INDEX audit_records_by_id ATTACH
-- PARTITION it; this migration then finds the index in place.
CREATE INDEX IF NOT EXISTS audit_records_by_id ON audit_records (id);
DROP INDEX IF EXISTS audit_records_id;
