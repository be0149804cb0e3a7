import { describe, expect, it } from 'vitest';
import { DuplicateCache } from '../../radius/duplicate-cache.js';

describe('DuplicateCache (RFC 5080 §2.2.2)', () => {
  it('remembers a request for its TTL only', () => {
    let now = 1000;
    const c = new DuplicateCache(30_000, 100, () => now);
    const e = c.begin('k');
    expect(c.get('k')).toBe(e);
    e.reply = Buffer.from('r');
    now += 29_999;
    expect(c.get('k')?.reply?.toString()).toBe('r');
    now += 1;
    expect(c.get('k')).toBeUndefined();
  });

  it('stays within maxEntries, dropping the oldest first, and sweeps expired entries on insert', () => {
    let now = 0;
    const c = new DuplicateCache(1000, 3, () => now);
    for (const k of ['a', 'b', 'c', 'd']) c.begin(k);
    expect(c.size).toBe(3);
    expect(c.get('a')).toBeUndefined();
    expect(c.get('d')).toBeDefined();
    now = 5000;
    c.begin('e');
    expect(c.size).toBe(1);
  });

  it('under a flood keeps exactly the newest maxEntries keys', () => {
    let now = 0;
    const c = new DuplicateCache(30_000, 1000, () => now);
    for (let i = 0; i < 50_000; i++) { c.begin(`k${i}`); if (i % 100 === 0) now++; }
    expect(c.size).toBe(1000);
    expect(c.get('k48999')).toBeUndefined();
    expect(c.get('k49000')).toBeDefined();
    expect(c.get('k49999')).toBeDefined();
  });

  it('forgets a failed request only if the entry is still the same one', () => {
    const c = new DuplicateCache(1000, 10);
    const first = c.begin('k');
    c.forget('k', first);
    expect(c.get('k')).toBeUndefined();
    const second = c.begin('k');
    c.forget('k', first);
    expect(c.get('k')).toBe(second);
    // The first entry's ring slot, evicted later, must not take the second with it.
    for (let i = 0; i < 9; i++) c.begin(`x${i}`);
    expect(c.get('k')).toBe(second);
  });
});
