import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearOfMidnight } from '../support/poll.js';

/** The tests that read records back by their day wait through a midnight, never across one. */
describe('clearOfMidnight', () => {
  afterEach(() => { vi.useRealTimers(); });

  const settledAfter = async (now: string, needMs: number, tz?: string): Promise<number> => {
    vi.useFakeTimers({ now: Date.parse(now) });
    let done = false;
    const wait = clearOfMidnight(needMs, tz).then(() => { done = true; });
    await vi.advanceTimersByTimeAsync(0);
    let waited = 0;
    while (!done) {
      await vi.advanceTimersByTimeAsync(1_000);
      waited += 1_000;
    }
    await wait;
    return waited;
  };

  it('goes on at once far from midnight, waits past it when it is near', async () => {
    expect(await settledAfter('2026-11-30T12:00:00Z', 90_000)).toBe(0);
    const waited = await settledAfter('2026-11-30T23:59:00Z', 90_000);
    expect(waited).toBeGreaterThanOrEqual(60_000);
    expect(waited).toBeLessThanOrEqual(62_000);
  });

  it("counts the midnight of the zone it is given (Istanbul's is 21:00 UTC)", async () => {
    expect(await settledAfter('2026-11-30T23:59:50Z', 20_000, 'Europe/Istanbul')).toBe(0);
    expect(await settledAfter('2026-11-30T20:59:50Z', 20_000, 'Europe/Istanbul')).toBeGreaterThanOrEqual(10_000);
  });
});
