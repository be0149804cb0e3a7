import type { AcctMsg } from './messages.js';
import type { AccountOutcome, LiveSession } from './session-store.js';

/**
 * What an accounting report does to an actor's copy of a live session
 * (hotspot-actor.ts): whether it needs Redis at all, and what the script's
 * reply changes in the copy. The copy is updated only from here, so the
 * next report can be compared with it exactly.
 */

/**
 * An Interim-Update that changes nothing Redis holds for the session, so nothing a quota or a
 * time-out depends on: the session's current Acct-Session-Id with the totals last recorded for it
 * (no bytes: the session's totals, the daily counter and the last activity, hence the idle deadline,
 * stay as they are), from the same NAS and User-Name, naming no other IP, SSID, access point or
 * signal. Recording it would write the same values again: it needs no script. The actor's copy is
 * exact here: it is updated only from the script's reply, and one device's reports run in order.
 * Anything else, counters that went backwards included, goes through the script.
 * docs/sessions.md, "Accounting: what needs a script, and what is durable when".
 */
export function changesNothing(s: LiveSession, m: AcctMsg): boolean {
  return m.acctSessionId === s.acctId && m.inOctets === s.acctIn && m.outOctets === s.acctOut
    && m.nasId === s.nasId && (m.userName === '' || m.userName === s.nasUser)
    && (!m.ip || m.ip === s.ip) && (!m.ssid || m.ssid === s.ssid) && (!m.apName || m.apName === s.apName)
    && (m.signal === undefined || m.signal === s.signal);
}

/** What applyReport changed that the actor must act on. */
export interface ReportEffect {
  /** The last activity moved: the session's idle deadline moves with it. */
  active: boolean;
  /** The report came from another NAS or User-Name, now the session's. */
  nasChanged: boolean;
  /** The NAS named another SSID, now the session's. */
  ssidChanged: boolean;
}

/**
 * Copies a recorded report into the session: the script's totals, today's
 * usage (read at `nowMs`, for local day `day`) and last activity; and, for
 * the session's current Acct-Session-Id only, what the NAS said of the
 * device (IP, SSID, access point, signal, NAS). A report for an
 * Acct-Session-Id the device has left (it roamed to an access point that is
 * another NAS) brings its last bytes and nothing else: the session lives on
 * elsewhere.
 */
export function applyReport(s: LiveSession, m: AcctMsg, r: Exclude<AccountOutcome, { kind: 'none' }>, day: string, nowMs: number): ReportEffect {
  s.bytesIn = r.bytesIn;
  s.bytesOut = r.bytesOut;
  s.daily = r.daily;
  s.dailyDay = day;
  s.dailyAtMs = nowMs;
  const active = r.lastMs > s.lastMs;
  if (active) s.lastMs = r.lastMs;
  const effect = { active, nasChanged: false, ssidChanged: false };
  if (!r.current) return effect;
  s.acctId = m.acctSessionId;
  // What the script stored as this id's totals (a:<id>), so the next report can tell it brings nothing new.
  s.acctIn = m.inOctets;
  s.acctOut = m.outOctets;
  if (m.ip) s.ip = m.ip;
  if (m.ssid && m.ssid !== s.ssid) {
    s.ssid = m.ssid;
    effect.ssidChanged = true;
  }
  if (m.apName) s.apName = m.apName;
  if (m.signal !== undefined) s.signal = m.signal;
  effect.nasChanged = s.nasId !== m.nasId || (m.userName !== '' && s.nasUser !== m.userName);
  if (effect.nasChanged) {
    s.nasId = m.nasId;
    if (m.userName) s.nasUser = m.userName;
  }
  return effect;
}
