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
