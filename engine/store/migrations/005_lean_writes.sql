-- Fewer writes per sign-in: every voucher use starts exactly one session, so the
-- session row is the use's durable record and voucher_uses becomes a view of it.
-- Two audit indexes that no query needs are dropped (day reads use the primary
-- key within the day's partition).

DROP TABLE voucher_uses;
CREATE VIEW voucher_uses AS
  SELECT id AS session_id, tenant_id, voucher_id, hotspot_id, mac, ip, ssid, started_at AS used_at, ends_at AS grant_until
  FROM sessions WHERE voucher_id IS NOT NULL;

CREATE INDEX sessions_voucher ON sessions (voucher_id) WHERE voucher_id IS NOT NULL;

DROP INDEX audit_records_day;
DROP INDEX audit_records_session;
