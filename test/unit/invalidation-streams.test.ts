import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventFanout, EventListener } from '../../engine/events/event-fanout.js';
import { InvalidationStreams, type Invalidation } from '../../engine/events/invalidation-streams.js';
import type { DomainEvent, EventType } from '../../engine/events/types.js';

/** A fan-out that hands out the events the test gives it. */
class FakeFanout {
  readonly listeners = new Map<string, Set<EventListener>>();
  fail = false;
  subscribe(tenantId: string, fn: EventListener): () => void {
    const set = this.listeners.get(tenantId) ?? new Set();
    this.listeners.set(tenantId, set);
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(tenantId);
    };
  }
  async ready(): Promise<void> {
    if (this.fail) throw new Error('redis down');
  }
  let(tenantId: string, type: EventType, siteId: string | null, id: string): void {
    const e: DomainEvent = { id, tenantId, type, ts: Number(id.split('-')[0]), siteId, data: {} };
    for (const fn of this.listeners.get(tenantId) ?? []) fn(e);
  }
}

const WINDOW = 500;

describe('InvalidationStreams: coalescing per stream, one invalidation per kind', () => {
  let fanout: FakeFanout;
  let streams: InvalidationStreams;
  let got: Invalidation[];
  let batches: (readonly Invalidation[])[];
  const listen = () => streams.subscribe('t1', 'live-sessions', { invalidate: (b) => { batches.push(b); got.push(...b); }, end: () => undefined });

  beforeEach(() => {
    vi.useFakeTimers();
    fanout = new FakeFanout();
    streams = new InvalidationStreams(fanout as unknown as EventFanout, WINDOW);
    got = [];
    batches = [];
  });
  afterEach(() => {
    streams.close();
    vi.useRealTimers();
  });

  it('sends the first event at once and the rest of the window as one, with the newest id, at its end', async () => {
    await listen();
    fanout.let('t1', 'session.start', 'hs_a', '1000-0');
    expect(got).toEqual([{ kind: 'session_started', ts: 1000, siteId: 'hs_a', id: '1000-0' }]);
    for (let i = 1; i <= 999; i++) fanout.let('t1', 'session.start', 'hs_a', `1000-${i}`);
    expect(got).toHaveLength(1);
    vi.advanceTimersByTime(WINDOW);
    expect(got).toEqual([
      { kind: 'session_started', ts: 1000, siteId: 'hs_a', id: '1000-0' },
      { kind: 'session_started', ts: 1000, siteId: 'hs_a', id: '1000-999' },
    ]);
    // A quiet window closes: the next event goes out at once again.
    vi.advanceTimersByTime(WINDOW);
    expect(got).toHaveLength(2);
    fanout.let('t1', 'session.start', 'hs_a', '3000-0');
    expect(got).toHaveLength(3);
  });

  it('names a site only when every coalesced event was there', async () => {
    await listen();
    fanout.let('t1', 'session.end', 'hs_a', '1-0');
    fanout.let('t1', 'session.end', 'hs_a', '1-1');
    fanout.let('t1', 'session.end', 'hs_b', '1-2');
    fanout.let('t1', 'session.end', 'hs_a', '1-3');
    vi.advanceTimersByTime(WINDOW);
    expect(got.map((i) => i.siteId)).toEqual(['hs_a', null]);
    fanout.let('t1', 'session.end', null, '2-0'); // within the new window; tenant-wide
    vi.advanceTimersByTime(WINDOW);
    expect(got.at(-1)).toMatchObject({ siteId: null, id: '2-0' });
  });

  it('one window per stream: the kinds pending at its end go out as one batch, newest last; other types are dropped', async () => {
    await listen();
    fanout.let('t1', 'session.start', 'hs_a', '1-0');
    fanout.let('t1', 'session.end', 'hs_a', '1-1');
    fanout.let('t1', 'incident.raised', 'hs_a', '1-2');
    fanout.let('t1', 'posture.verdict', 'hs_a', '1-3');
    fanout.let('t1', 'session.extend', 'hs_b', '1-4');
    fanout.let('t1', 'session.end', 'hs_a', '1-5');
    expect(batches).toEqual([[{ kind: 'session_started', ts: 1, siteId: 'hs_a', id: '1-0' }]]);
    vi.advanceTimersByTime(WINDOW);
    expect(batches).toHaveLength(2);
    // One per kind, in the order of each kind's newest event: the last carries the newest id (SSE's Last-Event-ID).
    expect(batches[1]).toEqual([
      { kind: 'session_extended', ts: 1, siteId: 'hs_b', id: '1-4' },
      { kind: 'session_ended', ts: 1, siteId: 'hs_a', id: '1-5' },
    ]);
    // Nothing came in the next window: it closes, and the next event goes out at once.
    vi.advanceTimersByTime(60_000);
    expect(batches).toHaveLength(2);
    fanout.let('t1', 'session.end', 'hs_a', '9-0');
    expect(batches).toHaveLength(3);
  });

  it('one hub per tenant and stream, released with its last listener; a failing read refuses with 503', async () => {
    const stopA = await listen();
    const stopB = await listen();
    await streams.subscribe('t1', 'audit', { invalidate: () => undefined, end: () => undefined });
    expect(streams.hubCount).toBe(2);
    stopA();
    expect(fanout.listeners.get('t1')?.size).toBe(2);
    stopB();
    expect(fanout.listeners.get('t1')?.size).toBe(1);
    fanout.fail = true;
    await expect(streams.subscribe('t2', 'incidents', { invalidate: () => undefined, end: () => undefined }))
      .rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(fanout.listeners.has('t2')).toBe(false);
  });
});

const spin = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* a broadcast to many clients */ }
};

/** Events of `tenants` every 5 ms for `forMs`; per tenant, when its listener was called. */
async function burst(tenants: string[], costMs: number, forMs: number): Promise<Map<string, number[]>> {
  const fanout = new FakeFanout();
  // A window long enough that the producer below, on the same thread, runs within it between the spins.
  const streams = new InvalidationStreams(fanout as unknown as EventFanout, 100);
  const at = new Map<string, number[]>();
  for (const t of tenants) {
    const calls: number[] = [];
    at.set(t, calls);
    await streams.subscribe(t, 'live-sessions', {
      invalidate: (_batch, spent) => {
        calls.push(performance.now());
        spin(costMs);
        spent(costMs);
      },
      end: () => undefined,
    });
  }
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < forMs) {
    for (const t of tenants) fanout.let(t, 'session.start', 'hs_1', `${Date.now()}-${n++}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  streams.close();
  return at;
}

describe('InvalidationStreams: a sustained burst stretches the window with what broadcasting costs the process', () => {
  it('counts the cost a listener reports after writing in slices, not only what the call itself took', async () => {
    vi.useFakeTimers();
    try {
      const fanout = new FakeFanout();
      const streams = new InvalidationStreams(fanout as unknown as EventFanout, 100);
      const at: number[] = [];
      // Returns at once and reports 25 ms of writing 10 ms later, as the HTTP layer's sliced broadcast does.
      await streams.subscribe('t1', 'live-sessions', {
        invalidate: (_b, spent) => { at.push(Date.now()); setTimeout(() => spent(25), 10); },
        end: () => undefined,
      });
      const t0 = Date.now();
      for (let i = 0; i < 400; i++) {
        fanout.let('t1', 'session.start', 'hs_1', `${t0 + i * 10}-${i}`);
        vi.advanceTimersByTime(10);
      }
      streams.close();
      // The leading one, the first window's end at 100 ms, then windows of 40 x 25 ms = 1,000 ms.
      expect(at.map((x) => x - t0)).toEqual([0, 100, 1100, 2100, 3100]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a listener that takes 15 ms per invalidation gets windows of at least 600 ms while events keep coming', async () => {
    const at = (await burst(['t1'], 15, 1500)).get('t1')!;
    // Without the stretch a 100 ms window would give about 1500 / 115 = 13 broadcasts.
    expect(at.length).toBeGreaterThanOrEqual(3);
    expect(at.length).toBeLessThanOrEqual(5);
    // After the leading one and the first window, broadcasts are at least 40 x 15 ms apart.
    for (let i = 2; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(590);
  });

  it('two busy tenants share one budget: each waits for what both broadcasts cost', async () => {
    const at = await burst(['t1', 't2'], 10, 2000);
    for (const calls of at.values()) {
      expect(calls.length).toBeGreaterThanOrEqual(3);
      // Each broadcast costs 10 ms, two tenants 20: windows of 40 x 20 = 800 ms, not the 400 of one tenant alone.
      for (let i = 2; i < calls.length; i++) expect(calls[i]! - calls[i - 1]!).toBeGreaterThanOrEqual(790);
    }
  });
});
