-- The tamper-evident audit chain of session events (start, end, extension, administrator action),
-- one chain per tenant.

-- Partitioned by UTC day so retention drops whole days (730-day legal period)
-- and a day's records are read from one partition. The sink creates each
-- day's partition before its first insert.
CREATE TABLE audit_records (
  tenant_id         text NOT NULL,
  seq               bigint NOT NULL,          -- gap-free per tenant, from 1
  id                text NOT NULL,            -- derived from the event: a redelivered record is recognised
  event_type        text NOT NULL,
  ts                timestamptz NOT NULL,     -- milliseconds
  session_id        text,
  mac_address       text,
  ip_address        text,
  username          text,
  auth_method       text,
  ssid              text,
  hotspot_id        text,
  details           jsonb NOT NULL DEFAULT '{}',
  prev_hash         text NOT NULL,
  hash_chain_value  text NOT NULL,
  day               date NOT NULL,            -- (ts AT TIME ZONE 'UTC')::date
  PRIMARY KEY (tenant_id, seq, day)
) PARTITION BY RANGE (day);
CREATE INDEX audit_records_id ON audit_records (tenant_id, id);
CREATE INDEX audit_records_day ON audit_records (tenant_id, day, seq);
CREATE INDEX audit_records_session ON audit_records (tenant_id, session_id);

-- The last link of each chain; its row lock serialises appends to a chain.
CREATE TABLE audit_chain_heads (
  tenant_id   text PRIMARY KEY,
  seq         bigint NOT NULL,
  hash        text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- What the retention job destroyed, kept outside the partitions it drops.
CREATE TABLE audit_retention_log (
  id          bigserial PRIMARY KEY,
  ran_at      timestamptz NOT NULL DEFAULT now(),
  partition   text NOT NULL,
  day         date NOT NULL,
  rows        bigint NOT NULL,
  cutoff      date NOT NULL
);
