import { daysToFile, fileDay } from '../../engine/audit/chain-writer.js';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonical, ChainVerifier, GENESIS, link, retentionCutoff, type ChainFields, type StoredLink } from '../../engine/index.js';

const rec = (seq: number, extra: Partial<ChainFields> = {}): ChainFields => ({
  tenant_id: 'tn_a', seq, event_type: 'session_start', timestamp: '2026-11-22T04:11:48.123Z', session_id: 'sess_x',
  mac_address: 'AA:BB:CC:DD:EE:FF', ip_address: '10.0.0.1', username: 'CODE1', auth_method: 'voucher', ssid: 'Guest',
  hotspot_id: 'hs_1', details: { z: 1, a: { y: 2, b: 3 } }, ...extra,
});

function chain(n: number): StoredLink[] {
  const out: StoredLink[] = [];
  let prev = GENESIS;
  for (let i = 1; i <= n; i++) {
    const f = rec(i, { session_id: `sess_${i}` });
    const h = link(prev, f);
    out.push({ ...f, id: `r${i}`, prev_hash: prev, hash_chain_value: h });
    prev = h;
  }
  return out;
}

describe('audit chain rule', () => {
  it('is the documented formula: sha256 over prev + newline + the canonical JSON, keys of details sorted', () => {
    const f = rec(1);
    expect(canonical(f)).toBe('["tn_a",1,"session_start","2026-11-22T04:11:48.123Z","sess_x","AA:BB:CC:DD:EE:FF","10.0.0.1","CODE1","voucher","Guest","hs_1",{"a":{"b":3,"y":2},"z":1}]');
    const expected = 'sha256:' + createHash('sha256').update(GENESIS + '\n' + canonical(f)).digest('hex');
    expect(link(GENESIS, f)).toBe(expected);
    expect(link(GENESIS, { ...f, details: { a: { b: 3, y: 2 }, z: 1 } })).toBe(expected);
  });

  it('verifies an intact chain and names the first edited, deleted or reordered record', () => {
    const good = new ChainVerifier({ seq: 0, hash: GENESIS });
    for (const r of chain(5)) good.push(r);
    expect(good.firstBreak).toBeNull();

    const edited = chain(5);
    edited[2] = { ...edited[2]!, username: 'OTHER' };
    const v1 = new ChainVerifier({ seq: 0, hash: GENESIS });
    edited.forEach((r) => v1.push(r));
    expect(v1.firstBreak).toMatchObject({ seq: 3, problem: 'hash_mismatch' });

    const deleted = chain(5).filter((r) => r.seq !== 2);
    const v2 = new ChainVerifier({ seq: 0, hash: GENESIS });
    deleted.forEach((r) => v2.push(r));
    expect(v2.firstBreak).toMatchObject({ seq: 3, problem: 'sequence_gap' });

    // Reordered: records 2 and 3 swap places and numbers; their links no longer meet.
    const c = chain(5);
    const swapped = [c[0]!, { ...c[2]!, seq: 2 }, { ...c[1]!, seq: 3 }, c[3]!, c[4]!];
    const v3 = new ChainVerifier({ seq: 0, hash: GENESIS });
    swapped.forEach((r) => v3.push(r));
    expect(v3.firstBreak).toMatchObject({ seq: 2, problem: 'broken_link' });
  });

  it('keeps 730 days, or two calendar years when those reach further back (29 February)', () => {
    // From 2026-11-22, 730 days back is 2024-11-22; two years back is the same day.
    expect(retentionCutoff(Date.parse('2026-11-22T10:00:00Z'))).toBe('2024-11-22');
    // Two years back from 2025-03-01 spans 29 Feb 2024 (731 days): 730 days back would be
    // 2023-03-02, two years back is 2023-03-01, and the longer one is kept.
    expect(retentionCutoff(Date.parse('2025-03-01T00:00:00Z'))).toBe('2023-03-01');
    expect(retentionCutoff(Date.parse('2024-03-01T00:00:00Z'))).toBe('2022-03-01');
  });
});

describe('fileDay: the partition day of a record', () => {
  const latest = '2026-11-22';
  it("is its own timestamp's day, or the later day its chain has reached", () => {
    expect(fileDay('2026-11-21', '', latest)).toBe('2026-11-21');
    expect(fileDay('2026-11-21', '2026-11-20', latest)).toBe('2026-11-21');
    expect(fileDay('2026-11-20', '2026-11-21', latest)).toBe('2026-11-21');
  });
  it('does not follow a chain day past tomorrow (a record from a broken clock)', () => {
    expect(fileDay('2026-11-21', '2100-01-01', latest)).toBe('2026-11-21');
    expect(fileDay('2026-11-21', latest, latest)).toBe(latest);
  });
});

describe('daysToFile: the partitions a batch may be filed under', () => {
  it("is the records' own days, and today and tomorrow", () => {
    const now = Date.parse('2026-11-24T13:00:00Z');
    const ts = [Date.parse('2026-11-23T23:59:59.999Z'), Date.parse('2026-11-24T00:00:00Z'), Date.parse('2026-11-24T12:00:00Z')];
    expect([...daysToFile(ts, now)].sort()).toEqual(['2026-11-23', '2026-11-24', '2026-11-25']);
  });
});
