import { describe, expect, it } from 'vitest';
import { ETX, FrameDecoder, STX, encode, field, parseBody, record, stamp } from '../../engine/pms/fias/fias-codec.js';

/** FIAS framing and records (engine/pms/fias/fias-codec.ts): byte vectors, round trips, TCP chunking. */

const frame = (s: string): Buffer => Buffer.concat([Buffer.from([STX]), Buffer.from(s, 'utf8'), Buffer.from([ETX])]);

describe('FIAS codec', () => {
  it('encodes a link start as the bytes of the specification', () => {
    const b = encode(record('LS', { DA: '261128', TI: '120000' }));
    expect([...b]).toEqual([...frame('LS|DA261128|TI120000|')]);
    expect(b[0]).toBe(0x02);
    expect(b[b.length - 1]).toBe(0x03);
  });

  it('stamps DA as yymmdd and TI as hhmmss (UTC)', () => {
    expect(stamp(Date.UTC(2026, 10, 28, 9, 5, 7))).toEqual({ DA: '261128', TI: '090507' });
  });

  it('round-trips a guest record with UTF-8 names and the G# field id', () => {
    const r = record('GI', { RN: '101', 'G#': '4711', GN: 'KÖHLER, A', GF: 'Ayşe', GS: 'N' });
    const [back] = new FrameDecoder().push(encode(r));
    expect(back).toEqual(r);
    expect(field(back!, 'G#')).toBe('4711');
    expect(field(back!, 'GN')).toBe('KÖHLER, A');
  });

  it('drops |, STX and ETX from values instead of breaking the frame', () => {
    const [back] = new FrameDecoder().push(encode(record('GI', { GN: 'A|B\u0002C\u0003D' })));
    expect(field(back!, 'GN')).toBe('ABCD');
  });

  it('reassembles records split over TCP chunks at every byte, several per chunk', () => {
    const a = record('GI', { RN: '101', 'G#': '1', GN: 'Işık' });
    const b = record('GO', { RN: '101', 'G#': '1' });
    const c = record('LA', { DA: '261128', TI: '120001' });
    const stream = Buffer.concat([encode(a), encode(b), encode(c)]);
    for (let cut = 1; cut < stream.length; cut++) {
      for (let cut2 = cut; cut2 <= stream.length; cut2 += 7) {
        const d = new FrameDecoder();
        const got = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut, cut2)), ...d.push(stream.subarray(cut2))];
        expect(got).toEqual([a, b, c]);
      }
    }
    // One byte at a time, a multi-byte UTF-8 letter split too.
    const d = new FrameDecoder();
    const got = [...stream].flatMap((x) => d.push(Buffer.from([x])));
    expect(got).toEqual([a, b, c]);
  });

  it('skips noise between frames, a frame cut off by the next STX, and a frame with no record type', () => {
    const d = new FrameDecoder();
    const got = d.push(Buffer.concat([Buffer.from('\r\n\u0000'), Buffer.from([STX]), Buffer.from('GI|RN10'), frame('LA|'), frame('x|RN1|')]));
    expect(got.map((r) => r.type)).toEqual(['LA']);
    expect(d.malformed).toBe(2);
  });

  it('drops a frame longer than its limit whole and goes on with the next', () => {
    const d = new FrameDecoder(32);
    const long = frame(`GI|GN${'x'.repeat(100)}|`);
    expect(d.push(Buffer.concat([long.subarray(0, 50)]))).toEqual([]);
    expect(d.push(Buffer.concat([long.subarray(50), frame('LA|')])).map((r) => r.type)).toEqual(['LA']);
    expect(d.malformed).toBe(1);
  });

  it('reads a body without a trailing bar, and refuses one with no two-letter type', () => {
    expect(parseBody('GO|RN101|G#7')).toEqual({ type: 'GO', fields: [['RN', '101'], ['G#', '7']] });
    expect(parseBody('|RN1|')).toBeNull();
  });
});
