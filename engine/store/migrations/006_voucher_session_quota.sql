-- A voucher's session data quota (voucher field session_quota_mb): the data one session may
-- use, download and upload together, in MB (1 MB = 1,048,576 bytes); NULL: none. Unlike
-- daily_quota_mb it starts again with every session. The API already refuses values below 1;
-- the check holds every other writer to the same rule, since Redis reads 0 as "none".
-- IF NOT EXISTS: a database that already has the column takes this as done.

ALTER TABLE vouchers ADD COLUMN IF NOT EXISTS session_quota_mb integer
  CONSTRAINT vouchers_session_quota_mb_positive CHECK (session_quota_mb IS NULL OR session_quota_mb >= 1);
