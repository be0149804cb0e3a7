-- Access points behind one NAT share a source address: a NAS client may name the
-- NAS-Identifier (RADIUS attribute 32) it sends, and a packet is then matched by
-- address and identifier together (engine/nas/nas-registry.ts). An address has at
-- most one client without an identifier (it takes the packets no other client of the
-- address names) and at most one per identifier.
-- Expand only: a process of the previous release reads and writes the table as before
-- (its inserts carry no identifier and still meet the per-address uniqueness for them).
ALTER TABLE nas_clients ADD COLUMN IF NOT EXISTS nas_identifier text;
ALTER TABLE nas_clients DROP CONSTRAINT IF EXISTS nas_clients_ip_key;
CREATE UNIQUE INDEX IF NOT EXISTS nas_clients_ip_identifier ON nas_clients (ip, COALESCE(nas_identifier, ''));
