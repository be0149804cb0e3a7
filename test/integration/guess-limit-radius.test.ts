import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attr, Code, RadiusCrypto, attributeValue, checkFraming, decodePacket, type RadiusPacket } from '../../radius/index.js';
import { accessRequest, type AccessRequestSpec } from '../radius/helpers.js';
import { call, dashed, macs, newTenant, type Running, startService } from '../support/fixture.js';
import { addLoopbackNas, type LoopbackNas } from '../support/loopback-nas.js';

/**
 * The voucher guessing limits on the RADIUS path: a code as User-Name (PAP
 * or CHAP) counts per Calling-Station-Id, the MAC the NAS reports, and past
 * the limit the answer is Access-Reject, a valid code too, spending nothing.
 * RADIUS has no per-address limit: every request comes from the NAS.
 */
const rc = new RadiusCrypto();

describe('voucher guessing limits over RADIUS', () => {
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let port: number;
  let nas: LoopbackNas;
  let ident = randomInt(0, 256);
  const nextMac = macs();
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const good = `GUESS-OK-${suffix}`;

  /** The reply to one Access-Request from the test NAS, checked as signed by the NAS's secret. */
  async function authorize(spec: Partial<AccessRequestSpec>): Promise<RadiusPacket> {
    ident = (ident + 1) & 255;
    const req = accessRequest({ secret: nas.secret, id: ident, ...spec });
    await nas.radius.send(req, port);
    for (;;) {
      const got = await nas.radius.next(5000);
      expect(got, 'an Access-Request must be answered').not.toBeNull();
      const len = checkFraming(got!.msg);
      if (len > 0 && got!.msg[1] === req[1] && rc.verifyResponseAuthenticator(got!.msg, len, req.subarray(4, 20), nas.secret)) return decodePacket(got!.msg)!;
    }
  }
  const pap = (code: string, mac: string) => authorize({ userName: code, password: code, callingStationId: dashed(mac), framedIp: `10.30.${randomInt(0, 255)}.${randomInt(1, 255)}` });
  const uses = async (): Promise<number> => {
    const r = await call(svc.base, 'GET', '/v1/vouchers?limit=100', { auth: t.apiKey });
    return r.body.data.find((v: { code: string }) => v.code === good).current_uses;
  };

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '1' });
    port = svc.service.radiusPorts.auth;
    t = await newTenant(svc.service, 'Guessing Venue');
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: good, max_uses: null } })).status).toBe(201);
    nas = await addLoopbackNas(svc.base, t);
  });
  afterAll(async () => {
    await nas?.radius.close();
    await svc?.stop();
  });

  it('answers Access-Reject past 10 unknown codes from one Calling-Station-Id, for a valid code too, spending nothing', async () => {
    const device = nextMac();
    for (let i = 0; i < 10; i++) {
      const p = await pap(`NOPE-${suffix}-${i}`, device);
      expect(p.code).toBe(Code.ACCESS_REJECT);
      expect(attributeValue(p, Attr.REPLY_MESSAGE)?.toString()).toBe('Unknown voucher code');
    }
    const refused = await pap(good, device);
    expect(refused.code).toBe(Code.ACCESS_REJECT);
    expect(attributeValue(refused, Attr.REPLY_MESSAGE)?.toString()).toMatch(/too many/i);
    // CHAP with the code as its secret is the same redemption, refused alike.
    const chap = await authorize({ userName: good, chap: { secret: good }, callingStationId: dashed(device) });
    expect(chap.code).toBe(Code.ACCESS_REJECT);
    expect(await uses()).toBe(0);
    expect(await svc.service.engine.metrics.render()).toMatch(/^guestwifi_voucher_guess_limited_total\{limit="device",via="radius"\} 2$/m);

    // Another device through the same NAS is let in.
    expect((await pap(good, nextMac())).code).toBe(Code.ACCESS_ACCEPT);
    expect(await uses()).toBe(1);
  });

  it('has no per-address limit: every request comes from the NAS', async () => {
    const put = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: t.apiKey, body: { guessing: { per_address: 2 } } });
    expect(put.status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await pap(`ADDR-${suffix}-${i}`, nextMac())).code).toBe(Code.ACCESS_REJECT);
    const before = await uses();
    expect((await pap(good, nextMac())).code).toBe(Code.ACCESS_ACCEPT);
    expect(await uses()).toBe(before + 1);
  });
});
