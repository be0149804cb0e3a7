-- Incidents the engine raises itself (engine/dashboard/incident-service.ts, docs/dashboard-api.md).
-- Every engine process runs the same detectors, so the same problem is noticed several times:
-- the partial unique index keeps one open incident per (tenant, kind, subject), and a raise is
-- INSERT ... ON CONFLICT DO NOTHING. Once resolved, the row leaves the index and the next raise
-- of the same problem opens a new incident.
CREATE TABLE IF NOT EXISTS incidents (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  kind         text NOT NULL,
  subject      text NOT NULL,                 -- what it is about within the kind: a NAS id, 'outbox', a provider
  site_id      text,                          -- the hotspot, when the problem is at one
  severity     text NOT NULL,
  title        text NOT NULL,
  details      jsonb NOT NULL DEFAULT '{}',
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'triaging', 'acknowledged', 'resolved')),
  opened_at    timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  resolved_at  timestamptz,
  resolved_by  text
);
CREATE UNIQUE INDEX IF NOT EXISTS incidents_one_open ON incidents (tenant_id, kind, subject) WHERE state <> 'resolved';
CREATE INDEX IF NOT EXISTS incidents_tenant_opened ON incidents (tenant_id, opened_at DESC, id DESC);
