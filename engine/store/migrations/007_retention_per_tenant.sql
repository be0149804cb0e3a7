-- Which part of each tenant's chain retention has destroyed: the highest seq of the
-- tenant's records in every dropped partition. A verifier may then start a tenant's
-- chain without its predecessor only where that predecessor was dropped, not wherever
-- a record happens to be missing once retention has ever run.
CREATE TABLE IF NOT EXISTS audit_retention_tenants (
  tenant_id            text PRIMARY KEY,
  dropped_through_seq  bigint NOT NULL,
  updated_at           timestamptz NOT NULL DEFAULT now()
);
