-- Reports (docs/reports.md). The device type a guest's browser claimed at
-- sign-in, and rollups the outbox sink keeps in the same transaction as the
-- session rows, so analytics never scan raw sessions.

-- ios, android, windows, macos, other; NULL for sessions stored before this (counted as other).
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS device_type text;

-- A zone Postgres knows, else UTC: a rollup write must never fail a sink batch on a bad zone name.
CREATE OR REPLACE FUNCTION report_zone(z text) RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF z IS NULL OR z = '' THEN RETURN 'UTC'; END IF;
  PERFORM now() AT TIME ZONE z;
  RETURN z;
EXCEPTION WHEN others THEN
  RETURN 'UTC';
END $$;

-- One row per hotspot, local day and hour of the session's START (in the hotspot's zone at that
-- instant: a session that crosses midnight or a DST change counts where it started; the repeated
-- hour of an autumn change holds both), auth method and device type. `sessions` counts starts,
-- `ended` the ends applied, `duration_s` and the bytes their totals (credited to the start's hour).
CREATE TABLE IF NOT EXISTS report_hours (
  tenant_id    text NOT NULL,
  hotspot_id   text NOT NULL,
  day          date NOT NULL,
  hour         smallint NOT NULL,
  auth_method  text NOT NULL,
  device_type  text NOT NULL,
  sessions     integer NOT NULL DEFAULT 0,
  ended        integer NOT NULL DEFAULT 0,
  duration_s   bigint NOT NULL DEFAULT 0,
  bytes_in     bigint NOT NULL DEFAULT 0,
  bytes_out    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, hotspot_id, day, hour, auth_method, device_type)
);
CREATE INDEX IF NOT EXISTS report_hours_tenant_day ON report_hours (tenant_id, day);

-- Per hotspot and local day, a HyperLogLog sketch of the devices (MACs) that started a session:
-- 4,096 one-byte registers (p = 12, standard error 1.6 %). Sketches merge by taking each
-- register's maximum, so unique devices over any range of days cost one read per day, and adding
-- a device twice changes nothing. No MAC is stored: a sketch is not personal data.
CREATE TABLE IF NOT EXISTS report_devices (
  tenant_id   text NOT NULL,
  hotspot_id  text NOT NULL,
  day         date NOT NULL,
  sketch      bytea NOT NULL,
  PRIMARY KEY (tenant_id, hotspot_id, day)
);

-- A device's register and rank: 64-bit hashtextextended of the MAC, the low 12 bits the register,
-- the rank one more than the leading zeros of the other 52 bits (53 when all are zero).
CREATE OR REPLACE FUNCTION report_hll_reg(mac text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT (hashtextextended(mac, 0) & 4095)::integer
$$;
CREATE OR REPLACE FUNCTION report_hll_rank(mac text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT 53 - length(ltrim(((hashtextextended(mac, 0) >> 12)::bit(52))::text, '0'))
$$;

-- A sketch with the given registers raised to at least the given ranks.
CREATE OR REPLACE FUNCTION report_hll_add(sketch bytea, regs integer[], ranks integer[]) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  s bytea := coalesce(sketch, decode(repeat('00', 4096), 'hex'));
  i integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(regs, 1), 0) LOOP
    IF get_byte(s, regs[i]) < ranks[i] THEN s := set_byte(s, regs[i], ranks[i]); END IF;
  END LOOP;
  RETURN s;
END $$;

-- Month-level copies of both, so a long range reads whole months plus the days at its edges (a
-- year: 12 months and a day, not 366 days). Kept by triggers on the day-level tables, so every
-- writer of those (the sink, a waiting end, the rebuild) keeps them too, in the same transaction.
-- Narrow, so a month is a few dozen rows: the mix of methods and device types (with the counts,
-- durations and bytes), and the starts per local hour.
CREATE TABLE IF NOT EXISTS report_month_mix (
  tenant_id    text NOT NULL,
  hotspot_id   text NOT NULL,
  month        date NOT NULL,                 -- the first day of the local month
  auth_method  text NOT NULL,
  device_type  text NOT NULL,
  sessions     integer NOT NULL DEFAULT 0,
  ended        integer NOT NULL DEFAULT 0,
  duration_s   bigint NOT NULL DEFAULT 0,
  bytes_in     bigint NOT NULL DEFAULT 0,
  bytes_out    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, hotspot_id, month, auth_method, device_type)
);
CREATE TABLE IF NOT EXISTS report_month_hours (
  tenant_id    text NOT NULL,
  hotspot_id   text NOT NULL,
  month        date NOT NULL,
  hour         smallint NOT NULL,
  sessions     integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, hotspot_id, month, hour)
);

CREATE TABLE IF NOT EXISTS report_device_months (
  tenant_id   text NOT NULL,
  hotspot_id  text NOT NULL,
  month       date NOT NULL,
  sketch      bytea NOT NULL,
  PRIMARY KEY (tenant_id, hotspot_id, month)
);

-- The register-wise maximum of two sketches (their union).
CREATE OR REPLACE FUNCTION report_hll_merge(a bytea, b bytea) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  s bytea := coalesce(a, decode(repeat('00', 4096), 'hex'));
  i integer;
BEGIN
  IF b IS NULL THEN RETURN s; END IF;
  FOR i IN 0 .. 4095 LOOP
    IF get_byte(b, i) > get_byte(s, i) THEN s := set_byte(s, i, get_byte(b, i)); END IF;
  END LOOP;
  RETURN s;
END $$;
DROP AGGREGATE IF EXISTS report_hll_union(bytea);
CREATE AGGREGATE report_hll_union(bytea) (SFUNC = report_hll_merge, STYPE = bytea);

-- A day row's change, added to its month row (an insert adds, a delete subtracts, an update adds the difference).
CREATE OR REPLACE FUNCTION report_month_add(r report_hours, sign integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO report_month_mix AS m (tenant_id, hotspot_id, month, auth_method, device_type, sessions, ended, duration_s, bytes_in, bytes_out)
  VALUES (r.tenant_id, r.hotspot_id, date_trunc('month', r.day)::date, r.auth_method, r.device_type,
          sign * r.sessions, sign * r.ended, sign * r.duration_s, sign * r.bytes_in, sign * r.bytes_out)
  ON CONFLICT (tenant_id, hotspot_id, month, auth_method, device_type) DO UPDATE SET
    sessions = m.sessions + EXCLUDED.sessions, ended = m.ended + EXCLUDED.ended, duration_s = m.duration_s + EXCLUDED.duration_s,
    bytes_in = m.bytes_in + EXCLUDED.bytes_in, bytes_out = m.bytes_out + EXCLUDED.bytes_out;
  INSERT INTO report_month_hours AS m (tenant_id, hotspot_id, month, hour, sessions)
  VALUES (r.tenant_id, r.hotspot_id, date_trunc('month', r.day)::date, r.hour, sign * r.sessions)
  ON CONFLICT (tenant_id, hotspot_id, month, hour) DO UPDATE SET sessions = m.sessions + EXCLUDED.sessions;
$$;
CREATE OR REPLACE FUNCTION report_hours_to_month() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN PERFORM report_month_add(NEW, 1); END IF;
  IF TG_OP <> 'INSERT' THEN PERFORM report_month_add(OLD, -1); END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS report_hours_month ON report_hours;
CREATE TRIGGER report_hours_month AFTER INSERT OR UPDATE OR DELETE ON report_hours FOR EACH ROW EXECUTE FUNCTION report_hours_to_month();

-- A day sketch's registers merged into its month's. A sketch only grows, so a deleted day row
-- (the rebuild) leaves its month alone: the rebuild recomputes the months it touched.
CREATE OR REPLACE FUNCTION report_devices_to_month() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO report_device_months AS m (tenant_id, hotspot_id, month, sketch)
  VALUES (NEW.tenant_id, NEW.hotspot_id, date_trunc('month', NEW.day)::date, NEW.sketch)
  ON CONFLICT (tenant_id, hotspot_id, month) DO UPDATE SET sketch = report_hll_merge(m.sketch, EXCLUDED.sketch);
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS report_devices_month ON report_devices;
CREATE TRIGGER report_devices_month AFTER INSERT OR UPDATE ON report_devices FOR EACH ROW EXECUTE FUNCTION report_devices_to_month();
