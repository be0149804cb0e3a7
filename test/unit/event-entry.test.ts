import { describe, expect, it } from 'vitest';
import { parseEventEntry } from '../../engine/events/event-entry.js';

const fields = (data: string): string[] => ['type', 'session.start', 'ts', '1700000000123', 'site', 'hs_1', 'data', data];

describe('parseEventEntry', () => {
  it('reads the envelope, and the data when asked for, in JSON too (a webhook body)', () => {
    const e = parseEventEntry('tn_1', '1700000000123-0', fields('{"session_id":"ses_1","mac":"AA:BB:CC:DD:EE:FF"}'))!;
    expect(e).toMatchObject({ id: '1700000000123-0', tenantId: 'tn_1', type: 'session.start', ts: 1700000000123, siteId: 'hs_1' });
    expect(e.data).toEqual({ session_id: 'ses_1', mac: 'AA:BB:CC:DD:EE:FF' });
    expect(JSON.parse(JSON.stringify(e))).toEqual({
      id: '1700000000123-0', tenantId: 'tn_1', type: 'session.start', ts: 1700000000123, siteId: 'hs_1',
      data: { session_id: 'ses_1', mac: 'AA:BB:CC:DD:EE:FF' },
    });
  });

  it('skips a type this build does not know; a data that is no JSON object reads as {}; no site is null', () => {
    expect(parseEventEntry('tn_1', '1-0', ['type', 'future.thing', 'ts', '1', 'site', '', 'data', '{}'])).toBeNull();
    expect(parseEventEntry('tn_1', '1-0', fields('not json'))!.data).toEqual({});
    expect(parseEventEntry('tn_1', '1-0', fields('[1,2]'))!.data).toEqual({});
    const tenantWide = parseEventEntry('tn_1', '42-0', ['type', 'incident.raised', 'ts', 'x', 'site', '', 'data', '{}'])!;
    expect(tenantWide.siteId).toBeNull();
    expect(tenantWide.ts).toBe(42);
  });
});
