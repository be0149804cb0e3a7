-- Vouchers made together (a console batch, a CSV import) share a batch id, so
-- an operator can print or export what one action made. A match-day voucher
-- carries a validity window: before valid_from it is refused without a use,
-- after valid_until it is expired. Older vouchers have none of the three.
ALTER TABLE vouchers ADD COLUMN IF NOT EXISTS batch_id text;
ALTER TABLE vouchers ADD COLUMN IF NOT EXISTS valid_from timestamptz;
ALTER TABLE vouchers ADD COLUMN IF NOT EXISTS valid_until timestamptz;
CREATE INDEX IF NOT EXISTS vouchers_tenant_batch ON vouchers (tenant_id, batch_id, id) WHERE batch_id IS NOT NULL;
