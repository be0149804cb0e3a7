import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { beforeAll, describe, expect, inject } from 'vitest';
import { createLogger, projectPath, retentionCutoff, signOperatorToken } from '../../engine/index.js';
import { PrivacyRequestStore } from '../../engine/privacy/privacy-request-store.js';
import { FakeCarrier } from '../support/fake-carrier.js';
import { call, JWT_SECRET, keys, mac as macOf, newTenant, newVoucher, type Running, serviceTest, type Tenant, testEnv, until, clearOfMidnight, DAY_SCENARIO_MS } from '../support/fixture.js';
import { SmtpListener } from '../support/smtp-listener.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let smtp: SmtpListener;
// A Redis database of its own (as webhooks.test.ts): another file's service, with other settings, must
// not make (or refuse) this file's webhook deliveries. SECRETS_KEY: webhook secrets are sealed.
const REDIS_DB = 14;
const test = serviceTest(async () => {
  smtp = await SmtpListener.start();
  return { SMTP_URL: smtp.url, REDIS_URL: `${inject('redisUrl')}/${REDIS_DB}`, SECRETS_KEY: randomBytes(32).toString('base64') };
}).extend('redis', { scope: 'file' }, async ({}, { onCleanup }) => {
  const redis = new Redis(`${inject('redisUrl')}/${REDIS_DB}`);
  onCleanup(() => { redis.disconnect(); });
  return redis;
});
const DAY = 86_400_000;

/** Every spelling a store could hold a value in (a MAC also lower-case and dashed). */
const spellings = (v: string): string[] => (/^[0-9A-F]{2}(:[0-9A-F]{2}){5}$/.test(v)
  ? [v, v.toLowerCase(), v.replace(/:/g, '-'), v.replace(/:/g, '-').toLowerCase()] : [v]);

interface PgHit { table: string; column: string; n: number }

/**
 * Every text, varchar, inet and jsonb column of every table (partitions included) that holds one of
 * `values`, in the tenant's rows where the table has a tenant_id (another tenant's guest may share a MAC).
 */
async function scanPostgres(db: pg.Client, tenantId: string, values: string[]): Promise<PgHit[]> {
  const { rows: cols } = await db.query<{ t: string; c: string; tenanted: boolean }>(
    `SELECT c.relname AS t, a.attname AS c,
            EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.oid AND x.attname = 'tenant_id' AND NOT x.attisdropped) AS tenanted
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.atttypid IN ('text'::regtype, 'varchar'::regtype, 'jsonb'::regtype, 'json'::regtype, 'inet'::regtype, '_text'::regtype)`);
  const needles = values.flatMap(spellings).map((v) => `%${v}%`);
  const hits: PgHit[] = [];
  for (const { t, c, tenanted } of cols) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${t}" WHERE "${c}"::text LIKE ANY($1)${tenanted ? ' AND tenant_id = $2' : ' AND $2::text IS NOT NULL'}`, [needles, tenantId]);
    if (rows[0]!.n > 0) hits.push({ table: t, column: c, n: rows[0]!.n });
  }
  return hits;
}

/** Every key of the tenant whose name or content holds one of `values`. */
async function scanRedis(redis: Redis, tenantId: string, values: string[]): Promise<string[]> {
  const needles = values.flatMap(spellings);
  const has = (s: string): boolean => needles.some((n) => s.includes(n));
  const hits: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', keys.tenantScan(tenantId), 'COUNT', 500);
    cursor = next;
    for (const key of batch) {
      const type = await redis.type(key);
      const content = type === 'string' ? [await redis.get(key) ?? '']
        : type === 'hash' ? Object.entries(await redis.hgetall(key)).flat()
          : type === 'set' ? await redis.smembers(key)
            : type === 'zset' ? await redis.zrange(key, 0, -1)
              : type === 'list' ? await redis.lrange(key, 0, -1)
                : type === 'stream' ? (await redis.xrange(key, '-', '+')).flatMap(([id, f]) => [id, ...f]) : [];
      if (has(key) || content.some(has)) hits.push(key);
    }
  } while (cursor !== '0');
  return hits;
}

/**
 * Issue 21, Build 6: a data-subject request's erasure. A guest who signed in by e-mail, by SMS
 * and with a voucher from one device, was blocked, and is online from a second device, with
 * webhook deliveries made about them: afterwards nothing names them in Postgres or the tenant's
 * Redis but the 5651 records under the hold; the chain verifies before and after; the hold's end
 * pseudonymises the held rows; another tenant's guest with the same MAC keeps everything.
 */
describe('personal data: erasure under a legal hold', () => {
  // Its records are read back by their UTC day: the file's scenarios run clear of midnight.
  beforeAll(() => clearOfMidnight(DAY_SCENARIO_MS), DAY_SCENARIO_MS + 10_000);
  let svc: Running;
  let carrier: FakeCarrier;
  let rx: WebhookReceiver;
  let t: Tenant;
  let other: Tenant;
  const phone = `+90532${randomInt(1_000_000, 9_999_999)}`;
  const email = `guest.${randomInt(1e9)}@example.org`;
  const macA = macOf(randomInt(1 << 30), 0x7a);
  const macB = macOf(randomInt(1 << 30), 0x7b);

  test.beforeAll(async ({ svc: s_ }) => {
    svc = s_;
    carrier = await FakeCarrier.start();
    rx = await WebhookReceiver.start();
    t = await newTenant(svc.service, 'Privacy Venue');
    other = await newTenant(svc.service, 'Other Venue');
    process.env[`${t.tenantId.toUpperCase()}_NETGSM`] = 'privacy:Pw-privacy-1';
    const put = await call(svc.base, 'PUT', '/v1/settings/sign-in', {
      auth: t.apiKey,
      body: {
        methods: ['voucher', 'sms_otp', 'email'], email: { from: 'wifi@otel.example' }, otp: { cooldown_sec: 0 },
        sms: { provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${t.tenantId.toUpperCase()}_NETGSM` },
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const hook = await call(svc.base, 'POST', '/v1/webhooks', {
      auth: t.apiKey, body: { url: rx.url, events: ['session.start', 'session.end', 'device.new', 'voucher.redeemed'], secret: 'whsec-privacy-0123456789abcdef' },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    return async () => { await carrier.close(); await rx.close(); await smtp.close(); };
  });

  const portal = (path: string, body: Record<string, unknown>) => call(svc.base, 'POST', `/api/v1/hotspot-portal/${path}?hotspot_id=${t.hotspotId}`, { body });
  const sessionsOf = async (tenantId: string, db: pg.Client) =>
    (await db.query<{ id: string; mac: string; status: string }>('SELECT id, mac, status FROM sessions WHERE tenant_id = $1 ORDER BY started_at', [tenantId])).rows;
  const verifyChain = async (tenantId: string) => svc.service.engine.audit.verify(tenantId);

  test('access export, erasure, legal hold and its end', async ({ db, redis }) => {
    // --- The guest's traces: e-mail, SMS and voucher sign-ins from device A, a block, device B online.
    const mailed = smtp.messages.length;
    expect((await portal('email/request', { email, mac: macA, hotspot_id: t.hotspotId })).status).toBe(200);
    await until(() => smtp.messages.length > mailed, { what: 'the e-mail code' });
    expect((await portal('email/verify', { email, code: smtp.lastCode(email), mac: macA })).status).toBe(200);
    expect((await portal('sms/request', { phone, mac: macA, hotspot_id: t.hotspotId })).status).toBe(200);
    expect((await portal('sms/verify', { phone, code: carrier.lastCode(phone), mac: macA })).status).toBe(200);
    const v = await newVoucher(svc.base, t);
    const used = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: macA } });
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    await until(async () => (await sessionsOf(t.tenantId, db)).length >= 3, { what: 'three session rows' });
    const live = (await sessionsOf(t.tenantId, db)).filter((s) => s.status === 'active');
    expect(live).toHaveLength(1);
    const blocked = await call(svc.base, 'POST', `/v1/sessions/ses_${live[0]!.id.slice(5)}/block`, { auth: t.apiKey, body: { duration: '24h' } });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(200);
    expect((await portal('sms/request', { phone, mac: macB, hotspot_id: t.hotspotId })).status).toBe(200);
    expect((await portal('sms/verify', { phone, code: carrier.lastCode(phone), mac: macB })).status).toBe(200);
    // Another tenant's guest with the same MAC as device A.
    const ov = await newVoucher(svc.base, other);
    expect((await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${other.hotspotId}`, { body: { code: ov.code, mac: macA } })).status).toBe(200);
    await until(async () => (await sessionsOf(t.tenantId, db)).length >= 4 && (await sessionsOf(other.tenantId, db)).length === 1, { what: 'all session rows' });
    await rx.when(() => rx.requests.filter((r) => r.body.includes(macB)).length > 0 && rx.requests.some((r) => r.body.includes('session.end')), 'deliveries about the guest');
    const whDone = async () => Number(await redis.hlen(keys.webhookDeliveries(t.tenantId)));
    expect(await whDone()).toBeGreaterThan(0);
    const guest = [phone, email, macA, macB];
    expect((await scanPostgres(db, t.tenantId, guest)).length).toBeGreaterThan(0);
    expect((await scanRedis(redis, t.tenantId, guest)).length).toBeGreaterThan(0);
    expect((await verifyChain(t.tenantId)).valid).toBe(true);

    // --- Access: an export of everything held on device A: the device's rows, the guests who signed
    // in on it hidden (the device is the subject, the phones and e-mail addresses are other subjects).
    const access = await call(svc.base, 'POST', '/v1/privacy/requests', { auth: t.apiKey, body: { type: 'access', subject: { mac: macA.toLowerCase() }, note: 'letter of 2026-11-28' } });
    expect(access.status, JSON.stringify(access.body)).toBe(201);
    expect(access.body.id).toMatch(/^dsr_/);
    expect(access.body.status).toBe('open');
    expect(Date.parse(access.body.due_at) - Date.parse(access.body.filed_at)).toBe(30 * DAY);
    expect(JSON.stringify(access.body)).not.toContain(macA);
    const exp = await fetch(`${svc.base}/v1/privacy/requests/${access.body.id}/export`, { headers: { 'x-api-key': t.apiKey } });
    expect(exp.status).toBe(200);
    expect(exp.headers.get('content-type')).toContain('application/json');
    const doc = JSON.parse(await exp.text());
    expect(doc.subject).toEqual({ kind: 'mac', value: macA });
    expect(doc.linked).toEqual([]);
    expect(doc.sessions.map((s: { auth_method: string }) => s.auth_method).sort()).toEqual(['email', 'sms_otp', 'voucher']);
    expect(JSON.stringify(doc)).not.toContain(phone);
    expect(JSON.stringify(doc)).not.toContain(email);
    expect(JSON.stringify(doc)).not.toContain(macB);
    expect(doc.sessions.filter((s: { voucher_id: string | null }) => s.voucher_id === v.id)).toHaveLength(1);
    expect(doc.blocks).toEqual([expect.objectContaining({ id: macA, duration: '24h' })]);
    expect(doc.audit_records.map((r: { event_type: string }) => r.event_type)).toEqual(expect.arrayContaining(['session_start', 'session_end', 'device_blocked']));
    const cats = new Set(doc.redis.map((f: { category: string }) => f.category));
    for (const c of ['known_devices', 'events', 'webhook_deliveries', 'blocks']) expect(cats, c).toContain(c);
    expect(JSON.stringify(doc)).not.toContain(other.tenantId);
    // Tenants never see each other's requests.
    expect((await call(svc.base, 'GET', `/v1/privacy/requests/${access.body.id}`, { auth: other.apiKey })).status).toBe(404);
    expect((await call(svc.base, 'GET', `/v1/privacy/requests/${access.body.id}/export`, { auth: other.apiKey })).status).toBe(404);
    expect((await call(svc.base, 'GET', '/v1/privacy/requests', { auth: other.apiKey })).body.data).toEqual([]);
    const closedAccess = await call(svc.base, 'POST', `/v1/privacy/requests/${access.body.id}/close`, { auth: t.apiKey, body: { outcome: 'completed', note: 'export sent' } });
    expect(closedAccess.status, JSON.stringify(closedAccess.body)).toBe(200);
    expect((await call(svc.base, 'GET', `/v1/privacy/requests/${access.body.id}/export`, { auth: t.apiKey })).body.error).toBe('privacy_request_closed');

    // --- Erasure by phone: the phone and the two devices it signed in from. Device B's live session
    // ends, the legal records are held, the rest goes; the e-mail address's sign-in on device A is
    // another identity's row (it could be another guest on a shared device) and stays as it is.
    const filed = await call(svc.base, 'POST', '/v1/privacy/requests', { auth: t.apiKey, body: { type: 'erasure', subject: { phone } } });
    expect(filed.status).toBe(201);
    const erased = await call(svc.base, 'POST', `/v1/privacy/requests/${filed.body.id}/close`, { auth: t.apiKey, body: { outcome: 'completed' } });
    expect(erased.status, JSON.stringify(erased.body)).toBe(200);
    const result = erased.body.result;
    expect(result.identities).toBe(3);
    expect(result.sessions_ended).toBe(1);
    expect(result.blocks_lifted).toBe(1);
    expect(result.hold).toEqual({ id: expect.stringMatching(/^lgh_/), held_until: expect.any(String), sessions: 3, audit_records: expect.any(Number) });
    const hold = result.hold as { id: string; held_until: string };
    // Two years and a day or two from now: until the retention job no longer keeps today's records.
    expect(Date.parse(hold.held_until) - Date.now()).toBeGreaterThan(729 * DAY);
    expect(retentionCutoff(Date.parse(hold.held_until)) > new Date().toISOString().slice(0, 10)).toBe(true);
    expect(retentionCutoff(Date.parse(hold.held_until) - DAY) <= new Date().toISOString().slice(0, 10)).toBe(true);

    // Postgres: only the 5651 records: the held session rows (marked) and the audit chain's partitions.
    const erasedIds = [phone, macA, macB];
    const hits = await scanPostgres(db, t.tenantId, erasedIds);
    for (const h of hits) expect(`${h.table}.${h.column}`).toMatch(/^(sessions\.(mac|username)|audit_records_\d{8}\.(mac_address|username|details))$/);
    const unmarked = await db.query('SELECT mac, username FROM sessions WHERE tenant_id = $1 AND legal_hold IS DISTINCT FROM $2', [t.tenantId, hold.id]);
    expect(unmarked.rows).toEqual([{ mac: macA, username: email }]);
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM legal_holds WHERE tenant_id = $1 AND id = $2 AND released_at IS NULL', [t.tenantId, hold.id])).rows[0]!.n).toBe(1);
    // Redis: nothing at all.
    expect(await scanRedis(redis, t.tenantId, erasedIds)).toEqual([]);
    expect(await redis.exists(keys.block(t.tenantId, macA))).toBe(0);
    // The chain verifies, and records the request by reference, never the phone.
    expect((await verifyChain(t.tenantId)).valid).toBe(true);
    const closedRecord = () => db.query<{ details: Record<string, unknown> }>(
      `SELECT details FROM audit_records WHERE tenant_id = $1 AND event_type = 'privacy_request_closed' AND details->>'request_id' = $2`, [t.tenantId, filed.body.id]);
    await until(async () => (await closedRecord()).rows.length === 1, { what: 'the request closed in the chain' });
    const note = (await closedRecord()).rows[0]!.details;
    expect(note).toMatchObject({ request_id: filed.body.id, type: 'erasure', subject_kind: 'phone', subject_ref: filed.body.subject.ref, hold_id: hold.id });
    // The closed request keeps the reference and a mask, not the value.
    expect((await db.query('SELECT subject_value FROM privacy_requests WHERE id = $1', [filed.body.id])).rows[0].subject_value).toBeNull();
    const cli = await promisify(execFile)(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), 'audit', 'verify', '--tenant', t.tenantId],
      { env: { ...process.env, ...testEnv({ REDIS_URL: `${inject('redisUrl')}/${REDIS_DB}` }) } });
    expect(cli.stdout).toMatch(/^chain valid: \d+ records/);

    // The other tenant's guest with device A's MAC is untouched.
    expect((await sessionsOf(other.tenantId, db)).map((s) => s.mac)).toEqual([macA]);
    expect(await redis.hexists(keys.knownDevices(other.tenantId), macA)).toBe(1);

    // The deletions are listed, and the summary counts the request and the hold.
    const today = new Date().toISOString().slice(0, 10);
    const dels = await call(svc.base, 'GET', `/v1/privacy/deletions?from=${today}&to=${today}`, { auth: t.apiKey });
    expect(dels.body.data.map((d: { kind: string; category: string }) => `${d.kind}:${d.category}`)).toEqual(expect.arrayContaining(['erasure:blocks', 'erasure:redis']));

    // --- The hold's end (the retention job's step, driven to held_until): held rows lose who; the
    // audit records' days are all behind the cutoff then, so their partitions are dropped that run.
    // Not a moment early. (The count the call returns is every tenant's: other files' holds, made a little
    // earlier, fall due a little earlier, so this tenant's hold is asked about, not the total.)
    await svc.service.engine.privacy.releaseDueHolds(Date.parse(hold.held_until) - 1, createLogger('silent'));
    expect((await db.query('SELECT released_at FROM legal_holds WHERE id = $1', [hold.id])).rows).toEqual([{ released_at: null }]);
    await svc.service.engine.privacy.releaseDueHolds(Date.parse(hold.held_until), createLogger('silent'));
    const after = await scanPostgres(db, t.tenantId, [phone, macB]);
    for (const h of after) expect(h.table).toMatch(/^audit_records_\d{8}$/);
    const heldDays = (await db.query<{ day: string }>(
      `SELECT DISTINCT day::text AS day FROM audit_records WHERE tenant_id = $1 AND (mac_address = ANY($2) OR username = ANY($2))`, [t.tenantId, guest])).rows;
    expect(heldDays.length).toBeGreaterThan(0);
    for (const { day } of heldDays) expect(day < retentionCutoff(Date.parse(hold.held_until))).toBe(true);
    expect((await db.query<{ mac: string; username: string | null }>('SELECT mac, username FROM sessions WHERE tenant_id = $1 AND username IS DISTINCT FROM $2', [t.tenantId, email])).rows)
      .toEqual(Array(3).fill({ mac: `erased-${hold.id.slice(4, 16)}`, username: null }));
    const released = await db.query('SELECT kind, rows, ref FROM privacy_deletions WHERE tenant_id = $1 AND kind = $2', [t.tenantId, 'hold_released']);
    expect(released.rows).toEqual([{ kind: 'hold_released', rows: 3, ref: hold.id }]);
    expect((await verifyChain(t.tenantId)).valid).toBe(true);
  });

  test('due in 30 days, overdue listing, filters and the summary', async ({ svc: s, tenant, db }) => {
    const filed = await call(s.base, 'POST', '/v1/privacy/requests', { auth: tenant.apiKey, body: { type: 'correction', subject: { email: 'Someone@Example.org' } } });
    expect(filed.status).toBe(201);
    expect(filed.body.subject).toMatchObject({ kind: 'email', masked: 's******@example.org' });
    const store = (ms: number) => new PrivacyRequestStore(s.service.engine.pool, () => Date.parse(filed.body.filed_at) + ms);
    expect(await store(30 * DAY - 1).list(tenant.tenantId, { overdue: true, limit: 10 })).toEqual([]);
    expect((await store(30 * DAY + 1).list(tenant.tenantId, { overdue: true, limit: 10 })).map((r) => [r.id, r.overdue])).toEqual([[filed.body.id, true]]);
    expect((await call(s.base, 'GET', '/v1/privacy/requests?overdue=true', { auth: tenant.apiKey })).body.data).toEqual([]);
    expect((await call(s.base, 'GET', '/v1/privacy/requests?status=open', { auth: tenant.apiKey })).body.data.map((r: { id: string }) => r.id)).toEqual([filed.body.id]);
    // Guests' identities in clear: admin or compliance only.
    const viewer = await signOperatorToken(new TextEncoder().encode(JWT_SECRET), tenant.tenantId, ['viewer'], 600);
    const auditor = await signOperatorToken(new TextEncoder().encode(JWT_SECRET), tenant.tenantId, ['compliance'], 600);
    expect((await call(s.base, 'GET', '/v1/privacy/requests', { bearer: viewer })).status).toBe(403);
    expect((await call(s.base, 'POST', '/v1/privacy/requests', { bearer: viewer, body: { type: 'access', subject: { mac: '02:00:00:00:00:01' } } })).status).toBe(403);
    expect((await call(s.base, 'GET', `/v1/privacy/requests/${filed.body.id}`, { bearer: auditor })).status).toBe(200);
    // Refused: two subjects, a bad phone.
    const two = await call(s.base, 'POST', '/v1/privacy/requests', { auth: tenant.apiKey, body: { type: 'access', subject: { phone: '+905321112233', mac: '02:00:00:00:00:01' } } });
    expect(two.status).toBe(400);
    const bad = await call(s.base, 'POST', '/v1/privacy/requests', { auth: tenant.apiKey, body: { type: 'access', subject: { phone: '12' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_failed');
    const closed = await call(s.base, 'POST', `/v1/privacy/requests/${filed.body.id}/close`, { auth: tenant.apiKey, body: { outcome: 'rejected', note: 'no data of that address' } });
    expect(closed.body).toMatchObject({ status: 'closed', outcome: 'rejected', overdue: false });
    expect((await call(s.base, 'POST', `/v1/privacy/requests/${filed.body.id}/close`, { auth: tenant.apiKey, body: { outcome: 'rejected' } })).body.error).toBe('privacy_request_closed');
    expect((await call(s.base, 'GET', '/v1/privacy/requests/dsr_nope', { auth: tenant.apiKey })).body.error).toBe('privacy_request_not_found');
    const today = new Date().toISOString().slice(0, 10);
    const sum = await call(s.base, 'GET', `/v1/privacy/summary?from=${today}&to=${today}`, { auth: tenant.apiKey });
    expect(sum.status).toBe(200);
    expect(sum.body.requests).toEqual({ open: 0, overdue: 0, filed: 1, closed: 1, closed_late: 0 });
    expect(sum.body.categories.map((c: { category: string }) => c.category)).toEqual(expect.arrayContaining(['access_log_sessions', 'audit_chain', 'blocks', 'legal_holds', 'known_devices']));
    expect(sum.body.categories.every((c: { compliant: boolean }) => c.compliant)).toBe(true);
    expect((await db.query('SELECT subject_value FROM privacy_requests WHERE id = $1', [filed.body.id])).rows[0].subject_value).toBeNull();
  });

  /** Ended session rows written as the outbox writer would (no live session: nothing waits for Redis). */
  const endedSession = (db: pg.Client, tenant: Tenant, mac: string, username: string | null, method: string) => db.query(
    `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, started_at, ends_at, ended_at, status)
     VALUES ($1, $2, $3, $4, '10.0.0.7', $5, $6, now() - interval '2 hours', now() - interval '1 hour', now() - interval '1 hour', 'ended')`,
    [`sess_${randomBytes(8).toString('hex')}`, tenant.tenantId, tenant.hotspotId, mac, username, method]);
  const fileAs = async (s: Running, tenant: Tenant, type: string, subject: Record<string, string>) => {
    const filed = await call(s.base, 'POST', '/v1/privacy/requests', { auth: tenant.apiKey, body: { type, subject } });
    expect(filed.status, JSON.stringify(filed.body)).toBe(201);
    return filed.body.id as string;
  };

  test("a second guest on a shared device is neither in the first guest's export nor touched by her erasure", async ({ svc: s, tenant, db, redis }) => {
    const alice = `+90532${randomInt(1_000_000, 9_999_999)}`;
    const bob = `+90533${randomInt(1_000_000, 9_999_999)}`;
    const shared = macOf(randomInt(1 << 30), 0x7e);
    const bobsOwn = macOf(randomInt(1 << 30), 0x7f);
    await endedSession(db, tenant, shared, alice, 'sms_otp');
    await endedSession(db, tenant, shared, bob, 'sms_otp');
    await endedSession(db, tenant, bobsOwn, bob, 'sms_otp');
    // An entry about the shared device that also names Bob (as an event or a decision would).
    const note = keys.sponsorRequest(tenant.tenantId, `spr_${randomInt(1e9)}`);
    await redis.hset(note, { event: JSON.stringify({ mac: shared, user: bob }) });
    const bobsKey = keys.sponsorRequest(tenant.tenantId, `spr_${randomInt(1e9)}`);
    await redis.hset(bobsKey, { mac: bobsOwn, guest_phone: bob });

    const access = await fileAs(s, tenant, 'access', { phone: alice });
    const exp = await fetch(`${s.base}/v1/privacy/requests/${access}/export`, { headers: { 'x-api-key': tenant.apiKey } });
    const text = await exp.text();
    expect(exp.status).toBe(200);
    const doc = JSON.parse(text);
    expect(doc.linked).toEqual([{ kind: 'mac', value: shared }]);
    expect(doc.sessions.map((r: { username: string }) => r.username)).toEqual([alice]);
    expect(text).not.toContain(bob);
    expect(text).not.toContain(bobsOwn);
    expect(doc.redis.some((f: { entries: string[] }) => f.entries.some((e) => e.includes('(another guest)')))).toBe(true);

    const erasure = await fileAs(s, tenant, 'erasure', { phone: alice });
    const erased = await call(s.base, 'POST', `/v1/privacy/requests/${erasure}/close`, { auth: tenant.apiKey, body: { outcome: 'completed' } });
    expect(erased.status, JSON.stringify(erased.body)).toBe(200);
    expect(erased.body.result.identities).toBe(2);
    expect(erased.body.result.hold.sessions).toBe(1);
    const rows = await db.query<{ username: string; mac: string; held: boolean }>(
      'SELECT username, mac, legal_hold IS NOT NULL AS held FROM sessions WHERE tenant_id = $1', [tenant.tenantId]);
    expect(rows.rows).toHaveLength(3);
    expect(rows.rows).toEqual(expect.arrayContaining([
      { username: alice, mac: shared, held: true }, { username: bob, mac: bobsOwn, held: false }, { username: bob, mac: shared, held: false },
    ]));
    expect(await redis.hgetall(bobsKey)).toEqual({ mac: bobsOwn, guest_phone: bob });
  });

  test('an identity is matched as a whole value: bob@mail.co is not jimbob@mail.com, a phone not a longer number', async ({ svc: s, tenant, redis }) => {
    const n = randomInt(1e9);
    const email = `bob${n}@mail.co`;
    const phone = `+90534${randomInt(1_000_000, 9_999_999)}`;
    const jim = keys.sponsorRequest(tenant.tenantId, `spr_${randomInt(1e9)}`);
    const longer = keys.sponsorRequest(tenant.tenantId, `spr_${randomInt(1e9)}`);
    const mine = keys.sponsorRequest(tenant.tenantId, `spr_${randomInt(1e9)}`);
    await redis.hset(jim, { sponsor: `jim${email}m`, body: `{"to":"jim${email}m"}` });
    await redis.hset(longer, { sponsor: `${phone}9`, body: `call ${phone}12` });
    await redis.hset(mine, { body: `{"to":"${email}","cc":"jim${email}m"}` });

    const access = await fileAs(s, tenant, 'access', { email });
    const doc = JSON.parse(await (await fetch(`${s.base}/v1/privacy/requests/${access}/export`, { headers: { 'x-api-key': tenant.apiKey } })).text());
    expect(doc.redis.map((f: { key: string }) => f.key)).toEqual([mine]);
    const erasure = await fileAs(s, tenant, 'erasure', { email });
    expect((await call(s.base, 'POST', `/v1/privacy/requests/${erasure}/close`, { auth: tenant.apiKey, body: { outcome: 'completed' } })).status).toBe(200);
    expect(await redis.hgetall(jim)).toEqual({ sponsor: `jim${email}m`, body: `{"to":"jim${email}m"}` });
    expect(await redis.hget(mine, 'body')).toMatch(/^\{"to":"erased-[0-9a-f]{12}","cc":"jim/);

    const byPhone = await fileAs(s, tenant, 'erasure', { phone });
    expect((await call(s.base, 'POST', `/v1/privacy/requests/${byPhone}/close`, { auth: tenant.apiKey, body: { outcome: 'completed' } })).status).toBe(200);
    expect(await redis.hgetall(longer)).toEqual({ sponsor: `${phone}9`, body: `call ${phone}12` });
  });

  test("a correction puts right the guest name of the subject's sponsor requests, and nothing else", async ({ svc: s, tenant, redis }) => {
    const device = macOf(randomInt(1 << 30), 0x7c);
    const mine = keys.sponsorRequest(tenant.tenantId, `spr_${randomInt(1e9)}`);
    const theirs = keys.sponsorRequest(tenant.tenantId, `spr_${randomInt(1e9)}`);
    await redis.hset(mine, { status: 'pending', hs: tenant.hotspotId, mac: device, guest: 'Ayse Yilmz', sponsor: 'host@venue.example' });
    await redis.hset(theirs, { status: 'pending', hs: tenant.hotspotId, mac: macOf(randomInt(1 << 30), 0x7d), guest: 'Mehmet Kaya', sponsor: 'host@venue.example' });
    const filed = await call(s.base, 'POST', '/v1/privacy/requests', { auth: tenant.apiKey, body: { type: 'correction', subject: { mac: device }, note: 'name misspelt' } });
    const closed = await call(s.base, 'POST', `/v1/privacy/requests/${filed.body.id}/close`, {
      auth: tenant.apiKey, body: { outcome: 'completed', correction: { guest_name: 'Ayşe Yılmaz' } },
    });
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect(closed.body.result).toEqual({ sponsor_requests_corrected: 1 });
    expect(await redis.hget(mine, 'guest')).toBe('Ayşe Yılmaz');
    expect(await redis.hget(theirs, 'guest')).toBe('Mehmet Kaya');
  });
});
