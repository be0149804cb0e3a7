import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, RadiusCrypto, checkFraming } from '../../radius/index.js';
import { TestNas, accessRequest } from '../radius/helpers.js';
import { call, dashed, macs, newTenant, type Running, startService, until } from '../support/fixture.js';
import { registerOnFreeLoopback } from '../support/loopback-nas.js';

/**
 * Issue 24: "two access points behind one address told apart by
 * NAS-Identifier". Two hotspots, each with an access point registered at
 * the same address under its own NAS-Identifier and secret; a guest's
 * sign-in through either lands on that access point's hotspot.
 */
const rc = new RadiusCrypto();

describe('NAS clients sharing an address', () => {
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let pool: string;
  let ip = '';
  let radius: TestNas;
  const secrets = { lobby: `lobby-${randomBytes(8).toString('hex')}`, pool: `pool-${randomBytes(8).toString('hex')}` };
  const device = macs();
  const code = `NATAP-${randomBytes(4).toString('hex').toUpperCase()}`;
  let ident = randomInt(0, 256);

  const addNas = (hotspotId: string, body: Record<string, unknown>) =>
    call(svc.base, 'POST', `/v1/hotspots/${hotspotId}/nas-clients`, { auth: t.apiKey, body: { ip, coa_port: 3799, ...body } });

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '1', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    t = await newTenant(svc.service, 'NAT Venue');
    const h = await call(svc.base, 'POST', '/v1/hotspots', { auth: t.apiKey, body: { name: 'Pool bar', timezone: 'Europe/Istanbul' } });
    expect(h.status).toBe(201);
    pool = h.body.id as string;
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null } })).status).toBe(201);
    // A loopback address no other test file holds: the first NAS client registered there wins it.
    const first = await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (at) => ({ ip: at, coa_port: 3799, secret: secrets.lobby, nas_identifier: 'ap-lobby' }));
    ip = first.ip;
    expect(first.answer.body).toMatchObject({ ip, nas_identifier: 'ap-lobby', hotspot_id: t.hotspotId });
    expect(first.answer.body.secret).toBeUndefined();
    radius = await TestNas.open(ip);
  });
  afterAll(async () => {
    await radius?.close();
    await svc?.stop();
  });

  it('a second client at the address needs an identifier of its own: the same one, or none twice, is 409 nas_ip_in_use', async () => {
    const r = await addNas(pool, { secret: secrets.pool, nas_identifier: 'ap-pool', name: 'Pool AP' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ nas_identifier: 'ap-pool', hotspot_id: pool });
    const again = await addNas(pool, { secret: secrets.pool, nas_identifier: 'ap-pool' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('nas_ip_in_use');
    // One client without an identifier is allowed (it takes the packets nobody names); a second is not.
    expect((await addNas(pool, { secret: secrets.pool })).status).toBe(201);
    expect((await addNas(pool, { secret: secrets.pool })).body.error).toBe('nas_ip_in_use');
    const listed = await call(svc.base, 'GET', `/v1/hotspots/${pool}/nas-clients`, { auth: t.apiKey });
    expect(listed.body.data.map((n: { nas_identifier: string | null }) => n.nas_identifier).sort()).toEqual(['ap-pool', null]);
  });

  it("another tenant cannot register the address at all: not with a new identifier, not with the access points' own, not as its plain client", async () => {
    const other = await newTenant(svc.service, 'Next Door');
    for (const body of [{ nas_identifier: 'ap-roof' }, { nas_identifier: 'ap-lobby' }, {}]) {
      const r = await call(svc.base, 'POST', `/v1/hotspots/${other.hotspotId}/nas-clients`, { auth: other.apiKey, body: { ip, secret: 'other-tenant-secret', ...body } });
      expect(r.status).toBe(409);
      expect(r.body.error).toBe('nas_ip_in_use');
    }
  });

  it('a NAS-Identifier that is not printable text is refused with 400', async () => {
    const r = await addNas(pool, { secret: secrets.pool, nas_identifier: 'ap\u0000x' });
    expect(r.status).toBe(400);
  });

  it("a guest signing in through each access point gets a session at that access point's hotspot", async () => {
    const signIn = async (secret: string, nasIdentifier: string, mac: string): Promise<number> => {
      const pkt = accessRequest({ secret, id: (ident = (ident + 1) & 255), userName: code, password: code, callingStationId: dashed(mac), nasIdentifier });
      await radius.send(pkt, svc.service.radiusPorts.auth);
      const endsAt = Date.now() + 5000;
      for (;;) {
        const got = await radius.next(Math.max(1, endsAt - Date.now()));
        if (!got) throw new Error('no reply from the engine');
        const len = checkFraming(got.msg);
        if (len > 0 && got.msg[1] === pkt[1] && rc.verifyResponseAuthenticator(got.msg, len, pkt.subarray(4, 20), secret)) return got.msg[0]!;
      }
    };
    const [inLobby, inPool] = [device(), device()];
    expect(await signIn(secrets.lobby, 'ap-lobby', inLobby)).toBe(Code.ACCESS_ACCEPT);
    expect(await signIn(secrets.pool, 'ap-pool', inPool)).toBe(Code.ACCESS_ACCEPT);
    const hotspotOf = async (mac: string): Promise<string | undefined> => {
      const r = await call(svc.base, 'GET', '/v1/sessions?status=active&limit=100', { auth: t.apiKey });
      return (r.body.data as { mac: string; hotspot_id: string }[]).find((s) => s.mac === mac)?.hotspot_id;
    };
    await until(async () => (await hotspotOf(inLobby)) !== undefined && (await hotspotOf(inPool)) !== undefined);
    expect(await hotspotOf(inLobby)).toBe(t.hotspotId);
    expect(await hotspotOf(inPool)).toBe(pool);
  });
});
