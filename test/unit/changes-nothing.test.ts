import { describe, expect, it } from 'vitest';
import { changesNothing } from '../../engine/sessions/changes-nothing.js';
import type { AcctMsg } from '../../engine/sessions/messages.js';
import { sessionFromHash } from '../../engine/sessions/session-store.js';

/** changesNothing: which Interim-Updates an actor answers without a script (docs/sessions.md, "Accounting"). */
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
