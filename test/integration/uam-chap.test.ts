import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { Attr, Code, RadiusCrypto, attributeValue, checkFraming, decodePacket, type RadiusPacket } from '../../radius/index.js';
import { accessRequest, type AccessRequestSpec } from '../radius/helpers.js';
import { call, dashed, serviceTest, type Running, type Tenant } from '../support/fixture.js';
import { addCoaNas, type CoaNas } from '../support/loopback-nas.js';

/**
 * The UAM hand-back end to end, as CoovaChilli runs it: the guest signs in on
 * our portal with chilli's redirect parameters, the answer's hand-back carries
 * a one-time username and the CHAP `response`; chilli then sends our RADIUS
 * server an Access-Request with that username, CHAP-Challenge =
 * MD5(challenge || uamsecret) (or the challenge itself without a secret) and
 * CHAP-Password = ident 0 || response (CoovaChilli's redir.c and
 * chilli_response.c; RFC 2865 §5.3, §5.40). A test NAS on its own loopback
 * address plays chilli's RADIUS side against the real engine.
 */
const test = serviceTest();
const rc = new RadiusCrypto();
const md5 = (...parts: Buffer[]): Buffer => parts.reduce((h, p) => h.update(p), createHash('md5')).digest();

type Nas = CoaNas;

/** A NAS of the tenant's hotspot on a free loopback address (NAS addresses are unique across the service). */
async function registerNas(svc: Running, t: Tenant, onCleanup: (fn: () => Promise<void>) => void): Promise<Nas> {
  const nas = await addCoaNas(svc.base, t);
  onCleanup(async () => { await nas.radius.close(); await nas.da.close(); });
  return nas;
}

/** Sends an Access-Request and returns its reply (same Identifier, Response Authenticator checked with the NAS's secret). */
async function authorize(svc: Running, nas: Nas, spec: Partial<AccessRequestSpec>): Promise<RadiusPacket> {
  const req = accessRequest({ secret: nas.secret, id: nas.nextId(), ...spec });
  await nas.radius.send(req, svc.service.radiusPorts.auth);
  const endsAt = Date.now() + 3000;
  for (;;) {
    const got = await nas.radius.next(Math.max(1, endsAt - Date.now()));
    expect(got, 'an Access-Request must be answered').not.toBeNull();
    const len = checkFraming(got!.msg);
    if (len > 0 && got!.msg[1] === req[1] && rc.verifyResponseAuthenticator(got!.msg, len, req.subarray(4, 20), nas.secret)) {
      return decodePacket(got!.msg)!;
    }
  }
}

/** The portal sign-in with chilli's redirect parameters; returns the answer (session and hand-back). */
async function portalSignIn(svc: Running, t: Tenant, code: string, mac: string, challenge: string) {
  const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: {
    code, mac: dashed(mac), ip: '10.1.0.7',
    gateway: { res: 'notyet', uamip: '10.1.0.1', uamport: '3990', challenge, mac: dashed(mac), ip: '10.1.0.7',
      called: '94-83-C4-01-42-27', nasid: 'cafe-1', userurl: 'http://captive.apple.com/hotspot-detect.html' },
  } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.handback).toMatchObject({ method: 'GET', url: 'http://10.1.0.1:3990/logon' });
  const { username, response } = r.body.handback.fields as { username: string; response: string };
  expect(response).toMatch(/^[0-9a-f]{32}$/);
  return { sessionId: r.body.session_id as string, username, response: Buffer.from(response, 'hex') };
}

const ident0 = (response: Buffer): Buffer => Buffer.concat([Buffer.of(0), response]);

test('chilli\'s CHAP login with the portal\'s one-time credential and UAM secret: accepted for that MAC only, a wrong response refused', async ({ svc, tenant, voucher, mac, onTestFinished }) => {
  const uamSecret = `uam-${randomBytes(8).toString('hex')}`;
  const put = await call(svc.base, 'PUT', `/v1/hotspots/${tenant.hotspotId}`, { auth: tenant.apiKey, body: { portal: { gateway: 'uam', uam_secret: uamSecret } } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const nas = await registerNas(svc, tenant, onTestFinished);
  const guest = mac();
  const challenge = randomBytes(16);
  const login = await portalSignIn(svc, tenant, voucher.code, guest, challenge.toString('hex'));
  // chilli folds its uamsecret into the challenge it sends as CHAP-Challenge.
  const chapChallenge = md5(challenge, Buffer.from(uamSecret));

  const wrong = Buffer.from(login.response);
  wrong[5]! ^= 0x40;
  const refused = await authorize(svc, nas, { userName: login.username, chapRaw: { password: ident0(wrong), challenge: chapChallenge }, callingStationId: dashed(guest) });
  expect(refused.code).toBe(Code.ACCESS_REJECT);
  // The challenge without the secret (a chilli configured without uamsecret) does not prove the response either.
  const noSecret = await authorize(svc, nas, { userName: login.username, chapRaw: { password: ident0(login.response), challenge }, callingStationId: dashed(guest) });
  expect(noSecret.code).toBe(Code.ACCESS_REJECT);
  const otherDevice = await authorize(svc, nas, { userName: login.username, chapRaw: { password: ident0(login.response), challenge: chapChallenge }, callingStationId: dashed(mac()) });
  expect(otherDevice.code).toBe(Code.ACCESS_REJECT);

  const ok = await authorize(svc, nas, { userName: login.username, chapRaw: { password: ident0(login.response), challenge: chapChallenge }, callingStationId: dashed(guest) });
  expect(ok.code).toBe(Code.ACCESS_ACCEPT);
  // The session the portal started is the one the gateway is told about (Class carries its id).
  expect(attributeValue(ok, Attr.CLASS)?.toString()).toBe(login.sessionId);
  expect(attributeValue(ok, Attr.SESSION_TIMEOUT)?.readUInt32BE(0)).toBeGreaterThan(0);
});

test('chilli\'s CHAP login without a UAM secret: the challenge itself is CHAP-Challenge', async ({ svc, tenant, voucher, mac, onTestFinished }) => {
  const nas = await registerNas(svc, tenant, onTestFinished);
  const guest = mac();
  const challenge = randomBytes(16);
  const login = await portalSignIn(svc, tenant, voucher.code, guest, challenge.toString('hex'));
  const bad = await authorize(svc, nas, { userName: login.username, chapRaw: { password: ident0(login.response), challenge: md5(challenge, Buffer.from('guessed')) }, callingStationId: dashed(guest) });
  expect(bad.code).toBe(Code.ACCESS_REJECT);
  const ok = await authorize(svc, nas, { userName: login.username, chapRaw: { password: ident0(login.response), challenge }, callingStationId: dashed(guest) });
  expect(ok.code).toBe(Code.ACCESS_ACCEPT);
  expect(attributeValue(ok, Attr.CLASS)?.toString()).toBe(login.sessionId);
});
