import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { type Answer, call, keys, macs, newTenant, type Running, serviceTest, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';

const test = serviceTest();

/**
 * The captive portal's voucher verification over HTTP: the contract's
 * exact error bodies (voucher_not_found, voucher_expired, voucher_exhausted), the success shape, and the rebuild of a tenant's
 * vouchers in Redis from Postgres.
 */
describe('POST /api/v1/hotspot-portal/voucher/verify', () => {
  let svc: Running;
  let redis: Redis;
  test.beforeAll(({ svc: s_, redis: r_ }) => { svc = s_; redis = r_; });
  const nextMac = macs(0xaa);

  const verify = (hotspotId: string, body: Record<string, unknown>): Promise<Answer> =>
    call(svc.base, 'POST', `${VERIFY}?hotspot_id=${hotspotId}`, { body });
  const create = async (apiKey: string, body: Record<string, unknown>): Promise<any> => {
    const r = await call(svc.base, 'POST', '/v1/vouchers', { auth: apiKey, body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  };

  test('authorizes with the success shape of the spec', async ({ tenant: t }) => {
    await create(t.apiKey, { code: 'WELCOME1', max_uses: 2, duration_minutes: 30 });
    const before = Date.now();
    const r = await verify(t.hotspotId, { code: 'WELCOME1', mac: nextMac(), ip: '10.0.0.5' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'authorized', session_id: expect.stringMatching(/^sess_[0-9a-z]{16}$/), expires_at: expect.any(String),
      uses_left: 1, redirect_url: null,
    });
    const expiresAt = Date.parse(r.body.expires_at);
    expect(r.body.expires_at).toBe(new Date(expiresAt).toISOString());
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
  });

  test('answers an unknown code with exactly {"error":"voucher_not_found"} and 404', async ({ tenant: t }) => {
    const r = await verify(t.hotspotId, { code: 'NO-SUCH-CODE', mac: nextMac() });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'voucher_not_found' });
  });

  test('answers an expired voucher with exactly {error, expired_at} and 410', async ({ tenant: t }) => {
    await create(t.apiKey, { code: 'OLD2020', max_uses: 5, expires_at: '2020-01-01T00:00:00Z' });
    const r = await verify(t.hotspotId, { code: 'OLD2020', mac: nextMac() });
    expect(r.status).toBe(410);
    expect(r.body).toEqual({ error: 'voucher_expired', expired_at: '2020-01-01T00:00:00.000Z' });

    // A date still ahead is fine.
    await create(t.apiKey, { code: 'FUTURE', max_uses: 5, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await verify(t.hotspotId, { code: 'FUTURE', mac: nextMac() })).status).toBe(200);
  });

  test('counts uses_left down and then answers exactly {error, max_uses, current_uses} with 409', async ({ tenant: t }) => {
    await create(t.apiKey, { code: 'THREE', max_uses: 3 });
    const left: unknown[] = [];
    for (let i = 0; i < 3; i++) left.push((await verify(t.hotspotId, { code: 'THREE', mac: nextMac() })).body.uses_left);
    expect(left).toEqual([2, 1, 0]);
    const r = await verify(t.hotspotId, { code: 'THREE', mac: nextMac() });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ error: 'voucher_exhausted', max_uses: 3, current_uses: 3 });
  });

  test('gives the same device its session back without spending a use', async ({ tenant: t }) => {
    await create(t.apiKey, { code: 'ONCE', max_uses: 1 });
    const device = nextMac();
    const first = await verify(t.hotspotId, { code: 'ONCE', mac: device });
    expect(first.body.uses_left).toBe(0);
    // The same MAC written differently is the same device.
    const again = await verify(t.hotspotId, { code: 'ONCE', mac: device.toLowerCase().replace(/:/g, '-') });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await verify(t.hotspotId, { code: 'ONCE', mac: nextMac() })).body).toEqual({ error: 'voucher_exhausted', max_uses: 1, current_uses: 1 });
  });

  test('answers uses_left null for an unlimited voucher', async ({ tenant: t }) => {
    await create(t.apiKey, { code: 'OPENBAR', max_uses: null });
    for (let i = 0; i < 3; i++) {
      const r = await verify(t.hotspotId, { code: 'OPENBAR', mac: nextMac() });
      expect(r.status).toBe(200);
      expect(r.body.uses_left).toBeNull();
    }
  });

  test('matches codes case-sensitively', async ({ tenant: t }) => {
    await create(t.apiKey, { code: 'ABC123', max_uses: 5 });
    const lower = await verify(t.hotspotId, { code: 'abc123', mac: nextMac() });
    expect(lower.status).toBe(404);
    expect(lower.body).toEqual({ error: 'voucher_not_found' });
    expect((await verify(t.hotspotId, { code: 'ABC123', mac: nextMac() })).status).toBe(200);

    // Both spellings can be separate vouchers of one tenant.
    await create(t.apiKey, { code: 'abc123', max_uses: 1 });
    expect((await verify(t.hotspotId, { code: 'abc123', mac: nextMac() })).body.uses_left).toBe(0);
    expect((await verify(t.hotspotId, { code: 'ABC123', mac: nextMac() })).body.uses_left).toBe(3);
  });

  test('keeps the same code in two tenants independent', async ({ svc }) => {
    const a = await newTenant(svc.service);
    const b = await newTenant(svc.service);
    await create(a.apiKey, { code: 'SAMECODE', max_uses: 1 });
    await create(b.apiKey, { code: 'SAMECODE', max_uses: 2 });

    expect((await verify(a.hotspotId, { code: 'SAMECODE', mac: nextMac() })).body.uses_left).toBe(0);
    expect((await verify(a.hotspotId, { code: 'SAMECODE', mac: nextMac() })).status).toBe(409);
    // A's voucher being used up does not touch B's.
    const rb = await verify(b.hotspotId, { code: 'SAMECODE', mac: nextMac() });
    expect(rb.status).toBe(200);
    expect(rb.body.uses_left).toBe(1);

    // A code only B holds is unknown at A's hotspot.
    await create(b.apiKey, { code: 'ONLYB', max_uses: 1 });
    expect((await verify(a.hotspotId, { code: 'ONLYB', mac: nextMac() })).body).toEqual({ error: 'voucher_not_found' });
  });

  test('returns the hotspot\'s redirect_url, and a changed one at once', async ({ svc, tenant: t }) => {
    const hs = await call(svc.base, 'POST', '/v1/hotspots', {
      auth: t.apiKey, body: { name: 'Cafe', timezone: 'Europe/Berlin', redirect_url: 'https://example.com/welcome' },
    });
    expect(hs.status).toBe(201);
    await create(t.apiKey, { code: 'REDIR', max_uses: 10 });
    expect((await verify(hs.body.id, { code: 'REDIR', mac: nextMac() })).body.redirect_url).toBe('https://example.com/welcome');
    expect((await verify(t.hotspotId, { code: 'REDIR', mac: nextMac() })).body.redirect_url).toBeNull();

    const put = await call(svc.base, 'PUT', `/v1/hotspots/${hs.body.id}`, { auth: t.apiKey, body: { redirect_url: 'https://example.com/other' } });
    expect(put.status).toBe(200);
    expect((await verify(hs.body.id, { code: 'REDIR', mac: nextMac() })).body.redirect_url).toBe('https://example.com/other');
  });

  test('takes hotspot_id from the query or the body, and requires one of them', async ({ svc, tenant: t }) => {
    await create(t.apiKey, { code: 'WHERE', max_uses: 10 });
    const inBody = await call(svc.base, 'POST', VERIFY, { body: { code: 'WHERE', mac: nextMac(), hotspot_id: t.hotspotId } });
    expect(inBody.status).toBe(200);
    const inQuery = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'WHERE', mac: nextMac() } });
    expect(inQuery.status).toBe(200);

    const none = await call(svc.base, 'POST', VERIFY, { body: { code: 'WHERE', mac: nextMac() } });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'hotspot_id' }] });
  });

  test('answers an unknown hotspot with 404 hotspot_not_found', async ({ svc }) => {
    const r = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=hs_doesnotexist00000`, { body: { code: 'X1', mac: nextMac() } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'hotspot_not_found', message: expect.any(String) });
  });

  test('refuses an invalid MAC with 400 and spends no use', async ({ svc, tenant: t }) => {
    const v = await create(t.apiKey, { code: 'MACCHK', max_uses: 1 });
    for (const mac of ['not-a-mac', '02:00:00:00:00', '02:00:00:00:00:0G', '02:00:00:00:00:00:00']) {
      const r = await verify(t.hotspotId, { code: 'MACCHK', mac });
      expect(r.status, mac).toBe(400);
      expect(r.body).toEqual({ error: 'invalid_mac', message: expect.stringContaining(mac) });
    }
    const read = await call(svc.base, 'GET', `/v1/vouchers/${v.id}`, { auth: t.apiKey });
    expect(read.body.current_uses).toBe(0);
    expect((await verify(t.hotspotId, { code: 'MACCHK', mac: nextMac() })).status).toBe(200);
  });

  test('refuses a voucher on an SSID it is not valid for with 403 voucher_ssid_not_allowed', async ({ tenant: t }) => {
    await create(t.apiKey, { code: 'GUESTONLY', max_uses: 5, ssids: ['Guest', 'Lobby'] });
    // ('Guest\nLobby', which could match two listed names, is refused earlier: 400, no control characters.)
    for (const ssid of ['Staff', undefined, 'guest']) {
      const r = await verify(t.hotspotId, { code: 'GUESTONLY', mac: nextMac(), ...(ssid ? { ssid } : {}) });
      expect(r.status, JSON.stringify(ssid)).toBe(403);
      expect(r.body).toEqual({ error: 'voucher_ssid_not_allowed', message: expect.any(String) });
    }
    const ok = await verify(t.hotspotId, { code: 'GUESTONLY', mac: nextMac(), ssid: 'Guest' });
    expect(ok.status).toBe(200);
    expect(ok.body.uses_left).toBe(4);
  });

  test('accepts an HTML form post', async ({ svc, tenant: t }) => {
    await create(t.apiKey, { code: 'FORM1', max_uses: 2 });
    const res = await fetch(`${svc.base}${VERIFY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ code: 'FORM1', mac: nextMac(), hotspot_id: t.hotspotId, ip: '10.0.0.8' }).toString(),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'authorized', uses_left: 1 });

    const bad = await fetch(`${svc.base}${VERIFY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ code: 'NOPE', mac: nextMac(), hotspot_id: t.hotspotId }).toString(),
    });
    expect(bad.status).toBe(404);
    expect(await bad.json()).toEqual({ error: 'voucher_not_found' });
  });

  test('rebuilds a tenant\'s vouchers from Postgres after Redis lost them; counters go on from Postgres', async ({ redis, db, tenant: t }) => {
    const five = await create(t.apiKey, { code: 'REBUILD5', max_uses: 5 });
    const one = await create(t.apiKey, { code: 'REBUILD1', max_uses: 1 });
    expect((await verify(t.hotspotId, { code: 'REBUILD5', mac: nextMac() })).body.uses_left).toBe(4);
    expect((await verify(t.hotspotId, { code: 'REBUILD5', mac: nextMac() })).body.uses_left).toBe(3);
    expect((await verify(t.hotspotId, { code: 'REBUILD1', mac: nextMac() })).body.uses_left).toBe(0);
    await until(async () => {
      const { rows } = await db.query('SELECT id, current_uses FROM vouchers WHERE tenant_id = $1', [t.tenantId]);
      const by = Object.fromEntries(rows.map((r) => [r.id, r.current_uses]));
      return by[five.id] === 2 && by[one.id] === 1;
    });

    // Redis loses the tenant: its loaded marker and every voucher key.
    const lost = [keys.loaded(t.tenantId)];
    for (const pattern of [keys.voucher(t.tenantId, '*'), keys.voucherDevices(t.tenantId, '*')]) {
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        lost.push(...found);
        cursor = next;
      } while (cursor !== '0');
    }
    expect(lost).toHaveLength(5);
    expect(await redis.del(...lost)).toBe(5);

    const r = await verify(t.hotspotId, { code: 'REBUILD5', mac: nextMac() });
    expect(r.status).toBe(200);
    expect(r.body.uses_left).toBe(2);
    expect(await redis.hget(keys.voucher(t.tenantId, 'REBUILD5'), 'uses')).toBe('3');
    expect(await redis.exists(keys.loaded(t.tenantId))).toBe(1);
    const exhausted = await verify(t.hotspotId, { code: 'REBUILD1', mac: nextMac() });
    expect(exhausted.status).toBe(409);
    expect(exhausted.body).toEqual({ error: 'voucher_exhausted', max_uses: 1, current_uses: 1 });
    expect((await verify(t.hotspotId, { code: 'NEVERMADE', mac: nextMac() })).body).toEqual({ error: 'voucher_not_found' });
  });

  /** The run_id of the test Redis server, as the loaded marker holds it once a tenant is loaded. */
  const runId = async (): Promise<string> => /^run_id:([0-9a-f]{40})\r?$/m.exec(await redis.info('server'))![1]!;

  test('never hands out more than max_uses after a Redis restart lost uses Postgres already has', async ({ svc, redis, db, tenant: t }) => {
    const v = await create(t.apiKey, { code: 'CRASH5', max_uses: 5 });
    for (const left of [4, 3, 2]) expect((await verify(t.hotspotId, { code: 'CRASH5', mac: nextMac() })).body.uses_left).toBe(left);
    const pgUses = async (): Promise<number> => (await db.query('SELECT current_uses FROM vouchers WHERE id = $1', [v.id])).rows[0].current_uses;
    await until(async () => (await pgUses()) === 3);
    const marker = keys.loaded(t.tenantId);
    expect(await redis.get(marker)).toBe(await runId());

    // A Redis restarted after a crash under `appendfsync everysec`: the last uses are gone from
    // its counter although the sink had copied them to Postgres, while the marker, written long
    // before, survived. The server is another one, so its run_id is another.
    await redis.hset(keys.voucher(t.tenantId, 'CRASH5'), 'uses', 1);
    await redis.set(marker, '0123456789abcdef0123456789abcdef01234567');

    // Guests arriving together all find the tenant not loaded into this server; one load serves them.
    const answers = await Promise.all(Array.from({ length: 6 }, () => verify(t.hotspotId, { code: 'CRASH5', mac: nextMac() })));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.map((a) => a.body.uses_left).sort()).toEqual([0, 1]);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(409);
      expect(a.body).toEqual({ error: 'voucher_exhausted', max_uses: 5, current_uses: 5 });
    }
    expect(await redis.get(marker)).toBe(await runId());
    expect(await redis.hget(keys.voucher(t.tenantId, 'CRASH5'), 'uses')).toBe('5');
    const later = await verify(t.hotspotId, { code: 'CRASH5', mac: nextMac() });
    expect(later.body).toEqual({ error: 'voucher_exhausted', max_uses: 5, current_uses: 5 });
    await until(async () => (await pgUses()) === 5);
    const api = await call(svc.base, 'GET', `/v1/vouchers/${v.id}`, { auth: t.apiKey });
    expect(api.body.current_uses).toBe(5);
  });

  test('keeps blocks after Redis lost them: permanent and timed ones are loaded back from Postgres, expired ones are not', async ({ svc, redis, db, tenant: t }) => {
    await create(t.apiKey, { code: 'BLOCKS', max_uses: 20 });
    const [forever, day, raised, expired, free] = [nextMac(), nextMac(), nextMac(), nextMac(), nextMac()];
    const block = async (mac: string, ...durations: string[]): Promise<void> => {
      const s = await verify(t.hotspotId, { code: 'BLOCKS', mac });
      expect(s.status).toBe(200);
      for (const [i, duration] of durations.entries()) {
        // Blocking again goes by the session the first block ended: wait until Postgres has it.
        if (i > 0) await until(async () => (await db.query('SELECT 1 FROM sessions WHERE id = $1', [s.body.session_id])).rowCount === 1);
        const r = await call(svc.base, 'POST', `/v1/sessions/${s.body.session_id}/block`, { auth: t.apiKey, body: { duration } });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
    };
    await block(forever, 'permanent');
    await block(day, '24h');
    await block(raised, '24h', 'permanent');
    // A block whose time is over: its row stays in Postgres, it must not come back.
    await db.query(`INSERT INTO blocks (tenant_id, mac, until, duration) VALUES ($1, $2, now() - interval '1 minute', '24h')`, [t.tenantId, expired]);
    const blocked = { error: 'device_blocked', message: 'This device is blocked on this network' };
    expect((await verify(t.hotspotId, { code: 'BLOCKS', mac: forever })).body).toEqual(blocked);
    const blockKey = (mac: string): string => keys.block(t.tenantId, mac);
    const listed = (await call(svc.base, 'GET', '/v1/blocks', { auth: t.apiKey })).body.data.map((b: any) => b.mac).sort();
    expect(listed).toEqual([forever, day, raised].sort());

    // Redis loses the tenant's blocks and its loaded marker; for one device it comes back with
    // the block as it was before the last change (24h, since made permanent).
    expect(await redis.del(blockKey(forever), blockKey(day), keys.loaded(t.tenantId))).toBe(3);
    await redis.set(blockKey(raised), '24h', 'PX', 3_600_000);

    const first = await verify(t.hotspotId, { code: 'BLOCKS', mac: forever });
    expect(first.status).toBe(403);
    expect(first.body).toEqual(blocked);
    expect((await verify(t.hotspotId, { code: 'BLOCKS', mac: day })).body).toEqual(blocked);
    expect(await redis.get(blockKey(forever))).toBe('permanent');
    expect(await redis.pttl(blockKey(forever))).toBe(-1);
    expect(await redis.get(blockKey(day))).toBe('24h');
    const ttl = await redis.pttl(blockKey(day));
    expect(ttl).toBeGreaterThan(86_400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
    expect(await redis.get(blockKey(raised))).toBe('permanent');
    expect(await redis.pttl(blockKey(raised))).toBe(-1);
    expect(await redis.exists(blockKey(expired))).toBe(0);
    expect((await verify(t.hotspotId, { code: 'BLOCKS', mac: expired })).status).toBe(200);
    expect((await verify(t.hotspotId, { code: 'BLOCKS', mac: free })).status).toBe(200);
    expect((await call(svc.base, 'GET', '/v1/blocks', { auth: t.apiKey })).body.data.map((b: any) => b.mac).sort()).toEqual([forever, day, raised].sort());
  });
});
