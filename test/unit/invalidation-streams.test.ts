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

describe('InvalidationStreams: coalescing per kind', () => {
  let fanout: FakeFanout;
  let streams: InvalidationStreams;
  let got: Invalidation[];
  const listen = () => streams.subscribe('t1', 'live-sessions', { invalidate: (i) => got.push(i), end: () => undefined });

  beforeEach(() => {
    vi.useFakeTimers();
    fanout = new FakeFanout();
    streams = new InvalidationStreams(fanout as unknown as EventFanout, WINDOW);
    got = [];
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

  it('keeps one window per kind, and drops the types the stream does not carry', async () => {
    await listen();
    fanout.let('t1', 'session.start', 'hs_a', '1-0');
    fanout.let('t1', 'session.end', 'hs_a', '1-1');
    fanout.let('t1', 'incident.raised', 'hs_a', '1-2');
    fanout.let('t1', 'auth.success', 'hs_a', '1-3');
    expect(got.map((i) => i.kind)).toEqual(['session_started', 'session_ended']);
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

describe('InvalidationStreams: a sustained burst stretches the window with what broadcasting costs', () => {
  it('a listener that takes 30 ms per invalidation gets a window of at least 300 ms while events keep coming', async () => {
    const fanout = new FakeFanout();
    const streams = new InvalidationStreams(fanout as unknown as EventFanout, 20);
    const at: number[] = [];
    const spin = (ms: number): void => {
      const end = performance.now() + ms;
      while (performance.now() < end) { /* a broadcast to many clients */ }
    };
    await streams.subscribe('t1', 'live-sessions', { invalidate: () => { at.push(performance.now()); spin(30); }, end: () => undefined });
    const started = performance.now();
    let n = 0;
    while (performance.now() - started < 900) {
      fanout.let('t1', 'session.start', 'hs_1', `${Date.now()}-${n++}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    streams.close();
    // Without the stretch a 20 ms window would give about 900 / 50 = 18 broadcasts.
    expect(at.length).toBeGreaterThanOrEqual(2);
    expect(at.length).toBeLessThanOrEqual(6);
    // After the leading one and the first window, broadcasts are at least 10 x 30 ms apart.
    for (let i = 2; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(290);
  });
});
