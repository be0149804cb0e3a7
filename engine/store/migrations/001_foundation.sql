-- Tenants, credentials, hotspots, NAS clients, vouchers and their uses.
-- Every tenant-owned table carries tenant_id and every query filters on it.

CREATE TABLE tenants (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  modules     text[] NOT NULL DEFAULT '{}',
  settings    jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id           text PRIMARY KEY,            -- the readable part of the key, e.g. gwk_ab12cd34
  tenant_id    text NOT NULL REFERENCES tenants(id),
  secret_hash  bytea NOT NULL,              -- sha256 of the 32 random bytes; the key itself is never stored
  label        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE hotspots (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  name        text NOT NULL,
  location    text NOT NULL DEFAULT '',
  timezone    text NOT NULL,
  settings    jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX hotspots_tenant ON hotspots (tenant_id, created_at);

-- A RADIUS client is known by its source address, so an address belongs to
-- one hotspot across the whole service.
CREATE TABLE nas_clients (
  id                             text PRIMARY KEY,
  tenant_id                      text NOT NULL REFERENCES tenants(id),
  hotspot_id                     text NOT NULL REFERENCES hotspots(id),
  ip                             inet NOT NULL UNIQUE,
  secret                         text NOT NULL,
  coa_port                       integer NOT NULL DEFAULT 3799,
  require_message_authenticator  boolean NOT NULL DEFAULT true,
  name                           text,
  created_at                     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX nas_clients_hotspot ON nas_clients (tenant_id, hotspot_id);

CREATE TABLE vouchers (
  id                   text PRIMARY KEY,
  tenant_id            text NOT NULL REFERENCES tenants(id),
  code                 text NOT NULL,
  max_uses             integer,              -- NULL: unlimited
  current_uses         integer NOT NULL DEFAULT 0,
  expires_at           timestamptz,
  bandwidth_profile    text,
  daily_quota_mb       integer,
  duration_minutes     integer,
  bandwidth_down_mbps  integer,
  bandwidth_up_mbps    integer,
  ssids                text[] NOT NULL DEFAULT '{}',
  notes                text,
  source               text NOT NULL,        -- api, console, csv
  created_at           timestamptz NOT NULL DEFAULT now(),
  deleted_at           timestamptz
);
-- (tenant, code) is unique among live vouchers; a deleted voucher's code may be issued again.
CREATE UNIQUE INDEX vouchers_tenant_code ON vouchers (tenant_id, code) WHERE deleted_at IS NULL;
CREATE INDEX vouchers_tenant_created ON vouchers (tenant_id, created_at DESC, id);

-- One row per successful use, written by the outbox sink; the primary key is
-- the use id chosen in Redis, so a record delivered twice is stored once.
CREATE TABLE voucher_uses (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL,
  voucher_id  text NOT NULL,
  hotspot_id  text NOT NULL,
  mac         text NOT NULL,
  ip          text,
  ssid        text,
  session_id  text NOT NULL,
  used_at     timestamptz NOT NULL,
  grant_until timestamptz NOT NULL
);
CREATE INDEX voucher_uses_voucher ON voucher_uses (tenant_id, voucher_id);
CREATE INDEX voucher_uses_mac ON voucher_uses (tenant_id, mac, used_at);
