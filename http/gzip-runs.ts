import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * Gzip (RFC 1952) for a page whose text mostly repeats from one request to
 * the next: the portal page is 20-45 KB, of which a few hundred bytes are the
 * guest's own (the device's form fields, the links that carry its query).
 * Compressing it whole cost 260 µs of CPU a page at gzip level 6 and 580 µs
 * with brotli (bench/results/stadium-storm.md, 2026-11-29), more than the
 * sign-in it leads to. Here each repeating run (even places of
 * portal-template.ts's renderRuns) is deflated once, ending on a byte
 * boundary (a sync flush, so any deflate data may follow it), and kept; the
 * guest's values between runs go as stored blocks, and only the CRC-32 is
 * computed per page. A page costs a few KB more on the wire than one
 * compressed whole, for about a tenth of a whole gzip's CPU.
 */
export class GzipRuns {
  private readonly cache = new Map<string, Buffer>();
  private bytes = 0;

  /** @param maxBytes what the kept runs may hold (their text and their deflate data); the oldest go first. */
  constructor(private readonly maxBytes = 16 * 1024 * 1024) {}

  /** The gzip member of `runs.join('')`; runs at even places are kept, odd places are sent stored. */
  gzip(runs: readonly string[]): Buffer {
    const out: Buffer[] = [HEADER];
    let crc = 0;
    let size = 0;
    for (let i = 0; i < runs.length; i++) {
      const text = runs[i]!;
      if (text === '') continue;
      crc = crc32(text, crc);
      if (i % 2 === 0) {
        const deflated = this.deflated(text);
        out.push(deflated);
        size += Buffer.byteLength(text);
      } else {
        const raw = Buffer.from(text);
        for (let at = 0; at < raw.length; at += STORED_MAX) out.push(storedHeader(Math.min(STORED_MAX, raw.length - at)), raw.subarray(at, at + STORED_MAX));
        size += raw.length;
      }
    }
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(size >>> 0, 4); // ISIZE: the size modulo 2^32
    out.push(FINAL_BLOCK, trailer);
    return Buffer.concat(out);
  }

  /** What the kept runs hold now, in bytes (text and deflate data). */
  get keptBytes(): number {
    return this.bytes;
  }

  private deflated(text: string): Buffer {
    const kept = this.cache.get(text);
    if (kept) return kept;
    // A sync flush ends the data on a byte boundary without a final block, so more blocks may follow.
    const deflated = deflateRawSync(Buffer.from(text), { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
    const cost = text.length + deflated.length;
    if (cost > this.maxBytes) return deflated;
    for (const [oldest, data] of this.cache) {
      if (this.bytes + cost <= this.maxBytes) break;
      this.cache.delete(oldest);
      this.bytes -= oldest.length + data.length;
    }
    this.cache.set(text, deflated);
    this.bytes += cost;
    return deflated;
  }
}

/** ID1 ID2, CM deflate, no flags, no time, no extra flags, OS unknown. */
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block with fixed codes (BFINAL 1, BTYPE 01, end of block). */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);
const STORED_MAX = 0xffff;

/** A stored block's header (RFC 1951 §3.2.4), not final, starting on a byte boundary: LEN and its complement. */
function storedHeader(len: number): Buffer {
  return Buffer.from([0x00, len & 0xff, len >>> 8, ~len & 0xff, (~len >>> 8) & 0xff]);
}
