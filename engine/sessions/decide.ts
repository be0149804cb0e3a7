import type { AccessDecision } from './ports.js';
import type { LiveSession } from './session-store.js';

const MB = 1048576;

/** What decide() reads of a device's live session: its time, its limits, and its usage as last known. */
export type DecisionSession = Pick<LiveSession,
  'sid' | 'untilMs' | 'idleSec' | 'downKbps' | 'upKbps' | 'quotaMb' | 'sessionQuotaMb' | 'bytesIn' | 'bytesOut' | 'daily'>;

/**
 * The answer to an Access-Request, from what the hotspot's actor holds:
 * the device's live session (null when it has none: never signed in, ended,
 * or ended by a block), and `now`. Pure: the actor first finds the session
 * and brings `daily` (the device's bytes today, in the hotspot's local day)
 * up to date; nothing here reads a clock or a store.
 *
 * Accepted, the NAS gets the seconds left of the session (at least 1: a
 * session in its last second still gets a valid Session-Timeout) and the
 * bytes left of the tighter of the daily and the session quota.
 */
export function decide(request: { mac: string }, s: DecisionSession | null, nowMs: number): AccessDecision {
  if (!request.mac) return { accept: false, reason: 'No device address in the request' };
  if (!s || s.untilMs <= nowMs) return { accept: false, reason: 'Please sign in on the portal' };
  let quotaBytes: number | null = null;
  if (s.quotaMb > 0) {
    const left = s.quotaMb * MB - s.daily;
    if (left <= 0) return { accept: false, reason: 'Daily data quota used up' };
    quotaBytes = left;
  }
  if (s.sessionQuotaMb > 0) {
    // Totals as of the last accounting, which checks this quota atomically and ends the session at it.
    const left = s.sessionQuotaMb * MB - (s.bytesIn + s.bytesOut);
    if (left <= 0) return { accept: false, reason: 'Session data quota used up' };
    quotaBytes = quotaBytes === null ? left : Math.min(quotaBytes, left);
  }
  return {
    accept: true, sessionId: s.sid, sessionTimeout: secondsLeft(s.untilMs, nowMs),
    idleTimeout: s.idleSec, downKbps: s.downKbps, upKbps: s.upKbps, quotaBytes,
  };
}

/** Whole seconds until `untilMs`, at least 1: the Session-Timeout a NAS is given (Access-Accept and CoA alike). */
export function secondsLeft(untilMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((untilMs - nowMs) / 1000));
}
