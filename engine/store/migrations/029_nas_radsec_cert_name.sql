-- Issue 24, RadSec: a NAS client may name the client certificate its RadSec (RFC 6614)
-- connections must present: its subjectAltName DNS name, or its subject CN when it has
-- none (as radsecproxy and FreeRADIUS identify a TLS client). When set, a packet matched to
-- this client over TLS from a connection whose certificate does not carry the name is
-- dropped (radius/radius-server.ts); any certificate of RADSEC_CA_FILE's CA no longer
-- speaks for every NAS at its address. Unset: as before.
-- Expand only: a process of the previous release reads and writes the table as before (it
-- does not know the pin, and serves such a NAS as any RadSec peer of its address, as it did).
ALTER TABLE nas_clients ADD COLUMN IF NOT EXISTS radsec_cert_name text;
