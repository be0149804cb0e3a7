-- Issue 24, "any NAS".
-- 1. A NAS client names its type: the reply profile its Access-Accepts follow
--    (engine/nas/nas-profiles.ts), and may carry its own role, filter id and VLAN for them.
-- 2. A NAS client's address may be a subnet (10.20.0.0/24, stored with its mask in `ip`):
--    packets from any address in it are that client's, most specific match first
--    (engine/nas/nas-registry.ts). The GiST index serves the cross-tenant overlap check of
--    HotspotService.addNasClient (`ip && $1`).
-- Expand only: a process of the previous release reads and writes the table as before (its
-- inserts get the generic type and no reply values; it reads a subnet's network address as a
-- plain address, which no NAS sends from).
ALTER TABLE nas_clients ADD COLUMN IF NOT EXISTS nas_type text NOT NULL DEFAULT 'generic';
ALTER TABLE nas_clients ADD COLUMN IF NOT EXISTS reply_role text;
ALTER TABLE nas_clients ADD COLUMN IF NOT EXISTS reply_filter_id text;
ALTER TABLE nas_clients ADD COLUMN IF NOT EXISTS reply_vlan integer CHECK (reply_vlan BETWEEN 1 AND 4094);
CREATE INDEX IF NOT EXISTS nas_clients_ip_gist ON nas_clients USING gist (ip inet_ops);
