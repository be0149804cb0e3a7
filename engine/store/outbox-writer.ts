import type { PoolClient } from './postgres.js';

/** One outbox entry: its tenant and its fields as Redis stored them. */
export interface OutboxRecord {
  tenant: string;
  f: Map<string, string>;
}

/**
 * Writes a batch of outbox records in one transaction (the caller's).
 * Every insert is keyed by an id derived from the record, and every update is
 * guarded by the row's state, so a batch delivered twice changes nothing the
 * second time. Records are applied by kind in stream order: starts before
 * extensions before ends, which is also their order within one session.
 */
export async function writeOutbox(c: PoolClient, records: OutboxRecord[]): Promise<number> {
  let written = 0;
  const of = (type: string): OutboxRecord[] => records.filter((r) => r.f.get('type') === type);
  const col = (rs: OutboxRecord[], name: string): (string | null)[] => rs.map((r) => r.f.get(name) || null);
  const tenants = (rs: OutboxRecord[]): string[] => rs.map((r) => r.tenant);

  const uses = of('voucher_use');
  if (uses.length > 0) {
    const { rows } = await c.query<{ voucher_id: string }>(
      `INSERT INTO voucher_uses (id, tenant_id, voucher_id, hotspot_id, mac, ip, ssid, session_id, used_at, grant_until)
       SELECT id, tenant_id, voucher_id, hotspot_id, mac, ip, ssid, session_id, to_timestamp(at::bigint / 1000.0), to_timestamp(until::bigint / 1000.0)
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
         AS t(id, tenant_id, voucher_id, hotspot_id, mac, ip, ssid, session_id, at, until)
       ON CONFLICT (id) DO NOTHING
       RETURNING voucher_id`,
      [col(uses, 'use'), tenants(uses), col(uses, 'vid'), col(uses, 'hs'), col(uses, 'mac'), col(uses, 'ip'),
        col(uses, 'ssid'), col(uses, 'sid'), col(uses, 'at'), col(uses, 'until')]);
    written += rows.length;
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.voucher_id, (counts.get(r.voucher_id) ?? 0) + 1);
    if (counts.size > 0) {
      await c.query(
        `UPDATE vouchers v SET current_uses = v.current_uses + t.n FROM unnest($1::text[], $2::int[]) AS t(id, n) WHERE v.id = t.id`,
        [[...counts.keys()], [...counts.values()]]);
    }
    await c.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, ssid, voucher_id, started_at, ends_at)
       SELECT sid, tenant_id, hs, mac, ip, usr, coalesce(method, 'voucher'), ssid, vid, to_timestamp(at::bigint / 1000.0), to_timestamp(until::bigint / 1000.0)
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
         AS t(sid, tenant_id, hs, mac, ip, usr, method, ssid, vid, at, until)
       ON CONFLICT (id) DO NOTHING`,
      [col(uses, 'sid'), tenants(uses), col(uses, 'hs'), col(uses, 'mac'), col(uses, 'ip'), col(uses, 'user'),
        col(uses, 'method'), col(uses, 'ssid'), col(uses, 'vid'), col(uses, 'at'), col(uses, 'until')]);
    written += await insertAudit(c, uses, 'session_start', (r) => `${r.f.get('sid')}:start`, () => ({}));
  }

  const extensions = of('session_extend');
  if (extensions.length > 0) {
    await c.query(
      `UPDATE sessions s SET ends_at = greatest(s.ends_at, to_timestamp(t.until::bigint / 1000.0))
       FROM unnest($1::text[], $2::text[], $3::text[]) AS t(sid, tenant_id, until)
       WHERE s.id = t.sid AND s.tenant_id = t.tenant_id AND s.status = 'active'`,
      [col(extensions, 'sid'), tenants(extensions), col(extensions, 'until')]);
    written += await insertAudit(c, extensions, 'session_extend', (r) => `${r.f.get('sid')}:extend:${r.f.get('until')}`,
      (r) => ({ minutes: Number(r.f.get('minutes')), until: new Date(Number(r.f.get('until'))).toISOString(), by: r.f.get('by') || null }));
  }

  const ends = of('session_end');
  if (ends.length > 0) {
    await c.query(
      `UPDATE sessions s SET status = CASE WHEN t.reason IN ('admin_disconnect', 'blocked') THEN 'disconnected' ELSE 'ended' END,
         ended_at = to_timestamp(t.at::bigint / 1000.0), end_reason = t.reason,
         bytes_in = greatest(s.bytes_in, t.bin::bigint), bytes_out = greatest(s.bytes_out, t.bout::bigint)
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(sid, tenant_id, at, reason, bin, bout)
       WHERE s.id = t.sid AND s.tenant_id = t.tenant_id AND s.ended_at IS NULL`,
      [col(ends, 'sid'), tenants(ends), col(ends, 'at'), col(ends, 'reason'), col(ends, 'bin'), col(ends, 'bout')]);
    written += await insertAudit(c, ends, 'session_end', (r) => `${r.f.get('sid')}:end`,
      (r) => ({ reason: r.f.get('reason'), bytes_in: Number(r.f.get('bin') ?? 0), bytes_out: Number(r.f.get('bout') ?? 0), by: r.f.get('by') || null }));
  }
  return written;
}

async function insertAudit(
  c: PoolClient, rs: OutboxRecord[], eventType: string,
  idOf: (r: OutboxRecord) => string, detailsOf: (r: OutboxRecord) => Record<string, unknown>,
): Promise<number> {
  const g = (name: string): (string | null)[] => rs.map((r) => r.f.get(name) || null);
  const { rowCount } = await c.query(
    `INSERT INTO audit_events (id, tenant_id, hotspot_id, event_type, ts, session_id, mac_address, ip_address, username, auth_method, ssid, details)
     SELECT id, tenant_id, hs, $3, to_timestamp(at::bigint / 1000.0), sid, mac, ip, usr, method, ssid, details::jsonb
     FROM unnest($1::text[], $2::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
       AS t(id, tenant_id, hs, at, sid, mac, ip, usr, method, ssid, details)
     ON CONFLICT (id) DO NOTHING`,
    [rs.map(idOf), rs.map((r) => r.tenant), eventType, g('hs'), g('at'), g('sid'), g('mac'), g('ip'), g('user'), g('method'), g('ssid'),
      rs.map((r) => JSON.stringify(detailsOf(r)))]);
  return rowCount ?? 0;
}
