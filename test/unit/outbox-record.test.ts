import { describe, expect, it } from 'vitest';
import { outboxEntry, outboxFields } from '../../engine/store/outbox-record.js';

describe('outbox records', () => {
  it('reads the one-field shape and the older field-pair shape alike', () => {
    const fields = { type: 'session_end', sid: 'sess_1', at: '1764000000000', reason: 'idle_timeout' };
    expect(outboxFields(outboxEntry(fields))).toEqual(fields);
    expect(outboxFields(Object.entries(fields).flat())).toEqual(fields);
    const awkward = { mac: '02:A0:00:00:00:01', user: 'say ":hi" \\u0000 then', ssid: '{"x":1}' };
    expect(outboxFields(outboxEntry(awkward))).toEqual(awkward);
  });

  it('makes every value storable text: U+0000 becomes U+FFFD, a number or false (as cjson writes them) text or ""', () => {
    expect(outboxFields(['rec', '{"ssid":"Gu\\u0000est","at":1764000000000,"user":false,"ip":null,"x":{"a":1}}']))
      .toEqual({ ssid: 'Gu\uFFFDest', at: '1764000000000', user: '', ip: '', x: '{"a":1}' });
    expect(outboxFields(['ssid', 'Gu\0est'])).toEqual({ ssid: 'Gu\uFFFDest' });
  });

  it('throws SyntaxError for a rec that is not a JSON object', () => {
    for (const bad of ['{"type":', '[1,2]', '"text"', 'null']) expect(() => outboxFields(['rec', bad])).toThrow(SyntaxError);
  });
});
