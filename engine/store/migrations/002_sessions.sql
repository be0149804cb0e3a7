-- Sessions and the block list.

CREATE TABLE sessions (
  id           text PRIMARY KEY,          -- sess_...; the public API shows it as ses_... (same suffix)
  tenant_id    text NOT NULL,
  hotspot_id   text NOT NULL,
  mac          text NOT NULL,
  ip           text,
  username     text,
  auth_method  text NOT NULL,
  ssid         text,
  voucher_id   text,
  started_at   timestamptz NOT NULL,
  ends_at      timestamptz NOT NULL,      -- planned end (session timeout), moved by extensions
  ended_at     timestamptz,
  end_reason   text,
  status       text NOT NULL DEFAULT 'active',   -- active, ended, disconnected
  bytes_in     bigint NOT NULL DEFAULT 0,
  bytes_out    bigint NOT NULL DEFAULT 0
);
CREATE INDEX sessions_tenant_status ON sessions (tenant_id, status, started_at DESC);
CREATE INDEX sessions_tenant_mac ON sessions (tenant_id, mac, started_at DESC);

CREATE TABLE blocks (
  tenant_id   text NOT NULL,
  mac         text NOT NULL,
  until       timestamptz,                -- NULL: permanent, until removed
  duration    text NOT NULL,              -- 24h, 7d, permanent
  reason      text,
  created_by  text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, mac)
);
