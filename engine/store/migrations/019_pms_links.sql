-- Room sign-in (engine/pms/, docs/pms.md): one hotel's link to its property-management system, per
-- hotspot. The protocol is Oracle Opera FIAS over TCP; host and port name the FIAS interface, which
-- accepts one connection: one engine process holds it under a Redis lease. resync_after_gap_sec: a
-- link that was silent longer than this asks the PMS for a database resync when it comes back.
CREATE TABLE pms_links (
  hotspot_id            text PRIMARY KEY REFERENCES hotspots(id) ON DELETE CASCADE,
  tenant_id             text NOT NULL REFERENCES tenants(id),
  protocol              text NOT NULL DEFAULT 'fias' CHECK (protocol IN ('fias')),
  host                  text NOT NULL,
  port                  integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
  resync_after_gap_sec  integer NOT NULL CHECK (resync_after_gap_sec >= 0),
  enabled               boolean NOT NULL DEFAULT true,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pms_links_tenant ON pms_links (tenant_id);
