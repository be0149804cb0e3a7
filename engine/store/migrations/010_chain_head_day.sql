-- The partition day of a chain's last record. A record is filed under the UTC day of its
-- timestamp, or under this day when that is later, so days never go back along a chain and
-- each day holds one unbroken stretch of it (see docs/audit-chain.md, "Days"). NULL for a
-- chain last written before this column: its next record takes its own day.
ALTER TABLE audit_chain_heads ADD COLUMN IF NOT EXISTS day date;
