import { describe, expect, it } from 'vitest';
import { outboxFields } from '../../engine/store/outbox-record.js';

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
});
