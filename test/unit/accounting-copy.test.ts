import { describe, expect, it } from 'vitest';
import { applyReport, changesNothing } from '../../engine/sessions/accounting-copy.js';
import type { AcctMsg } from '../../engine/sessions/messages.js';
import { sessionFromHash } from '../../engine/sessions/session-store.js';

/** The actor's copy under accounting: which Interim-Updates need no script (docs/sessions.md, "Accounting"), and what a recorded one changes. */
describe('changesNothing', () => {
  const session = sessionFromHash({
    sid: 'sess_x', mac: '02:00:00:00:00:01', until: '9999999999999', created: '1', last: '1', bin: '2000', bout: '100',
    aid: 'acct-1', 'a:acct-1': '100 2000', ip: '10.0.0.7', ssid: 'Guest', ap: 'AP-1', signal: '-60', nas: 'nas_a', nuser: 'code1',
  })!;
  const report: AcctMsg = {
    t: 'acct', id: 1, tenant: 't', hs: 'h', tz: 'UTC', nasId: 'nas_a', status: 'interim', mac: '02:00:00:00:00:01', userName: 'code1',
    acctSessionId: 'acct-1', inOctets: 100, outOctets: 2000, ip: '10.0.0.7', ssid: 'Guest', apName: 'AP-1', signal: -60,
  };

  it('reads the totals Redis holds for the current Acct-Session-Id; unknown without them', () => {
    expect([session.acctIn, session.acctOut]).toEqual([100, 2000]);
    const none = sessionFromHash({ sid: 's', mac: 'm', until: '1', created: '1', aid: 'acct-1' })!;
    expect([none.acctIn, none.acctOut]).toEqual([-1, -1]);
  });

  it('the same totals, NAS and device details (or none of the optional ones) change nothing', () => {
    expect(changesNothing(session, report)).toBe(true);
    expect(changesNothing(session, { ...report, userName: '', ip: undefined, ssid: undefined, apName: undefined, signal: undefined })).toBe(true);
  });

  it.each([
    ['new download', { inOctets: 101 }],
    ['new upload', { outOctets: 2001 }],
    ['counters that went backwards', { inOctets: 50 }],
    ['another Acct-Session-Id', { acctSessionId: 'acct-2' }],
    ['another NAS', { nasId: 'nas_b' }],
    ['another User-Name', { userName: 'AA-BB' }],
    ['another IP', { ip: '10.0.0.8' }],
    ['another SSID', { ssid: 'VIP' }],
    ['another access point', { apName: 'AP-2' }],
    ['another signal', { signal: -70 }],
  ] as const)('%s needs the script', (_, change) => {
    expect(changesNothing(session, { ...report, ...change })).toBe(false);
  });

  it('a session whose recorded totals are unknown always needs the script', () => {
    expect(changesNothing({ ...session, acctIn: -1, acctOut: -1 }, report)).toBe(false);
  });
});

describe('applyReport', () => {
  const fresh = () => sessionFromHash({
    sid: 'sess_y', mac: '02:00:00:00:00:02', until: '9999999999999', created: '1', last: '1000', bin: '0', bout: '0',
    aid: 'acct-1', 'a:acct-1': '0 0', ip: '10.0.0.7', ssid: 'Guest', ap: 'AP-1', signal: '-60', nas: 'nas_a', nuser: 'code1',
  })!;
  const report: AcctMsg = {
    t: 'acct', id: 2, tenant: 't', hs: 'h', tz: 'UTC', nasId: 'nas_b', status: 'interim', mac: '02:00:00:00:00:02', userName: 'code1',
    acctSessionId: 'acct-2', inOctets: 300, outOctets: 4000, ip: '10.0.0.9', ssid: 'VIP', apName: 'AP-7', signal: -48,
  };
  const reply = { kind: 'ok' as const, sid: 'sess_y', bytesIn: 300, bytesOut: 4000, daily: 4300, lastMs: 5000, current: true };

  it('takes the script\'s totals and what the NAS said; the same report then changes nothing', () => {
    const s = fresh();
    expect(changesNothing(s, report)).toBe(false);
    expect(applyReport(s, report, reply, '2026-11-30', 7000)).toEqual({ active: true, nasChanged: true, ssidChanged: true });
    expect([s.bytesIn, s.bytesOut, s.daily, s.dailyDay, s.dailyAtMs, s.lastMs]).toEqual([300, 4000, 4300, '2026-11-30', 7000, 5000]);
    expect([s.acctId, s.acctIn, s.acctOut, s.ip, s.ssid, s.apName, s.signal, s.nasId, s.nasUser]).toEqual(['acct-2', 300, 4000, '10.0.0.9', 'VIP', 'AP-7', -48, 'nas_b', 'code1']);
    // The copy is what Redis now holds: a retransmission needs no script.
    expect(changesNothing(s, report)).toBe(true);
  });

  it('a report for an Acct-Session-Id the device has left brings its bytes and nothing else', () => {
    const s = fresh();
    expect(applyReport(s, report, { ...reply, current: false }, '2026-11-30', 7000)).toEqual({ active: true, nasChanged: false, ssidChanged: false });
    expect([s.bytesIn, s.daily, s.lastMs]).toEqual([300, 4300, 5000]);
    expect([s.acctId, s.acctIn, s.ip, s.ssid, s.apName, s.nasId]).toEqual(['acct-1', 0, '10.0.0.7', 'Guest', 'AP-1', 'nas_a']);
  });

  it('an older last activity leaves the idle deadline where it is', () => {
    const s = fresh();
    expect(applyReport(s, { ...report, nasId: 'nas_a', ssid: 'Guest' }, { ...reply, lastMs: 900 }, '2026-11-30', 7000)).toEqual({ active: false, nasChanged: false, ssidChanged: false });
    expect(s.lastMs).toBe(1000);
  });
});
