import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type Engine, type HotspotRef } from '../../engine/index.js';
import { startHttp, type HttpServer } from '../../http/index.js';
import { call, mac as macOf, newTenant } from '../support/fixture.js';
import { otpEngine, type RecordingSender } from './otp-fakes.js';

const CHILLI = 'res=notyet&uamip=192.168.182.1&uamport=3660&challenge=5b1d296db7826a655411dcd83ee25154';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' };

/**
 * The portal sign-in in the engine (issue 19 item 5): the hotspot is looked
 * up once per sign-in and carried through the pipeline, whatever the method
 * and the form of the request; the portal's rules run before the method.
 */
describe('portal sign-in', () => {
  let engine: Engine;
  let http: HttpServer;
  let base: string;
  let sms: RecordingSender;
  /** Hotspot lookups (HotspotService.ref) per hotspot id, counted from the engine's one HotspotService. */
  const lookups = new Map<string, number>();

  beforeAll(async () => {
    let senders: Record<string, RecordingSender>;
    ({ engine, senders } = await otpEngine(Date.now, 50, 5));
    sms = senders.sms!;
    const ref = engine.hotspots.ref.bind(engine.hotspots);
    engine.hotspots.ref = (id: string): Promise<HotspotRef | null> => {
      lookups.set(id, (lookups.get(id) ?? 0) + 1);
      return ref(id);
    };
    http = await startHttp(engine, createLogger('silent'));
    base = `http://127.0.0.1:${http.ports.main}`;
  });
  afterAll(async () => {
    http?.close();
    await engine?.close();
  });

  /** A venue offering vouchers and SMS codes, with an unlimited voucher. */
  const venue = async (portal: Record<string, unknown> = {}) => {
    const v = await newTenant({ engine } as never);
    const put = await call(base, 'PUT', '/v1/settings/sign-in', {
      auth: v.apiKey, body: { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', credentials_ref: `env://${v.tenantId.toUpperCase()}_NETGSM` } },
    });
    expect(put.status).toBe(200);
    if (Object.keys(portal).length) expect((await call(base, 'PUT', `/v1/hotspots/${v.hotspotId}`, { auth: v.apiKey, body: { portal } })).status).toBe(200);
    const code = `LK-${v.tenantId.slice(-6).toUpperCase()}`;
    expect((await call(base, 'POST', '/v1/vouchers', { auth: v.apiKey, body: { code, max_uses: null } })).status).toBe(201);
    return { ...v, code };
  };
  /** The lookups `run` makes of `hotspotId`. */
  const counted = async <T>(hotspotId: string, run: () => Promise<T>): Promise<{ value: T; n: number }> => {
    lookups.delete(hotspotId);
    const value = await run();
    return { value, n: lookups.get(hotspotId) ?? 0 };
  };

  it('a voucher sign-in looks the hotspot up once: JSON, with a gateway hand-back, and as a form post', async () => {
    const v = await venue();
    const VERIFY = `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${v.hotspotId}`;
    const json = await counted(v.hotspotId, () => call(base, 'POST', VERIFY, { body: { code: v.code, mac: macOf(1, 0x31) } }));
    expect(json.value.status).toBe(200);
    expect(json.n).toBe(1);

    const mac = macOf(2, 0x31);
    const handedBack = await counted(v.hotspotId, () => call(base, 'POST', VERIFY, { body: { code: v.code, mac, gateway: `${CHILLI}&mac=${mac}` } }));
    expect(handedBack.value.status).toBe(200);
    expect(handedBack.value.body.handback).toMatchObject({ method: 'GET', url: 'http://192.168.182.1:3660/logon' });
    expect(handedBack.n).toBe(1);

    const form = await counted(v.hotspotId, () => fetch(base + VERIFY, {
      method: 'POST', headers: FORM, redirect: 'manual', body: new URLSearchParams({ code: v.code, mac: macOf(3, 0x31), lang: 'en' }).toString(),
    }));
    expect(form.value.status).toBe(303);
    expect(form.value.headers.get('location')).toMatch(/^\/portal\?.*r=/);
    expect(form.n).toBe(1);
  });

  it('an OTP code sign-in looks the hotspot up once', async () => {
    const v = await venue();
    const mac = macOf(4, 0x31);
    expect((await call(base, 'POST', '/api/v1/hotspot-portal/sms/request', { body: { phone: '+905321900001', mac, hotspot_id: v.hotspotId } })).status).toBe(200);
    const code = sms.last('+905321900001');
    const ok = await counted(v.hotspotId, () => call(base, 'POST', `/api/v1/hotspot-portal/sms/verify?hotspot_id=${v.hotspotId}`, {
      body: { phone: '+905321900001', code, mac },
    }));
    expect(ok.value.status, JSON.stringify(ok.value.body)).toBe(200);
    expect(ok.value.body).toMatchObject({ status: 'authorized', session_id: expect.stringMatching(/^sess_/) });
    expect(ok.n).toBe(1);
  });

  it('runs any method inside the portal rules with the resolved hotspot: terms and gateway before it, hand-back after', async () => {
    const v = await venue({ terms_required: true });
    const seen: HotspotRef[] = [];
    const start = async (hotspot: HotspotRef) => {
      seen.push(hotspot);
      return { status: 'authorized' as const, session_id: 'sess_fromamethod', redirect_url: null };
    };
    const req = { hotspotId: v.hotspotId, mac: macOf(5, 0x31), acceptedTerms: false, gateway: undefined, page: null };
    await expect(engine.portalSignIn.run(req, start)).rejects.toMatchObject({ code: 'terms_not_accepted' });
    // The gateway names another device: refused before the method runs.
    await expect(engine.portalSignIn.run({ ...req, acceptedTerms: true, gateway: `${CHILLI}&mac=${macOf(6, 0x31)}` }, start))
      .rejects.toMatchObject({ code: 'validation_failed' });
    expect(seen).toEqual([]);

    const r = await counted(v.hotspotId, () => engine.portalSignIn.run({ ...req, acceptedTerms: true, gateway: CHILLI }, start));
    expect(r.n).toBe(1);
    expect(seen.map((h) => [h.id, h.tenantId])).toEqual([[v.hotspotId, v.tenantId]]);
    expect(r.value).toMatchObject({ kind: 'answer', answer: { session_id: 'sess_fromamethod', handback: { method: 'GET' } } });

    // A form post keeps the outcome, a refusal included, for the page of that hotspot and device.
    const kept = await engine.portalSignIn.run({ ...req, page: { lang: 'en', ip: '10.0.0.9', ssid: 'Lobby' } }, start);
    expect(kept.kind).toBe('kept');
    const rec = await engine.portal.load(v.tenantId, kept.kind === 'kept' ? kept.record : '', v.hotspotId, req.mac);
    expect(rec).toMatchObject({ lang: 'en', ip: '10.0.0.9', ssid: 'Lobby', outcome: { ok: false, status: 400, body: { error: 'terms_not_accepted' } } });

    // No such hotspot: a JSON client hears hotspot_not_found (invalid_mac first for a malformed MAC); a form post keeps nothing.
    const nowhere = { ...req, hotspotId: 'hs_nosuchhotspot0000' };
    await expect(engine.portalSignIn.run(nowhere, start)).rejects.toMatchObject({ code: 'hotspot_not_found' });
    await expect(engine.portalSignIn.run({ ...nowhere, mac: 'not-a-mac' }, start)).rejects.toMatchObject({ code: 'invalid_mac' });
    expect(await engine.portalSignIn.run({ ...nowhere, page: { lang: 'tr', ip: '', ssid: '' } }, start)).toEqual({ kind: 'no_hotspot' });
    expect(seen).toHaveLength(1);
  });
});
