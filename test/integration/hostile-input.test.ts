import { describe, expect } from 'vitest';
import { call, serviceTest, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';

const test = serviceTest();

/**
 * Text a guest controls reaches the audit trail (the portal's `ssid`). A
 * character Postgres refuses in text (NUL) must not be able to stop the sink:
 * a batch Postgres rejects is retried forever and holds back every record
 * behind it, other tenants' included.
 */
describe('hostile text on its way to the audit trail', () => {
  test('the portal refuses control characters in ssid with 400 validation_failed, and spends no use', async ({ svc, tenant: t }) => {
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'CTRL-1', max_uses: 1 } })).status).toBe(201);
    for (const ssid of ['Gu\u0000est', 'Guest\nLobby', 'a\u001bb', 'x\u007f']) {
      const r = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'CTRL-1', mac: '02:C0:00:00:00:01', ssid } });
      expect(r.status, JSON.stringify(ssid)).toBe(400);
      expect(r.body).toMatchObject({ error: 'validation_failed' });
    }
    const ok = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'CTRL-1', mac: '02:C0:00:00:00:01', ssid: 'Guest Wi-Fi ✓' } });
    expect(ok.status).toBe(200);
    expect(ok.body.uses_left).toBe(0);
  });

  test('a NUL that reaches the outbox anyway (a NAS, a script) is stored as U+FFFD, and the records behind it still land', async ({ svc, db, tenant: t }) => {
    // Past the HTTP schema, as RADIUS attributes and future callers are: straight into the sign-in.
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'NUL-1', max_uses: null } })).status).toBe(201);
    const bad = await svc.service.engine.signIn.voucher({ hotspotId: t.hotspotId, code: 'NUL-1', mac: '02:C0:00:00:00:02', ip: '', ssid: 'Gu\u0000est' });
    const good = await svc.service.engine.signIn.voucher({ hotspotId: t.hotspotId, code: 'NUL-1', mac: '02:C0:00:00:00:03', ip: '', ssid: 'Guest' });

    const stored = async (sid: string): Promise<{ ssid: string } | undefined> =>
      (await db.query<{ ssid: string }>('SELECT ssid FROM sessions WHERE id = $1', [sid])).rows[0];
    await until(async () => (await stored(good.session_id)) !== undefined, { timeoutMs: 10_000 });
    expect(await stored(bad.session_id)).toEqual({ ssid: 'Gu\uFFFDest' });
    const rec = await db.query("SELECT ssid FROM audit_records WHERE session_id = $1 AND event_type = 'session_start'", [bad.session_id]);
    expect(rec.rows).toEqual([{ ssid: 'Gu\uFFFDest' }]);
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true });
  });
  test('NUL anywhere in a request (path, query, JSON or form body) is a 400 naming the field, never a 500', async ({ svc, tenant: t }) => {
    const nul = (r: { status: number; body: any }, field: string): void => {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body).toMatchObject({ error: 'validation_failed', details: [{ field, message: 'must not contain U+0000' }] });
    };
    const mac = '02:C0:00:00:00:09';
    // The portal needs no credentials: each of these reached Postgres before.
    nul(await call(svc.base, 'POST', `${VERIFY}?hotspot_id=%00`, { body: { code: 'x', mac } }), 'hotspot_id');
    nul(await call(svc.base, 'POST', VERIFY, { body: { hotspot_id: `${t.hotspotId}\u0000`, code: 'x', mac } }), 'hotspot_id');
    nul(await call(svc.base, 'GET', '/v1/hotspots/hs_%00', { auth: t.apiKey }), 'id');
    nul(await call(svc.base, 'DELETE', '/v1/vouchers/a%00b', { auth: t.apiKey }), 'id');
    nul(await call(svc.base, 'POST', '/v1/hotspots', { auth: t.apiKey, body: { name: 'Lob\u0000by', timezone: 'UTC' } }), 'name');
    nul(await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'NUL-2', ssids: ['ok', 'b\u0000d'] } }), 'ssids.1');
    const form = await fetch(`${svc.base}${VERIFY}?hotspot_id=${t.hotspotId}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `code=A%00B&mac=${encodeURIComponent(mac)}`,
    });
    nul({ status: form.status, body: await form.json() }, 'code');
    // Text that only looks like the escape (an escaped backslash, then "u0000") is ordinary text.
    const literal = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, raw: JSON.stringify({ code: 'NUL-3', notes: 'see \\u0000 in the manual' }) });
    expect(literal.status).toBe(201);
    expect(literal.body.notes).toBe('see \\u0000 in the manual');
  });
});
