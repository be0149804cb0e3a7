import type { AccessDecision } from './ports.js';
import type { LiveSession } from './session-store.js';

const MB = 1048576;

/** What decide() reads of a device's live session: its time, its limits, and its usage as last known. */
export type DecisionSession = Pick<LiveSession,
  'sid' | 'untilMs' | 'idleSec' | 'downKbps' | 'upKbps' | 'quotaMb' | 'sessionQuotaMb' | 'bytesIn' | 'bytesOut' | 'daily'>
  & Partial<Pick<LiveSession, 'ssids'>>;

/**
 * The answer to an Access-Request, from what the hotspot's actor holds:
 * the device's live session (null when it has none: never signed in, ended,
 * or ended by a block), and `now`. Pure: the actor first finds the session
 * and brings `daily` (the device's bytes today, in the hotspot's local day)
 * up to date; nothing here reads a clock or a store.
 *
 * A session limited to some SSIDs (a voucher's list) is refused on any
 * other SSID the NAS names in Called-Station-Id (RFC 3580 §3.20): the
 * network's word, not the one the guest gave the portal. A NAS that names
 * none is not refused for it (the portal's check stood at sign-in).
 *
 * Accepted, the NAS gets the seconds left of the session (at least 1: a
 * session in its last second still gets a valid Session-Timeout) and the
 * bytes left of the tighter of the daily and the session quota.
 */
export function decide(request: { mac: string; ssid?: string | undefined }, s: DecisionSession | null, nowMs: number): AccessDecision {
  if (!request.mac) return { accept: false, reason: 'No device address in the request' };
  if (!s || s.untilMs <= nowMs) return { accept: false, reason: 'Please sign in on the portal' };
  if (s.ssids && request.ssid && !ssidListed(s.ssids, request.ssid)) return { accept: false, reason: 'Not allowed on this network' };
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

/**
 * `ssid` is one of the newline-separated `list` (use-voucher-18.lua's rule:
 * an SSID holding a newline would match two names at once, so it matches none).
 */
export function ssidListed(list: string, ssid: string): boolean {
  if (ssid.includes('\n')) return false;
  let at = list.indexOf(ssid);
  while (at >= 0) {
    const end = at + ssid.length;
    if ((at === 0 || list.charCodeAt(at - 1) === 10) && (end === list.length || list.charCodeAt(end) === 10)) return true;
    at = list.indexOf(ssid, at + 1);
  }
  return false;
}

/** Whole seconds until `untilMs`, at least 1: the Session-Timeout a NAS is given (Access-Accept and CoA alike). */
export function secondsLeft(untilMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((untilMs - nowMs) / 1000));
}
