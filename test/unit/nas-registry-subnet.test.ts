import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NasRegistry } from '../../engine/nas/nas-registry.js';
import type { Pool } from '../../engine/store/postgres.js';

/** The registry's matching by subnet (issue 24), against the rows refresh() reads, without Postgres. */
function registry(rows: { id: string; ip: string; bits: number; ident?: string; hotspot?: string }[]): NasRegistry {
  const pool = {
    query: async () => ({
      rows: rows.map((r) => ({
        id: r.id, tenant_id: 'tn_1', hotspot_id: r.hotspot ?? 'hs_1', ip: r.ip, bits: r.bits, host_bits: r.ip.includes(':') ? 128 : 32,
        secret: `secret-${r.id}`, coa_port: 3799, require_message_authenticator: true, timezone: 'UTC', nas_identifier: r.ident ?? null,
        nas_type: 'generic', reply_role: null, reply_filter_id: null, reply_vlan: null, radsec_cert_name: null,
      })),
    }),
  } as unknown as Pool;
  return new NasRegistry(pool, pino({ level: 'silent' }));
}

describe('NAS registry: clients by subnet', () => {
  it('exact address, then the narrowest subnet, then wider ones; IPv4-mapped sources match as IPv4', async () => {
    const r = registry([
      { id: 'wide', ip: '10.20.0.0', bits: 16 }, { id: 'narrow', ip: '10.20.5.0', bits: 24 }, { id: 'exact', ip: '10.20.5.9', bits: 32 },
      { id: 'v6', ip: 'fd00:1:2::', bits: 48 },
    ]);
    await r.refresh();
    expect(r.byAddress('10.20.5.9')?.id).toBe('exact');
    expect(r.byAddress('10.20.5.10')).toMatchObject({ id: 'narrow@10.20.5.10', ip: '10.20.5.10', secret: 'secret-narrow' });
    expect(r.byAddress('::ffff:10.20.9.1')).toMatchObject({ id: 'wide@10.20.9.1', ip: '10.20.9.1' });
    expect(r.byAddress('10.21.0.1')).toBeNull();
    expect(r.byAddress('fd00:1:2:3::7')).toMatchObject({ id: 'v6@fd00:1:2:3::7', ip: 'fd00:1:2:3::7' });
    expect(r.byAddress('fd00:1:3::7')).toBeNull();
    // The same entry for the same address (no allocation per packet), and found again by its id.
    expect(r.byAddress('10.20.5.10')).toBe(r.byAddress('10.20.5.10'));
    expect(r.get('narrow@10.20.5.10')).toBe(r.byAddress('10.20.5.10'));
    expect(r.client(r.byAddress('10.20.5.10')!)?.id).toBe('narrow');
  });

  it('an id naming an address outside its subnet, or no address, is no NAS: a command never goes there', async () => {
    const r = registry([{ id: 'ap', ip: '10.30.0.0', bits: 24 }, { id: 'plain', ip: '10.40.0.1', bits: 32 }]);
    await r.refresh();
    expect(r.get('ap@10.30.0.77')?.ip).toBe('10.30.0.77');
    expect(r.get('ap@10.31.0.77')).toBeNull();
    expect(r.get('ap@not-an-address')).toBeNull();
    expect(r.get('plain@10.40.0.1')).toBeNull();
    // A session without a known NAS is sent to the hotspot's first address, never to a subnet's network address.
    expect(r.forHotspot('hs_1')?.id).toBe('plain');
  });

  it('NAS-Identifier inside a subnet: the named client, else the plain one, else the next wider subnet', async () => {
    const r = registry([
      { id: 'site', ip: '10.50.0.0', bits: 16 },
      { id: 'ap-a', ip: '10.50.1.0', bits: 24, ident: 'ap-a' },
    ]);
    await r.refresh();
    expect(r.byAddress('10.50.1.4', () => 'ap-a')?.id).toBe('ap-a@10.50.1.4');
    expect(r.byAddress('10.50.1.4', () => 'ap-b')?.id).toBe('site@10.50.1.4');
    expect(r.byAddress('10.50.1.4')?.id).toBe('site@10.50.1.4');
  });
});
