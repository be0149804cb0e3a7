-- Webhook subscriptions (POST /v1/webhooks; engine/webhooks/, docs/webhooks.md). The signing secret
-- is not here: it is sealed in tenant_secrets as webhook.<id> (and, during a rotation's overlap,
-- webhook.<id>.previous until previous_until). Redis mirrors the active rows for the routing script
-- (keys.webhookSubs); this table is the truth the dispatcher reconciles the mirror from.
CREATE TABLE webhooks (
  tenant_id       text NOT NULL REFERENCES tenants(id),
  id              text NOT NULL,              -- whk_...
  url             text NOT NULL,
  events          text[] NOT NULL,
  active          boolean NOT NULL DEFAULT true,
  -- Why it went inactive: 'gone' (the receiver answered 410).
  disabled_reason text,
  previous_until  timestamptz,                -- the old secret is signed with too until then
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX webhooks_active ON webhooks (tenant_id) WHERE active;
