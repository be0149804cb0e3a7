import { describe, expect, it } from 'vitest';
import { DuplicateCache } from '../../radius/duplicate-cache.js';

/** A request's first 20 octets: code, Identifier, length, Request Authenticator. */
function header(code: number, id: number, auth: number | Uint8Array): Buffer {
  const b = Buffer.alloc(20);
  b[0] = code;
  b[1] = id;
  if (typeof auth === 'number') b.writeUInt32BE(auth >>> 0, 16);
  else b.set(auth, 4);
  return b;
}

const req = (n: number): Buffer => header(1, n & 255, n);

describe('DuplicateCache (RFC 5080 §2.2.2)', () => {
  it('remembers a request for its TTL only; in flight it has no reply, answered it has its own', () => {
    let now = 1000;
    const c = new DuplicateCache(30_000, 100, () => now);
    expect(c.seen(req(1), 1812, '10.0.0.1')).toBe(-1);
    const h = c.begin();
    expect(c.seen(req(1), 1812, '10.0.0.1')).toBe(h);
    expect(c.reply(h)).toBeNull();
    c.answered(h, Buffer.from('r'));
    now += 29_999;
    expect(c.reply(c.seen(req(1), 1812, '10.0.0.1'))?.toString()).toBe('r');
    now += 1;
    expect(c.seen(req(1), 1812, '10.0.0.1')).toBe(-1);
  });

  it('tells apart what RFC 5080 keys on: code, Identifier, authenticator, source port and address', () => {
    const c = new DuplicateCache(30_000, 100);
    const auth = new Uint8Array(16).fill(7);
    const base = (): number => c.seen(header(4, 9, auth), 40000, '2001:db8::1');
    expect(base()).toBe(-1);
    const h = c.begin();
    const other = new Uint8Array(auth);
    other[15] = 8; // the authenticator's last octet
    const variants: [Buffer, number, string][] = [
      [header(1, 9, auth), 40000, '2001:db8::1'],
      [header(4, 10, auth), 40000, '2001:db8::1'],
      [header(4, 9, other), 40000, '2001:db8::1'],
      [header(4, 9, auth), 40001, '2001:db8::1'],
      [header(4, 9, auth), 40000, '2001:db8::2'],
      [header(4, 9, auth), 40000, '2001:db8::10'],
    ];
    for (const [m, port, address] of variants) expect(c.seen(m, port, address)).toBe(-1);
    expect(base()).toBe(h);
    // The longest address text there is.
    const long = '0000:0000:0000:0000:0000:ffff:255.255.255.255';
    expect(c.seen(req(5), 1, long)).toBe(-1);
    const hl = c.begin();
    expect(c.seen(req(5), 1, long)).toBe(hl);
    expect(c.seen(req(5), 1, long.slice(0, -1) + '4')).toBe(-1);
  });

  it('stays within maxEntries, dropping the oldest first, and sweeps expired entries on insert', () => {
    let now = 0;
    const c = new DuplicateCache(1000, 3, () => now);
    for (const n of [1, 2, 3, 4]) { c.seen(req(n), 1812, '10.0.0.1'); c.begin(); }
    expect(c.size).toBe(3);
    expect(c.seen(req(1), 1812, '10.0.0.1')).toBe(-1);
    expect(c.seen(req(4), 1812, '10.0.0.1')).toBeGreaterThanOrEqual(0);
    now = 5000;
    c.seen(req(5), 1812, '10.0.0.1');
    c.begin();
    expect(c.size).toBe(1);
  });

  it('under a flood keeps exactly the newest maxEntries keys', () => {
    let now = 0;
    const c = new DuplicateCache(30_000, 1000, () => now);
    for (let i = 0; i < 50_000; i++) {
      c.seen(req(i), 1812, '10.0.0.1');
      c.begin();
      if (i % 100 === 0) now++;
    }
    expect(c.size).toBe(1000);
    expect(c.seen(req(48_999), 1812, '10.0.0.1')).toBe(-1);
    expect(c.seen(req(49_000), 1812, '10.0.0.1')).toBeGreaterThanOrEqual(0);
    expect(c.seen(req(49_999), 1812, '10.0.0.1')).toBeGreaterThanOrEqual(0);
  });

  it('forgets a failed request only if the entry is still the same one; a late answer to an evicted one is dropped', () => {
    const c = new DuplicateCache(1000, 10);
    c.seen(req(1), 1812, '10.0.0.1');
    const first = c.begin();
    c.forget(first);
    expect(c.seen(req(1), 1812, '10.0.0.1')).toBe(-1);
    const second = c.begin();
    c.forget(first);
    expect(c.seen(req(1), 1812, '10.0.0.1')).toBe(second);
    // The first entry's ring slot, evicted later, must not take the second with it.
    for (let i = 2; i < 11; i++) { c.seen(req(i), 1812, '10.0.0.1'); c.begin(); }
    expect(c.seen(req(1), 1812, '10.0.0.1')).toBe(second);
    // Ten more: the second is evicted and its slot reused; its answer, late, changes nothing.
    for (let i = 11; i < 21; i++) { c.seen(req(i), 1812, '10.0.0.1'); c.begin(); }
    c.answered(second, Buffer.from('late'));
    expect(c.reply(second)).toBeNull();
    for (let i = 11; i < 21; i++) expect(c.reply(c.seen(req(i), 1812, '10.0.0.1'))).toBeNull();
  });

  it('agrees with a plain Map model through random arrivals, answers, failures and time, on colliding keys', () => {
    // Few keys, many repeats, a small cache: every probe run, eviction and backward shift is exercised.
    let now = 0;
    const c = new DuplicateCache(500, 40, () => now);
    type Rec = { key: string; at: number; reply: string | null; handle: number };
    const model = new Map<string, Rec>();
    const ring: Rec[] = [];
    const drop = (r: Rec): void => { if (model.get(r.key) === r) model.delete(r.key); };
    let seed = 12345;
    const rand = (n: number): number => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 12) % n; };
    let duplicates = 0, forgotten = 0, evicted = 0;
    // Plain checks in the loop: 800,000 expect() calls took half a minute, near the test time-out on a busy machine.
    let step = 0;
    const check = (ok: boolean, what: () => string): void => { if (!ok) throw new Error(`step ${step}: ${what()}`); };
    for (; step < 200_000; step++) {
      const n = rand(120);
      // Half the keys share their authenticator's first word and their port: the same neighbourhood of the table.
      const m = header(1 + (n % 2) * 3, n % 7, n < 60 ? new Uint8Array([1, 2, 3, 4, ...new Array<number>(11).fill(0), n]) : n * 2654435761);
      const port = n < 60 ? 1812 : 1812 + (n % 3);
      const key = `${n}`;
      const h = c.seen(m, port, `10.0.${n % 5}.1`);
      const e = model.get(key);
      const live = e !== undefined && e.at + 500 > now;
      check(h >= 0 === live, () => `seen ${h} for key ${key}, whose entry is ${live ? 'live' : 'gone'}`);
      if (h >= 0) {
        duplicates++;
        check(h === e!.handle, () => `handle ${h} for key ${key}, not ${e!.handle}`);
        const reply = c.reply(h)?.toString() ?? null;
        check(reply === e!.reply, () => `reply ${reply} for key ${key}, not ${e!.reply}`);
        if (rand(10) === 0) { c.forget(h); model.delete(key); forgotten++; }
      } else {
        const got = c.begin();
        while (ring.length && ring[0]!.at + 500 <= now) drop(ring.shift()!);
        if (ring.length === 40) { drop(ring.shift()!); evicted++; }
        const r: Rec = { key, at: now, reply: null, handle: got };
        model.set(key, r);
        ring.push(r);
        if (rand(3) > 0) { r.reply = `r${step}`; c.answered(got, Buffer.from(r.reply)); }
      }
      check(c.size >= model.size, () => `size ${c.size} below the model's ${model.size}`);
      if (rand(4) === 0) now += rand(30);
    }
    // Every path taken many times over.
    expect(Math.min(duplicates, forgotten, evicted)).toBeGreaterThan(1000);
  });
});
