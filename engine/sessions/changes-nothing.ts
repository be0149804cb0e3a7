import type { AcctMsg } from './messages.js';
import type { LiveSession } from './session-store.js';

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
