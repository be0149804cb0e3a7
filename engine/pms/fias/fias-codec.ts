/**
 * Oracle Hospitality FIAS (Fidelio Interface Application Specification) over
 * TCP: each record is framed STX (0x02) ... ETX (0x03); inside, the record
 * type (two letters) then `|`-separated fields, each a two-character field id
 * and its value, the record ending with `|`:
 *
 *   STX LS|DA261128|TI120000| ETX
 *   STX GI|RN101|G#4711|GNKöhler|GFAnna|GSN|DA261128|TI120000| ETX
 *
 * Text is UTF-8 (Opera's FIAS 2.x over TCP/IP; older serial links spoke a
 * code page, which a link of ours never meets). A field id is any two
 * characters (`G#`, `GN`, `RO`); a value never holds `|`, STX or ETX, so
 * encode() drops those from values rather than corrupt the frame.
 */

export const STX = 0x02;
export const ETX = 0x03;

/** A decoded record: its type and its fields in order (a field id seen twice keeps its first value in get()). */
export interface FiasRecord {
  type: string;
  fields: ReadonlyArray<readonly [id: string, value: string]>;
}

/** The first value of a field, or undefined. */
export function field(r: FiasRecord, id: string): string | undefined {
  for (const [k, v] of r.fields) if (k === id) return v;
  return undefined;
}

/** A record from its type and fields, in the order given. */
export function record(type: string, fields: Record<string, string> = {}): FiasRecord {
  return { type, fields: Object.entries(fields) };
}

/** DA (yymmdd) and TI (hhmmss) of a moment, UTC: every record we send carries them. */
export function stamp(ms: number): Record<'DA' | 'TI', string> {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return {
    DA: `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}`,
    TI: `${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}`,
  };
}

const clean = (v: string): string => v.replace(/[|\u0002\u0003]/g, '');

/** One record, framed: STX type|idvalue|...| ETX. */
export function encode(r: FiasRecord): Buffer {
  let body = `${r.type}|`;
  for (const [id, value] of r.fields) body += `${id}${clean(value)}|`;
  const text = Buffer.from(body, 'utf8');
  const out = Buffer.allocUnsafe(text.length + 2);
  out[0] = STX;
  text.copy(out, 1);
  out[out.length - 1] = ETX;
  return out;
}

/** Parses the text between STX and ETX; null when it has no two-letter record type. */
export function parseBody(text: string): FiasRecord | null {
  const parts = text.split('|');
  const type = parts[0] ?? '';
  if (!/^[A-Z0-9]{2}$/.test(type)) return null;
  const fields: [string, string][] = [];
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.length >= 2) fields.push([p.slice(0, 2), p.slice(2)]);
  }
  return { type, fields };
}

/**
 * Reassembles records from a TCP byte stream: a record may arrive split over
 * any number of chunks, several in one chunk. Bytes outside STX...ETX (line
 * noise, a keep-alive NUL some middleware sends) are skipped. A frame longer
 * than `maxFrame` bytes is dropped whole, so a peer that never sends ETX
 * cannot make the buffer grow without bound.
 */
export class FrameDecoder {
  private parts: Buffer[] = [];
  private size = 0;
  private inFrame = false;
  private overlong = false;

  constructor(private readonly maxFrame = 64 * 1024) {}

  /** Feeds a chunk; returns the records it completed (malformed frames are skipped and counted). */
  push(chunk: Buffer): FiasRecord[] {
    const out: FiasRecord[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (!this.inFrame) {
        const s = chunk.indexOf(STX, at);
        if (s < 0) break;
        this.inFrame = true;
        this.overlong = false;
        this.parts = [];
        this.size = 0;
        at = s + 1;
        continue;
      }
      const e = chunk.indexOf(ETX, at);
      // A new STX before this frame's ETX: the frame was cut off; start again at the new one.
      const s = chunk.indexOf(STX, at);
      if (s >= 0 && (e < 0 || s < e)) {
        this.malformed++;
        this.inFrame = false;
        at = s;
        continue;
      }
      const end = e < 0 ? chunk.length : e;
      if (!this.overlong) {
        this.size += end - at;
        if (this.size > this.maxFrame) {
          this.overlong = true;
          this.parts = [];
        } else this.parts.push(chunk.subarray(at, end));
      }
      if (e < 0) break;
      this.inFrame = false;
      at = e + 1;
      if (this.overlong) {
        this.malformed++;
        continue;
      }
      const r = parseBody(Buffer.concat(this.parts).toString('utf8'));
      if (r) out.push(r);
      else this.malformed++;
    }
    return out;
  }

  /** Frames skipped as malformed (no record type, cut off, too long). */
  malformed = 0;
}
