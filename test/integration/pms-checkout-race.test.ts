import { expect } from 'vitest';
import { Errors } from '../../engine/errors.js';
import { PmsGuestStore } from '../../engine/pms/pms-guest-store.js';
import { PmsMethod } from '../../engine/pms/pms-method.js';
import { HOTSPOT_DEFAULT_TERMS } from '../../engine/signin/identity-method.js';
import { keys, macs, serviceTest } from '../support/fixture.js';

const test = serviceTest();
const nextMac = macs();

/**
 * Room sign-in that loses the race with its guest's check-out: the session
 * is started, the reservation is gone when it is to be tied to it (the
 * check-out could not see it). Ending it where the hotspot's actor lives in
 * another process answers hotspot_owned_elsewhere; the session then goes to
 * the hotel's end queue (keys.pmsEnds) for that process, as a check-out's
 * do. Before, the failure was swallowed and the guest stayed online for the
 * whole session although told pms_guest_not_found.
 */
test('a sign-in that lost to the check-out, its end refused here: the session is queued for the actor\'s process', async ({ svc, tenant: t }) => {
  const { engine } = svc.service;
  const asked: string[] = [];
  const elsewhere = async (_tenant: string, _hotspot: string, sid: string): Promise<boolean> => {
    asked.push(sid);
    throw Errors.HOTSPOT_OWNED_ELSEWHERE();
  };
  const method = new PmsMethod(engine.redis, new PmsGuestStore(engine.redis), () => 'enabled', engine.signInSettings, HOTSPOT_DEFAULT_TERMS,
    { sessionMinutes: 60, idleSec: 900 }, 60_000, elsewhere, engine.metrics);
  // Through the pipeline as PmsMethod runs (SignInService.via), its list checks left out: matched a moment ago,
  // the reservation is not in house (checked out since), so attach finds nothing.
  const raced = { name: method.name, start: method.start.bind(method), answer: method.answer.bind(method) };
  const claim = { room: '101', surname: 'Gone', match: { reservation: 'R-GONE', room: '101', name: 'GONE', firstName: '', share: false } };
  await expect(engine.signIn.via(raced, { hotspotId: t.hotspotId, mac: nextMac(), ip: '10.30.0.9', ssid: 'Hotel' }, claim))
    .rejects.toMatchObject({ code: 'pms_guest_not_found', status: 401 });

  expect(asked).toHaveLength(1);
  expect(await engine.redis.lrange(keys.pmsEnds(t.tenantId, t.hotspotId), 0, -1)).toEqual(asked);
});
