-- The console's reports (docs/reports.md, "Console reports"): the figures the rollups of 023 do not
-- hold. Sessions per SSID and visitors are kept by the outbox sink in the transaction that stores the
-- session rows (engine/store/report-guests.ts), as 023's are; sign-in attempts are moved from Redis's
-- hour buckets (engine/reports/signin-mover.ts), an upsert to the value, so a move run twice or by
-- two processes changes nothing.

-- Session starts per hotspot, local day (of the start, in the hotspot's zone) and SSID ('' unknown).
CREATE TABLE IF NOT EXISTS report_ssids (
  tenant_id   text NOT NULL,
  hotspot_id  text NOT NULL,
  day         date NOT NULL,
  ssid        text NOT NULL,
  sessions    integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, hotspot_id, day, ssid)
);

-- Sign-in attempts per hotspot, UTC hour (hour_start) and method, by outcome (accept, reject), as the
-- decision recorder counted them into Redis. `day` and `hour` are the hotspot's local date and hour of
-- hour_start (a zone with a half-hour offset counts a UTC hour at the local time it began).
CREATE TABLE IF NOT EXISTS report_signins (
  tenant_id   text NOT NULL,
  hotspot_id  text NOT NULL,
  hour_start  timestamptz NOT NULL,
  method      text NOT NULL,
  outcome     text NOT NULL,
  day         date NOT NULL,
  hour        smallint NOT NULL,
  attempts    integer NOT NULL,
  PRIMARY KEY (tenant_id, hotspot_id, hour_start, method, outcome)
);
CREATE INDEX IF NOT EXISTS report_signins_day ON report_signins (tenant_id, hotspot_id, day);

-- A random salt per tenant for the visitor keys below: sha256(salt || kind || ':' || value), so no
-- phone, e-mail or MAC is stored in clear and keys of two tenants never match.
CREATE TABLE IF NOT EXISTS report_visitor_salts (
  tenant_id   text PRIMARY KEY,
  salt        bytea NOT NULL DEFAULT sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || clock_timestamp()::text, 'UTF8'))
);

-- The tenant's salt, made on first use. VOLATILE: its SELECT after the INSERT sees a salt another
-- transaction committed meanwhile (ON CONFLICT waited for it), so the sink needs no statement of its own.
CREATE OR REPLACE FUNCTION report_visitor_salt(tenant text) RETURNS bytea LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  s bytea;
BEGIN
  SELECT salt INTO s FROM report_visitor_salts WHERE tenant_id = tenant;
  IF s IS NULL THEN
    INSERT INTO report_visitor_salts (tenant_id) VALUES (tenant) ON CONFLICT DO NOTHING;
    SELECT salt INTO s FROM report_visitor_salts WHERE tenant_id = tenant;
  END IF;
  RETURN s;
END $$;

-- A visitor's key with a known salt (the writers), and as the erasure finds it.
CREATE OR REPLACE FUNCTION report_visitor_hash(salt bytea, kind text, v text) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT sha256(salt || convert_to(kind || ':' || v, 'UTF8'))
$$;

-- A visitor's key: the verified identity (phone, e-mail, room: the session's user name for a method
-- that verifies one) else the MAC. NULL when the tenant has no salt yet (the writer makes it first).
CREATE OR REPLACE FUNCTION report_visitor_key(tenant text, kind text, v text) RETURNS bytea LANGUAGE sql STABLE AS $$
  SELECT report_visitor_hash(salt, kind, v) FROM report_visitor_salts WHERE tenant_id = tenant
$$;

-- The kind and value a session row is counted under (report_visitor_key's arguments).
CREATE OR REPLACE FUNCTION report_visitor_kind(method text, username text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN method IN ('sms_otp', 'msgapp_otp', 'email', 'sponsor', 'pms') AND coalesce(username, '') <> '' THEN 'id' ELSE 'mac' END
$$;

-- One row per visitor and hotspot: the first local day seen there.
CREATE TABLE IF NOT EXISTS report_visitors (
  tenant_id   text NOT NULL,
  hotspot_id  text NOT NULL,
  visitor     bytea NOT NULL,
  first_day   date NOT NULL,
  -- Visitor before hotspot: the sink's upsert, the reports' lookups (all three known) and the
  -- erasure (tenant and visitor) all use this one index; a second one cost every session start.
  PRIMARY KEY (tenant_id, visitor, hotspot_id)
);

-- One row per visitor, hotspot and local day with a session start: the period's visitors.
CREATE TABLE IF NOT EXISTS report_visits (
  tenant_id   text NOT NULL,
  hotspot_id  text NOT NULL,
  day         date NOT NULL,
  visitor     bytea NOT NULL,
  PRIMARY KEY (tenant_id, hotspot_id, day, visitor)
);
CREATE INDEX IF NOT EXISTS report_visits_key ON report_visits (tenant_id, visitor);
