import { randomInt } from 'node:crypto';
import { describe, expect } from 'vitest';
import { type Answer, call, keys, macs, newTenant, type Running, serviceTest, until } from '../support/fixture.js';
import { randomLoopback, registerOnFreeLoopback } from '../support/loopback-nas.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
/** Generated alphanumeric codes: upper case, none of the look-alikes 0 O 1 I L. */
const NO_LOOKALIKES = '[A-HJKMNP-Z2-9]';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const test = serviceTest();

/** Vouchers (public API and console batch creation), bandwidth profiles, hotspots and NAS clients over HTTP. */
describe('vouchers, profiles, hotspots and NAS clients API', () => {
  let svc: Running;
  test.beforeAll(({ svc: s_ }) => { svc = s_; });
  const nextMac = macs(0xbb);

  const api = (method: string, path: string, key: string, body?: unknown): Promise<Answer> => call(svc.base, method, path, { auth: key, body });
  const verify = (hotspotId: string, code: string, mac = nextMac()): Promise<Answer> =>
    call(svc.base, 'POST', `${VERIFY}?hotspot_id=${hotspotId}`, { body: { code, mac } });

  describe('public voucher creation', () => {
    test('creates a voucher: 201 with the fields of the spec, readable by id', async ({ tenant: t }) => {
      const expires = new Date(Date.now() + 7 * 86_400_000);
      const before = Date.now();
      const r = await api('POST', '/v1/vouchers', t.apiKey, {
        code: 'POS-0001', max_uses: 3, duration_minutes: 60, bandwidth_down_mbps: 10, bandwidth_up_mbps: 5,
        expires_at: expires.toISOString(),
      });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        id: expect.stringMatching(/^vch_[0-9a-z]{16}$/), code: 'POS-0001', max_uses: 3, current_uses: 0, status: 'active',
        created_at: expect.stringMatching(ISO), expires_at: expires.toISOString(),
        duration_minutes: 60, bandwidth_down_mbps: 10, bandwidth_up_mbps: 5,
      });
      expect(Date.parse(r.body.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(r.body.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
      const read = await api('GET', `/v1/vouchers/${r.body.id}`, t.apiKey);
      expect(read.status).toBe(200);
      // The creation answer adds what the chosen code is worth (8 characters of upper case, digits and '-': at most 41.9 bits).
      const { entropy_bits: bits, warnings, ...created } = r.body;
      expect([bits, warnings]).toEqual([41.9, []]);
      expect(read.body).toEqual(created);
    });

    test('generates an upper-case code without look-alikes when none is given; max_uses defaults to 1', async ({ tenant: t }) => {
      const codes = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const r = await api('POST', '/v1/vouchers', t.apiKey, {});
        expect(r.status).toBe(201);
        expect(r.body.code).toMatch(new RegExp(`^${NO_LOOKALIKES}{9}$`));
        expect(r.body.max_uses).toBe(1);
        codes.add(r.body.code);
      }
      expect(codes.size).toBe(5);
      const one = [...codes][0]!;
      expect((await verify(t.hotspotId, one)).status).toBe(200);
    });

    test('refuses a code already taken with 409 voucher_code_taken and leaves the first voucher alone', async ({ tenant: t }) => {
      const first = await api('POST', '/v1/vouchers', t.apiKey, { code: 'DUP-CODE', max_uses: 2 });
      expect(first.status).toBe(201);
      const second = await api('POST', '/v1/vouchers', t.apiKey, { code: 'DUP-CODE', max_uses: 9 });
      expect(second.status).toBe(409);
      expect(second.body).toEqual({ error: 'voucher_code_taken', message: expect.any(String) });
      expect((await verify(t.hotspotId, 'DUP-CODE')).body.uses_left).toBe(1);
      expect((await api('GET', '/v1/vouchers', t.apiKey)).body.total).toBe(1);
    });

    test('treats expires_at "" , null or absent as never', async ({ redis, tenant: t }) => {
      for (const [code, extra] of [['NEVER-A', { expires_at: '' }], ['NEVER-B', { expires_at: null }], ['NEVER-C', {}]] as const) {
        const r = await api('POST', '/v1/vouchers', t.apiKey, { code, ...extra });
        expect(r.status, code).toBe(201);
        expect(r.body.expires_at, code).toBeNull();
        expect(r.body.status).toBe('active');
        expect(await redis.hget(keys.voucher(t.tenantId, code), 'exp')).toBe('0');
        expect((await verify(t.hotspotId, code)).status).toBe(200);
      }
    });

    test('refuses an SSID holding a newline (the list is stored newline separated)', async ({ tenant: t }) => {
      const r = await api('POST', '/v1/vouchers', t.apiKey, { code: 'NLSSID', ssids: ['Guest\nStaff'] });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'ssids.0' }] });
    });
  });

  describe('session quota', () => {
    test('takes session_quota_mb on both surfaces, returns it wherever the voucher is shown and stores it for RADIUS', async ({ redis, tenant: t }) => {
      const v = keys.voucher(t.tenantId, '');
      const pub = await api('POST', '/v1/vouchers', t.apiKey, { code: 'SQ-PUB', max_uses: null, session_quota_mb: 1, daily_quota_mb: 500 });
      expect(pub.status).toBe(201);
      expect(pub.body).toMatchObject({ session_quota_mb: 1, daily_quota_mb: 500 });
      expect((await api('GET', `/v1/vouchers/${pub.body.id}`, t.apiKey)).body.session_quota_mb).toBe(1);

      const batch = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 2, session_quota_mb: 250, bandwidth_profile: 'basic' });
      expect(batch.status).toBe(201);
      const fromBatch = (await api('GET', `/v1/vouchers/${batch.body.vouchers[0].id}`, t.apiKey)).body;
      // A profile fills the daily quota; the session quota is the voucher's own.
      expect(fromBatch).toMatchObject({ session_quota_mb: 250, daily_quota_mb: 500, bandwidth_profile: 'basic' });

      const none = await api('POST', '/v1/vouchers', t.apiKey, { code: 'SQ-NONE' });
      expect(none.body.session_quota_mb).toBeNull();
      const nulled = await api('POST', '/v1/vouchers', t.apiKey, { code: 'SQ-NULL', session_quota_mb: null });
      expect(nulled.status).toBe(201);
      expect(nulled.body.session_quota_mb).toBeNull();

      const quotas = (list: Answer): Record<string, number | null> =>
        Object.fromEntries(list.body.data.map((x: { code: string; session_quota_mb: number | null }) => [x.code, x.session_quota_mb]));
      const expected = {
        'SQ-PUB': 1, 'SQ-NONE': null, 'SQ-NULL': null,
        [batch.body.vouchers[0].code]: 250, [batch.body.vouchers[1].code]: 250,
      };
      expect(quotas(await api('GET', '/v1/vouchers', t.apiKey))).toEqual(expected);
      expect(quotas(await api('GET', '/api/v1/vouchers', t.apiKey))).toEqual(expected);

      // Redis: the voucher's definition, then the grant of the session it starts.
      expect(await redis.hget(`${v}SQ-PUB`, 'squota')).toBe('1');
      expect(await redis.hget(`${v}SQ-NONE`, 'squota')).toBe('0');
      expect(await redis.hget(`${v}${batch.body.vouchers[1].code}`, 'squota')).toBe('250');
      const mac = nextMac();
      expect((await verify(t.hotspotId, 'SQ-PUB', mac)).status).toBe(200);
      expect(await redis.hmget(keys.grant(t.tenantId, t.hotspotId, mac), 'squota', 'quota')).toEqual(['1', '500']);
      const other = nextMac();
      expect((await verify(t.hotspotId, 'SQ-NONE', other)).status).toBe(200);
      expect(await redis.hget(keys.grant(t.tenantId, t.hotspotId, other), 'squota')).toBe('0');
    });

    test('survives a Redis rebuilt from Postgres', async ({ redis, tenant: t }) => {
      expect((await api('POST', '/v1/vouchers', t.apiKey, { code: 'SQ-REBUILD', max_uses: 5, session_quota_mb: 42 })).status).toBe(201);
      await redis.del(keys.loaded(t.tenantId), keys.voucher(t.tenantId, 'SQ-REBUILD'));
      const mac = nextMac();
      expect((await verify(t.hotspotId, 'SQ-REBUILD', mac)).status).toBe(200);
      expect(await redis.hget(keys.voucher(t.tenantId, 'SQ-REBUILD'), 'squota')).toBe('42');
      expect(await redis.hget(keys.grant(t.tenantId, t.hotspotId, mac), 'squota')).toBe('42');
    });

    test('refuses 0, negative, fractional and non-numeric values with 400 validation_failed on both surfaces and creates nothing', async ({ tenant: t }) => {
      for (const bad of [0, -1, -1024, 1.5, '5', true, 2 ** 31]) {
        for (const [path, body] of [['/v1/vouchers', { code: 'SQ-BAD', session_quota_mb: bad }], ['/api/v1/vouchers', { count: 2, session_quota_mb: bad }]] as const) {
          const r = await api('POST', path, t.apiKey, body);
          const what = `${path} ${JSON.stringify(bad)}`;
          expect(r.status, what).toBe(400);
          expect(r.body, what).toEqual({
            error: 'validation_failed', message: expect.stringContaining('session_quota_mb'),
            details: [{ field: 'session_quota_mb', message: 'has the wrong type or format' }],
          });
        }
      }
      // The daily quota has the same bounds: a value Postgres's integer cannot hold is a 400, not a 500.
      const huge = await api('POST', '/v1/vouchers', t.apiKey, { code: 'DQ-BIG', daily_quota_mb: 2 ** 31 });
      expect(huge.status).toBe(400);
      expect(huge.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'daily_quota_mb' }] });
      expect((await api('GET', '/v1/vouchers', t.apiKey)).body.total).toBe(0);
    });

    test('is in the OpenAPI document: both request bodies and the voucher record', async ({ svc }) => {
      const doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
      const schemas = doc.components.schemas;
      for (const id of ['voucherCreateRequest', 'consoleVoucherBatchRequest']) {
        expect(schemas[id].properties.session_quota_mb, id).toMatchObject({
          anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }], description: expect.stringContaining('session_quota'),
        });
      }
      expect(schemas.voucher.properties).toHaveProperty('session_quota_mb');
    });
  });

  describe('listing', () => {
    test('filters by status: active, created, activated, used, expired; statuses shown per surface', async ({ tenant: t }) => {
      const mk = async (code: string, body: Record<string, unknown>): Promise<string> => {
        const r = await api('POST', '/v1/vouchers', t.apiKey, { code, ...body });
        expect(r.status).toBe(201);
        return r.body.id;
      };
      const fresh = await mk('ST-FRESH', { max_uses: 2 });
      const activated = await mk('ST-ACT', { max_uses: 3 });
      const used = await mk('ST-USED', { max_uses: 1 });
      const expired = await mk('ST-EXP', { max_uses: 5, expires_at: '2021-06-01T00:00:00Z' });
      const unlimited = await mk('ST-UNL', { max_uses: null });
      expect((await verify(t.hotspotId, 'ST-ACT')).status).toBe(200);
      expect((await verify(t.hotspotId, 'ST-USED')).status).toBe(200);
      expect((await verify(t.hotspotId, 'ST-UNL')).status).toBe(200);

      const ids = async (path: string): Promise<string[]> => {
        const r = await api('GET', path, t.apiKey);
        expect(r.status, path).toBe(200);
        expect(r.body.total, path).toBe(r.body.data.length);
        return r.body.data.map((v: { id: string }) => v.id).sort();
      };
      // Filters read the Postgres counter, which the outbox sink brings up to date: all three uses, which
      // may land in different batches (every test service's sink drains every tenant's stream).
      await until(async () => JSON.stringify(await ids('/v1/vouchers?status=used')) === JSON.stringify([used])
        && JSON.stringify(await ids('/v1/vouchers?status=created')) === JSON.stringify([fresh]));
      expect(await ids('/v1/vouchers?status=created')).toEqual([fresh].sort());
      expect(await ids('/v1/vouchers?status=activated')).toEqual([activated, unlimited].sort());
      expect(await ids('/v1/vouchers?status=expired')).toEqual([expired]);
      expect(await ids('/v1/vouchers?status=active')).toEqual([fresh, activated, unlimited].sort());
      expect(await ids('/v1/vouchers')).toEqual([fresh, activated, used, expired, unlimited].sort());

      const statusOf = (list: Answer): Record<string, string> => Object.fromEntries(list.body.data.map((v: { id: string; status: string }) => [v.id, v.status]));
      expect(statusOf(await api('GET', '/v1/vouchers', t.apiKey))).toEqual({
        [fresh]: 'active', [activated]: 'active', [used]: 'used', [expired]: 'expired', [unlimited]: 'active',
      });
      expect(statusOf(await api('GET', '/api/v1/vouchers', t.apiKey))).toEqual({
        [fresh]: 'created', [activated]: 'activated', [used]: 'used', [expired]: 'expired', [unlimited]: 'activated',
      });
      const list = await api('GET', '/v1/vouchers?status=activated', t.apiKey);
      expect(list.body.data.find((v: { id: string }) => v.id === activated)).toMatchObject({ current_uses: 1, max_uses: 3 });
    });

    test('q searches codes and notes of every voucher, in any case, LIKE characters taken literally', async ({ tenant: t }) => {
      for (const code of ['GATE-A-1', 'GATE-B-2', 'LOBBY-3']) expect((await api('POST', '/v1/vouchers', t.apiKey, { code })).status).toBe(201);
      const batch = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 2, notes: 'Conference Hall B' });
      const odd = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 1, notes: 'promo 50%_off' });
      expect([batch.status, odd.status]).toEqual([201, 201]);
      const codes = async (q: string, path = '/api/v1/vouchers') =>
        ((await api('GET', `${path}?q=${encodeURIComponent(q)}`, t.apiKey)).body.data as { code: string }[]).map((v) => v.code).sort();
      expect(await codes('gate')).toEqual(['GATE-A-1', 'GATE-B-2']);
      expect(await codes('hall b')).toEqual(batch.body.vouchers.map((v: { code: string }) => v.code).sort());
      expect(await codes('%')).toEqual([odd.body.vouchers[0].code]);
      expect(await codes('%_', '/v1/vouchers')).toEqual([odd.body.vouchers[0].code]);
      const page = await api('GET', '/v1/vouchers?q=GATE&limit=1', t.apiKey);
      expect([page.body.data.length, page.body.total]).toEqual([1, 2]);
      expect((await api('GET', `/v1/vouchers?q=${'x'.repeat(65)}`, t.apiKey)).status).toBe(400);
    });

    test('pages with limit and offset and reports the total', async ({ tenant: t }) => {
      const all: string[] = [];
      for (let i = 0; i < 5; i++) all.push((await api('POST', '/v1/vouchers', t.apiKey, { code: `PAGE-${i}` })).body.id);
      const seen: string[] = [];
      for (const offset of [0, 2, 4]) {
        const r = await api('GET', `/v1/vouchers?limit=2&offset=${offset}`, t.apiKey);
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ total: 5, limit: 2, offset });
        expect(r.body.data).toHaveLength(offset === 4 ? 1 : 2);
        seen.push(...r.body.data.map((v: { id: string }) => v.id));
      }
      expect(seen.sort()).toEqual([...all].sort());
      // Newest first.
      expect((await api('GET', '/v1/vouchers?limit=1', t.apiKey)).body.data[0].id).toBe(all[4]);
      const past = await api('GET', '/v1/vouchers?limit=2&offset=10', t.apiKey);
      expect(past.body).toEqual({ data: [], total: 5, limit: 2, offset: 10, next_cursor: null });
      const defaults = await api('GET', '/v1/vouchers', t.apiKey);
      expect(defaults.body).toMatchObject({ total: 5, limit: 50, offset: 0 });
    });
  });

  describe('console batch creation', () => {
    test('creates 10,000 vouchers in one call, all distinct, upper case, without look-alikes', async ({ tenant: t }) => {
      const r = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 10_000, max_uses: 1, notes: 'conference' });
      expect(r.status).toBe(201);
      expect(Object.keys(r.body)).toEqual(['vouchers', 'entropy_bits', 'warnings', 'batch_id']);
      expect(r.body.batch_id).toMatch(/^vbt_/);
      const vouchers: { id: string; code: string; status: string }[] = r.body.vouchers;
      expect(vouchers).toHaveLength(10_000);
      // Checked in plain code and asserted once: 10,000 expect calls would dominate the test's time.
      const shape = new RegExp(`^${NO_LOOKALIKES}{9}$`);
      const odd = vouchers.filter((v) => Object.keys(v).sort().join() !== 'code,id,status'
        || v.status !== 'created' || !/^vch_[0-9a-z]{16}$/.test(v.id) || !shape.test(v.code));
      expect(odd).toEqual([]);
      expect(new Set(vouchers.map((v) => v.code)).size).toBe(10_000);
      expect(new Set(vouchers.map((v) => v.id)).size).toBe(10_000);
      expect((await api('GET', '/v1/vouchers?limit=1', t.apiKey)).body.total).toBe(10_000);
      // Every one is usable at once.
      const some = vouchers[randomInt(10_000)]!;
      expect((await verify(t.hotspotId, some.code)).status).toBe(200);
      expect((await api('GET', `/v1/vouchers/${some.id}`, t.apiKey)).body).toMatchObject({ notes: 'conference', max_uses: 1 });
    });

    test('generates numeric codes, grouped codes with a separator, prefixes and lower case', async ({ tenant: t }) => {
      const batch = async (format: Record<string, unknown>): Promise<string[]> => {
        const r = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 50, format });
        expect(r.status, JSON.stringify(format)).toBe(201);
        return r.body.vouchers.map((v: { code: string }) => v.code);
      };
      const numeric = await batch({ charset: 'numeric', length: 10 });
      for (const c of numeric) expect(c).toMatch(/^\d{10}$/);
      const grouped = await batch({ length: 12, group_size: 4, separator: '-' });
      for (const c of grouped) expect(c).toMatch(new RegExp(`^${NO_LOOKALIKES}{4}-${NO_LOOKALIKES}{4}-${NO_LOOKALIKES}{4}$`));
      const dotted = await batch({ charset: 'numeric', length: 6, group_size: 3, separator: '.', prefix: 'EV' });
      for (const c of dotted) expect(c).toMatch(/^EV\d{3}\.\d{3}$/);
      const lower = await batch({ length: 8, letter_case: 'lower' });
      for (const c of lower) expect(c).toMatch(/^[a-hjkmnp-z2-9]{8}$/);
      expect(new Set([...numeric, ...grouped, ...dotted, ...lower]).size).toBe(200);
      // A grouped code is verified as printed.
      expect((await verify(t.hotspotId, grouped[0]!)).status).toBe(200);
      expect((await verify(t.hotspotId, dotted[0]!)).status).toBe(200);
    });

    test('refuses a format too small for the batch with 409 code_space_exhausted', async ({ tenant: t }) => {
      const r = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 1000, format: { charset: 'numeric', length: 4 } });
      expect(r.status).toBe(409);
      expect(r.body.error).toBe('code_space_exhausted');
      expect((await api('GET', '/v1/vouchers', t.apiKey)).body.total).toBe(0);
    });
  });

  describe('bandwidth profiles', () => {
    test('fills bandwidth and daily quota from the named profile; explicit values win', async ({ redis, tenant: t }) => {
      const one = async (body: Record<string, unknown>): Promise<any> => {
        const r = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 1, ...body });
        expect(r.status, JSON.stringify(body)).toBe(201);
        return (await api('GET', `/v1/vouchers/${r.body.vouchers[0].id}`, t.apiKey)).body;
      };
      expect(await one({ bandwidth_profile: 'basic' })).toMatchObject({
        bandwidth_profile: 'basic', bandwidth_down_mbps: 2, bandwidth_up_mbps: 1, daily_quota_mb: 500,
      });
      expect(await one({ bandwidth_profile: 'standard' })).toMatchObject({ bandwidth_down_mbps: 10, bandwidth_up_mbps: 5, daily_quota_mb: 2048 });
      expect(await one({ bandwidth_profile: 'premium' })).toMatchObject({ bandwidth_down_mbps: 50, bandwidth_up_mbps: 20, daily_quota_mb: null });
      const conf = await one({ bandwidth_profile: 'conference', daily_quota_mb: 100 });
      expect(conf).toMatchObject({ bandwidth_down_mbps: 5, bandwidth_up_mbps: 2, daily_quota_mb: 100 });
      // What RADIUS will read: kbps and MB in the Redis definition.
      expect(await redis.hmget(keys.voucher(t.tenantId, conf.code), 'down', 'up', 'quota', 'profile')).toEqual(['5000', '2000', '100', 'conference']);

      const pub = await api('POST', '/v1/vouchers', t.apiKey, { code: 'PROF-PUB', bandwidth_profile: 'basic', bandwidth_down_mbps: 3 });
      expect(pub.status).toBe(201);
      expect(pub.body).toMatchObject({ bandwidth_profile: 'basic', bandwidth_down_mbps: 3, bandwidth_up_mbps: 1, daily_quota_mb: 500 });
    });

    test('refuses an unknown profile with 400 on both surfaces and creates nothing', async ({ tenant: t }) => {
      for (const [path, body] of [['/api/v1/vouchers', { count: 3, bandwidth_profile: 'gold' }], ['/v1/vouchers', { code: 'GOLD1', bandwidth_profile: 'gold' }]] as const) {
        const r = await api('POST', path, t.apiKey, body);
        expect(r.status, path).toBe(400);
        expect(r.body).toEqual({ error: 'unknown_bandwidth_profile', message: expect.stringContaining('gold') });
      }
      // Names every JavaScript object answers to are no profiles either.
      for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        const r = await api('POST', '/v1/vouchers', t.apiKey, { code: `P-${name}`, bandwidth_profile: name });
        expect(r.status, name).toBe(400);
        expect(r.body.error).toBe('unknown_bandwidth_profile');
      }
      expect((await api('GET', '/v1/vouchers', t.apiKey)).body.total).toBe(0);
    });

    test('PUT /v1/bandwidth-profiles/:name adds or overrides a profile for this tenant only', async ({ svc, tenant: t }) => {
      const other = await newTenant(svc.service);
      const put = await api('PUT', '/v1/bandwidth-profiles/vip', t.apiKey, { down_mbps: 100, up_mbps: 40, daily_quota_mb: 10_000 });
      expect(put.status).toBe(200);
      expect(put.body.vip).toEqual({ down_mbps: 100, up_mbps: 40, daily_quota_mb: 10_000 });
      expect(put.body.basic).toEqual({ down_mbps: 2, up_mbps: 1, daily_quota_mb: 500 });
      const r = await api('POST', '/api/v1/vouchers', t.apiKey, { count: 2, bandwidth_profile: 'vip' });
      expect(r.status).toBe(201);
      expect((await api('GET', `/v1/vouchers/${r.body.vouchers[1].id}`, t.apiKey)).body).toMatchObject({
        bandwidth_profile: 'vip', bandwidth_down_mbps: 100, bandwidth_up_mbps: 40, daily_quota_mb: 10_000,
      });

      // Overriding a default; without daily_quota_mb the quota is unlimited.
      expect((await api('PUT', '/v1/bandwidth-profiles/basic', t.apiKey, { down_mbps: 4, up_mbps: 2 })).status).toBe(200);
      const basic = await api('POST', '/v1/vouchers', t.apiKey, { code: 'MYBASIC', bandwidth_profile: 'basic' });
      expect(basic.body).toMatchObject({ bandwidth_down_mbps: 4, bandwidth_up_mbps: 2, daily_quota_mb: null });

      // The other tenant keeps the defaults and has no vip.
      const theirs = await api('GET', '/v1/bandwidth-profiles', other.apiKey);
      expect(theirs.body.basic).toEqual({ down_mbps: 2, up_mbps: 1, daily_quota_mb: 500 });
      expect(theirs.body).not.toHaveProperty('vip');
      expect((await api('POST', '/v1/vouchers', other.apiKey, { code: 'VIP1', bandwidth_profile: 'vip' })).status).toBe(400);

      const badName = await api('PUT', '/v1/bandwidth-profiles/Not%20Valid', t.apiKey, { down_mbps: 1, up_mbps: 1 });
      expect(badName.status).toBe(400);
      expect(badName.body.error).toBe('validation_failed');
    });
  });

  describe('hotspots', () => {
    test('creates, lists, reads and updates a hotspot', async ({ tenant: t }) => {
      const created = await api('POST', '/v1/hotspots', t.apiKey, { name: 'Rooftop Bar', location: 'Floor 12', timezone: 'America/New_York' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^hs_[0-9a-z]{16}$/), name: 'Rooftop Bar', location: 'Floor 12', timezone: 'America/New_York',
        redirect_url: null, session_minutes: null, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO),
        portal: expect.objectContaining({ methods: ['voucher', 'sms_otp', 'msgapp_otp', 'email'], uam_secret_set: false }),
      });
      const id = created.body.id;

      const list = await api('GET', '/v1/hotspots', t.apiKey);
      expect(list.status).toBe(200);
      expect(list.body.data.map((h: { id: string }) => h.id)).toEqual([t.hotspotId, id]);
      expect((await api('GET', `/v1/hotspots/${id}`, t.apiKey)).body).toEqual(created.body);

      const put = await api('PUT', `/v1/hotspots/${id}`, t.apiKey, { name: 'Sky Bar', session_minutes: 45 });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ id, name: 'Sky Bar', location: 'Floor 12', timezone: 'America/New_York', session_minutes: 45 });
      expect(Date.parse(put.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
      expect((await api('GET', `/v1/hotspots/${id}`, t.apiKey)).body).toEqual(put.body);

      // The hotspot's session length applies to vouchers that set none.
      await api('POST', '/v1/vouchers', t.apiKey, { code: 'SKY-1' });
      const v = await verify(id, 'SKY-1');
      expect(Math.abs(Date.parse(v.body.expires_at) - (Date.now() + 45 * 60_000))).toBeLessThan(10_000);

      const missing = await api('GET', '/v1/hotspots/hs_0000000000000000', t.apiKey);
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('hotspot_not_found');
      expect((await api('PUT', '/v1/hotspots/hs_0000000000000000', t.apiKey, { name: 'x' })).status).toBe(404);
    });

    test('refuses a time zone that is not an IANA name with 400 validation_failed, on create and update', async ({ tenant: t }) => {
      for (const timezone of ['Mars/Olympus_Mons', 'GMT+25', 'Istanbul']) {
        const r = await api('POST', '/v1/hotspots', t.apiKey, { name: 'Bad', timezone });
        expect(r.status, timezone).toBe(400);
        expect(r.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'timezone' }] });
      }
      const put = await api('PUT', `/v1/hotspots/${t.hotspotId}`, t.apiKey, { timezone: 'Mars/Olympus_Mons' });
      expect(put.status).toBe(400);
      expect(put.body.details[0].field).toBe('timezone');
      expect((await api('GET', `/v1/hotspots/${t.hotspotId}`, t.apiKey)).body.timezone).toBe('Europe/Istanbul');
      expect((await api('GET', '/v1/hotspots', t.apiKey)).body.data).toHaveLength(1);
    });
  });

  describe('NAS clients', () => {
    test('registers a NAS with defaults; the secret is never in a response; an IP is taken once', async ({ svc, tenant: t }) => {
      const secret = `s3cret-${randomInt(1e9)}`;
      const { ip, answer: r } = await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (at) => ({ ip: at, secret, name: 'AP lobby' }));
      expect(r.body).toEqual({
        id: expect.stringMatching(/^nas_/), hotspot_id: t.hotspotId, ip, name: 'AP lobby',
        coa_port: 3799, require_message_authenticator: true, nas_identifier: null,
        nas_type: 'generic', reply_role: null, reply_filter_id: null, reply_vlan: null, radsec_cert_name: null, created_at: expect.stringMatching(ISO),
      });

      const { ip: ip2, answer: custom } = await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (at) => ({
        ip: at, secret: `${secret}-2`, coa_port: 1700, require_message_authenticator: false,
      }));
      expect(custom.body).toMatchObject({ ip: ip2, name: null, coa_port: 1700, require_message_authenticator: false });

      const list = await api('GET', `/v1/hotspots/${t.hotspotId}/nas-clients`, t.apiKey);
      expect(list.status).toBe(200);
      expect(list.body.data.map((n: { id: string }) => n.id)).toEqual([r.body.id, custom.body.id]);
      for (const a of [r, custom, list]) {
        expect(JSON.stringify(a.body)).not.toContain(secret);
        expect(JSON.stringify(a.body)).not.toContain('"secret"');
      }

      // The address is taken service-wide: on another hotspot, and for another tenant.
      const second = await api('POST', '/v1/hotspots', t.apiKey, { name: 'Annex', timezone: 'UTC' });
      const dup = await api('POST', `/v1/hotspots/${second.body.id}/nas-clients`, t.apiKey, { ip, secret: 'another-secret' });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ error: 'nas_ip_in_use', message: expect.any(String) });
      const other = await newTenant(svc.service);
      expect((await api('POST', `/v1/hotspots/${other.hotspotId}/nas-clients`, other.apiKey, { ip, secret: 'another-secret' })).status).toBe(409);
      expect((await api('GET', `/v1/hotspots/${t.hotspotId}/nas-clients`, t.apiKey)).body.data).toHaveLength(2);

      expect((await api('POST', '/v1/hotspots/hs_0000000000000000/nas-clients', t.apiKey, { ip: randomLoopback(), secret: 'whatever1' })).status).toBe(404);
    });
  });

  describe('deletion', () => {
    test('DELETE answers 200; the code then fails verify with voucher_not_found and the id with 404', async ({ tenant: t }) => {
      const v = await api('POST', '/v1/vouchers', t.apiKey, { code: 'GONE-SOON', max_uses: 5 });
      expect((await verify(t.hotspotId, 'GONE-SOON')).status).toBe(200);

      const del = await api('DELETE', `/v1/vouchers/${v.body.id}`, t.apiKey);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ id: v.body.id, code: 'GONE-SOON', deleted: true, deleted_at: expect.stringMatching(ISO) });

      const after = await verify(t.hotspotId, 'GONE-SOON');
      expect(after.status).toBe(404);
      expect(after.body).toEqual({ error: 'voucher_not_found' });
      const read = await api('GET', `/v1/vouchers/${v.body.id}`, t.apiKey);
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ error: 'voucher_not_found', message: expect.any(String) });
      expect((await api('DELETE', `/v1/vouchers/${v.body.id}`, t.apiKey)).status).toBe(404);
      expect((await api('GET', '/v1/vouchers', t.apiKey)).body.total).toBe(0);

      // The code may be issued again, as a new voucher with its own counter.
      const again = await api('POST', '/v1/vouchers', t.apiKey, { code: 'GONE-SOON', max_uses: 2 });
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(v.body.id);
      expect((await verify(t.hotspotId, 'GONE-SOON')).body.uses_left).toBe(1);
    });

    test('a deleted voucher stays gone after Redis is rebuilt from Postgres', async ({ redis, tenant: t }) => {
      const v = await api('POST', '/v1/vouchers', t.apiKey, { code: 'DEL-REBUILD', max_uses: 5 });
      await api('POST', '/v1/vouchers', t.apiKey, { code: 'KEEP-REBUILD', max_uses: 5 });
      expect((await api('DELETE', `/v1/vouchers/${v.body.id}`, t.apiKey)).status).toBe(200);
      await redis.del(keys.loaded(t.tenantId), keys.voucher(t.tenantId, 'KEEP-REBUILD'));
      expect((await verify(t.hotspotId, 'KEEP-REBUILD')).status).toBe(200);
      expect((await verify(t.hotspotId, 'DEL-REBUILD')).body).toEqual({ error: 'voucher_not_found' });
    });
  });
});
