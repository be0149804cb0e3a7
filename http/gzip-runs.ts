import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * Gzip (RFC 1952) for a page whose text mostly repeats from one request to
 * the next: the portal page is 20-45 KB, of which a few hundred bytes are the
 * guest's own (the device's form fields, the links that carry its query).
 * Compressing it whole for each guest cost the service 0.6 ms of CPU a page
 * with gzip and 1.8-3.4 ms with brotli, where the plain page costs 0.13 ms:
 * more than the sign-in it leads to (bench/results/stadium-storm.md,
 * 2026-11-29; from kept runs, 0.2 ms). Here each repeating run (even places of
 * portal-template.ts's renderRuns) is deflated once, ending on a byte
 * boundary (a sync flush, so any deflate data may follow it), and kept with
 * its CRC-32 and size; the guest's values between runs go as stored blocks,
 * and the page's CRC-32 is combined from the runs' and computed over the
 * values' bytes alone. The demo page is 8.6 KB on the wire, 1.4 KB more than
 * gzip and 1.8 KB more than brotli made of it whole.
 */
export class GzipRuns {
  private readonly cache = new Map<string, Run>();
  private bytes = 0;

  /** @param maxBytes what the kept runs may hold (their text's length and their deflate data); the oldest go first. */
  constructor(private readonly maxBytes = 16 * 1024 * 1024) {}

  /** The gzip member of `runs.join('')`; runs at even places are kept, odd places are sent stored. */
  gzip(runs: readonly string[]): Buffer {
    const out: Buffer[] = [HEADER];
    let crc = 0;
    let size = 0;
    for (let i = 0; i < runs.length; i++) {
      const text = runs[i]!;
      if (text === '') continue;
      if (i % 2 === 0) {
        const run = this.run(text);
        out.push(run.deflated);
        crc = crc32Combine(crc, run.crc, run.shift);
        size += run.size;
      } else {
        const raw = Buffer.from(text);
        for (let at = 0; at < raw.length; at += STORED_MAX) out.push(storedHeader(Math.min(STORED_MAX, raw.length - at)), raw.subarray(at, at + STORED_MAX));
        crc = crc32(raw, crc);
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

  private run(text: string): Run {
    const kept = this.cache.get(text);
    if (kept) return kept;
    const raw = Buffer.from(text);
    // A sync flush ends the data on a byte boundary without a final block, so more blocks may follow.
    const run = { deflated: deflateRawSync(raw, { level: 9, finishFlush: constants.Z_SYNC_FLUSH }), crc: crc32(raw), size: raw.length, shift: shiftFor(raw.length) };
    const cost = text.length + run.deflated.length;
    if (cost > this.maxBytes) return run;
    for (const [oldest, data] of this.cache) {
      if (this.bytes + cost <= this.maxBytes) break;
      this.cache.delete(oldest);
      this.bytes -= oldest.length + data.deflated.length;
    }
    this.cache.set(text, run);
    this.bytes += cost;
    return run;
  }
}

/** A kept run: its deflate data, and its CRC-32 and size so the page's CRC is combined, not computed. */
interface Run { deflated: Buffer; crc: number; size: number; shift: number }

/*
 * CRC-32 combination, as zlib's crc32_combine (zlib 1.2.12+ crc32.c, which
 * Node does not expose): the CRC of A then B from crc(A), crc(B) and B's
 * length, by multiplying crc(A) by x^(8 len(B)) modulo the CRC polynomial.
 */
const POLY = 0xedb88320;

/** a(x) b(x) modulo p(x), reflected, as zlib's multmodp. */
function multmodp(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) modulo p(x). */
const X2N: number[] = [];
for (let k = 0, p = 0x40000000; k < 32; k++, p = multmodp(p, p)) X2N.push(p);

/** x^(8 len) modulo p(x): what a CRC is multiplied by to move it past `len` bytes. */
function shiftFor(len: number): number {
  let p = 0x80000000;
  for (let k = 3; len > 0; len = Math.floor(len / 2), k++) if (len % 2) p = multmodp(X2N[k % 32]!, p);
  return p;
}

/** The CRC-32 of A then B, from crc(A), crc(B) and shiftFor(B's length). */
function crc32Combine(crcA: number, crcB: number, shiftB: number): number {
  return (multmodp(shiftB, crcA) ^ crcB) >>> 0;
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
