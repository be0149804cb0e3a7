-- 5651 compliance: reading sessions by UTC day, and the time-stamp tokens of daily access logs.

-- A day's access log reads the sessions that started in the day (a range on started_at) and,
-- for the first day of an export or a single-day summary, those still running from before it
-- (a range on the effective end). Both ranges are index scans.
CREATE INDEX sessions_tenant_started ON sessions (tenant_id, started_at, id);
CREATE INDEX sessions_tenant_effective_end ON sessions (tenant_id, (coalesce(ended_at, ends_at)));

-- One row per (tenant, day, content): the RFC 3161 answer for the SHA-256 of that day's
-- logs/YYYY-MM-DD.csv. A day's file changes while sessions overlapping it are still open (their
-- end is filled in later), so a day can have several rows; the export and the summary use the
-- row whose sha256 is the file's current digest. A failed attempt is kept too (tsr NULL) so the
-- daily summary can say the authority did not answer.
CREATE TABLE compliance_timestamps (
  tenant_id   text NOT NULL,
  day         date NOT NULL,
  sha256      bytea NOT NULL,
  status      text NOT NULL,              -- granted, failed
  tsr         bytea,                      -- the TimeStampResp as the authority sent it
  gen_time    timestamptz,                -- the token's genTime
  error       text,
  tsa_url     text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, day, sha256)
);
