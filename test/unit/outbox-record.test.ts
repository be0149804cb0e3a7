import { describe, expect, it } from 'vitest';
import { outboxFields, RECORD_TYPES } from '../../engine/store/outbox-record.js';
import { auditEntriesOf } from '../../engine/store/outbox-writer.js';

/** An entry's field list as the Lua scripts queue one: its type, then the record as JSON. */
const entry = (fields: Record<string, unknown>): string[] => ['type', String(fields.type), 'rec', JSON.stringify(fields)];

describe('outbox records', () => {
  it('reads the JSON shape and the field-pair shape (operator events, older entries) alike', () => {
    const fields = { type: 'session_end', sid: 'sess_1', at: '1764000000000', reason: 'idle_timeout' };
    expect(outboxFields(entry(fields))).toEqual(fields);
    expect(outboxFields(['rec', JSON.stringify(fields)])).toEqual(fields);
    expect(outboxFields(Object.entries(fields).flat())).toEqual(fields);
    const awkward = { type: 'audit', mac: '02:A0:00:00:00:01', user: 'say ":hi" \\u0000 then', ssid: '{"x":1}' };
    expect(outboxFields(entry(awkward))).toEqual(awkward);
  });

  it('makes every value storable text: U+0000 becomes U+FFFD, a number or false (as cjson writes them) text or ""', () => {
    expect(outboxFields(['rec', '{"ssid":"Gu\\u0000est","at":1764000000000,"user":false,"ip":null,"x":{"a":1}}']))
      .toEqual({ ssid: 'Gu\uFFFDest', at: '1764000000000', user: '', ip: '', x: '{"a":1}' });
    expect(outboxFields(['ssid', 'Gu\0est'])).toEqual({ ssid: 'Gu\uFFFDest' });
    // Whitespace around the colon (not what cjson writes, but valid JSON) hides nothing.
    expect(outboxFields(['rec', '{"type":"session_end","sid" :123,"mac"\t:["a"],"hs" : {"x":"y"},"user" :null}']))
      .toEqual({ type: 'session_end', sid: '123', mac: '["a"]', hs: '{"x":"y"}', user: '' });
  });

  it('throws SyntaxError for a rec that is not a JSON object', () => {
    for (const bad of ['{"type":', '[1,2]', '"text"', 'null']) expect(() => outboxFields(['rec', bad])).toThrow(SyntaxError);
  });

  it('stores the method-neutral session_start and a voucher_use queued by the version before alike', () => {
    expect([...RECORD_TYPES].sort()).toEqual(['audit', 'session_end', 'session_extend', 'session_start', 'voucher_use']);
    const common = { sid: 'sess_1', hs: 'hs_1', mac: '02:00:00:00:00:01', ip: '10.0.0.1', ssid: 'Guest', at: '1764000000000', until: '1764003600000', user: 'CODE-1' };
    const legacy = { type: 'voucher_use', use: 'vu_1', vid: 'vch_1', ...common, method: 'voucher' };
    const start = { type: 'session_start', vid: 'vch_1', ...common, method: 'voucher' };
    const [a, b] = auditEntriesOf([{ tenant: 'tn_1', f: legacy }, { tenant: 'tn_1', f: start }]);
    expect(a).toEqual(b);
    expect(a).toEqual({
      tenant_id: 'tn_1', id: 'sess_1:start', event_type: 'session_start', ts: 1764000000000, session_id: 'sess_1', mac_address: common.mac,
      ip_address: '10.0.0.1', username: 'CODE-1', auth_method: 'voucher', ssid: 'Guest', hotspot_id: 'hs_1',
      details: { until: '2025-11-24T17:00:00.000Z', voucher_id: 'vch_1' },
    });
    // A voucher_use of the oldest versions carried no method: a voucher's, then.
    expect(auditEntriesOf([{ tenant: 'tn_1', f: { ...legacy, method: undefined } }])[0]!.auth_method).toBe('voucher');
    // A start without a voucher carries its own method and no voucher_id.
    const otp = auditEntriesOf([{ tenant: 'tn_1', f: { ...start, vid: '', method: 'sms_otp', user: '+905551234567' } }])[0]!;
    expect(otp).toMatchObject({ event_type: 'session_start', auth_method: 'sms_otp', username: '+905551234567', details: { until: '2025-11-24T17:00:00.000Z' } });
    expect(otp.details).not.toHaveProperty('voucher_id');
  });
});
