import { describe, expect, it } from 'vitest';
import { decide, secondsLeft, type DecisionSession } from '../../engine/sessions/decide.js';

const MB = 1048576;
const NOW = Date.parse('2026-11-24T12:00:00.000Z');
const MAC = 'AA:BB:CC:00:00:01';

/** A live session with an hour left, no quotas, some limits; `over` changes what a case is about. */
function session(over: Partial<DecisionSession> = {}): DecisionSession {
  return {
    sid: 'sess_0123456789abcdef', untilMs: NOW + 3_600_000, idleSec: 600, downKbps: 10_000, upKbps: 5_000,
    quotaMb: 0, sessionQuotaMb: 0, bytesIn: 0, bytesOut: 0, daily: 0, ...over,
  };
}

describe('decide (the Access-Request decision)', () => {
  it('accepts a live session with its id, time left, idle timeout and bandwidth; no quota: unlimited', () => {
    expect(decide({ mac: MAC }, session(), NOW)).toEqual({
      accept: true, sessionId: 'sess_0123456789abcdef', sessionTimeout: 3600, idleTimeout: 600,
      downKbps: 10_000, upKbps: 5_000, quotaBytes: null,
    });
  });

  it('refuses a request without a device address, whatever the session', () => {
    expect(decide({ mac: '' }, session(), NOW)).toEqual({ accept: false, reason: 'No device address in the request' });
  });

  it('refuses a device with no live session: never signed in, or blocked (the block ended its sessions)', () => {
    expect(decide({ mac: MAC }, null, NOW)).toEqual({ accept: false, reason: 'Please sign in on the portal' });
  });

  it('refuses a session whose time has ended, from its last millisecond on', () => {
    expect(decide({ mac: MAC }, session({ untilMs: NOW }), NOW)).toEqual({ accept: false, reason: 'Please sign in on the portal' });
    expect(decide({ mac: MAC }, session({ untilMs: NOW - 60_000 }), NOW)).toMatchObject({ accept: false });
    expect(decide({ mac: MAC }, session({ untilMs: NOW + 1 }), NOW)).toMatchObject({ accept: true, sessionTimeout: 1 });
  });

  it('rounds the session timeout up to whole seconds, and never gives less than one', () => {
    expect(decide({ mac: MAC }, session({ untilMs: NOW + 1_001 }), NOW)).toMatchObject({ sessionTimeout: 2 });
    expect(decide({ mac: MAC }, session({ untilMs: NOW + 2_000 }), NOW)).toMatchObject({ sessionTimeout: 2 });
    expect(decide({ mac: MAC }, session({ untilMs: NOW + 999 }), NOW)).toMatchObject({ sessionTimeout: 1 });
    expect(secondsLeft(NOW + 90_500, NOW)).toBe(91);
    expect(secondsLeft(NOW - 5_000, NOW)).toBe(1);
  });

  it('gives the bytes left of the daily quota, and refuses once it is used up', () => {
    expect(decide({ mac: MAC }, session({ quotaMb: 500, daily: 100 * MB }), NOW)).toMatchObject({ accept: true, quotaBytes: 400 * MB });
    expect(decide({ mac: MAC }, session({ quotaMb: 500, daily: 500 * MB }), NOW)).toEqual({ accept: false, reason: 'Daily data quota used up' });
    expect(decide({ mac: MAC }, session({ quotaMb: 500, daily: 501 * MB }), NOW)).toMatchObject({ accept: false, reason: 'Daily data quota used up' });
  });

  it('gives the bytes left of the session quota, in and out together, and refuses once it is used up', () => {
    expect(decide({ mac: MAC }, session({ sessionQuotaMb: 250, bytesIn: 50 * MB, bytesOut: 25 * MB }), NOW))
      .toMatchObject({ accept: true, quotaBytes: 175 * MB });
    expect(decide({ mac: MAC }, session({ sessionQuotaMb: 250, bytesIn: 200 * MB, bytesOut: 50 * MB }), NOW))
      .toEqual({ accept: false, reason: 'Session data quota used up' });
  });

  it('with both quotas, gives the tighter; the daily one is checked first', () => {
    const both = { quotaMb: 1000, sessionQuotaMb: 250 };
    expect(decide({ mac: MAC }, session({ ...both, daily: 100 * MB, bytesIn: 10 * MB }), NOW)).toMatchObject({ quotaBytes: 240 * MB });
    expect(decide({ mac: MAC }, session({ ...both, daily: 900 * MB, bytesIn: 10 * MB }), NOW)).toMatchObject({ quotaBytes: 100 * MB });
    expect(decide({ mac: MAC }, session({ ...both, daily: 1000 * MB, bytesIn: 250 * MB }), NOW)).toEqual({ accept: false, reason: 'Daily data quota used up' });
  });

  it('reads the session only: the same inputs give the same answer', () => {
    const s = session({ quotaMb: 500, daily: 1 });
    const before = { ...s };
    expect(decide({ mac: MAC }, s, NOW)).toEqual(decide({ mac: MAC }, s, NOW));
    expect(s).toEqual(before);
  });
});
