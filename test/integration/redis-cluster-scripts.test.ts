import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { EventTrimmer } from '../../engine/events/event-trimmer.js';
import { AccountBatcher } from '../../engine/sessions/account-batcher.js';
import { readScript } from '../../engine/redis/scripts.js';
import { OtpStore, type NewCode } from '../../engine/signin/otp/otp-store.js';
import { newLinkToken, SponsorStore } from '../../engine/signin/sponsor/sponsor-store.js';
import { projectPath } from '../../engine/util/project-root.js';
import { FiasSimulator } from '../support/fias-simulator.js';
import { clusterServiceTest, type ClusterTenant } from '../support/cluster-service.js';
import { call, keys, macs, newVoucher, until } from '../support/fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { registerOnFreeLoopback } from '../support/loopback-nas.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const test = clusterServiceTest({
  SECRETS_KEY: randomBytes(32).toString('base64'), WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_POLL_MS: '20',
  PMS_HOLD_LINKS: 'true', PMS_KEEPALIVE_SEC: '1', PMS_LEASE_MS: '1500',
});
const mac = macs();
const log = createLogger('silent');

/** Every script of engine/redis/lua with the SHA-1 ioredis runs it by (EVALSHA of the text defineCommand got). */
const SCRIPTS = readdirSync(projectPath('engine', 'redis', 'lua')).filter((f) => f.endsWith('.lua'))
  .map((file) => ({ file, sha: createHash('sha1').update(readScript(file)).digest('hex') }));

/**
 * Every Lua script of the engine, run on a 3-master Redis Cluster through the
 * engine's own calls (the routes, the services, the stores), for tenants
 * whose keys sit on different masters. A script handed keys of two slots
 * fails there with CROSSSLOT; ioredis sends each call to the master of its
 * first key's slot. The last test checks that every script file did run
 * (its SHA is cached on a master: only EVAL puts it there) and that no node
 * ever answered CROSSSLOT (INFO errorstats).
 */
describe('every Lua script on a Redis Cluster', () => {
  let tenants: ClusterTenant[] = [];

  test('tenants on three masters: vouchers, sign-ins, RADIUS, sessions, posture, audit and the dashboard', async ({ svc, spread }) => {
    tenants = spread;
    const e = svc.service.engine;
    for (const t of spread) {
      const v = await newVoucher(svc.base, t, { max_uses: 5 }); // putVoucher, commitAudit
      const first = mac();
      const second = mac();
      const signIn = async (m: string): Promise<string> => {
        const r = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: m, ip: '10.9.0.7', ssid: 'Guest' } });
        expect(r.status, JSON.stringify(r.body)).toBe(200); // useVoucher; recordDecisions; renewLease (the hotspot's actor)
        return String(r.body.session_id);
      };
      const sid = await signIn(first);
      const sid2 = await signIn(second);

      // RADIUS: an Access-Request names the NAS (rememberNas), accounting counts bytes (accountSession(s)), the NAS is seen (markNasSeen).
      const { answer: nasReg } = await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (ip) => ({ ip, secret: `s3cret-${randomBytes(8).toString('hex')}` }));
      const nas = e.nas.get(nasReg.body.id)!;
      expect(await e.radius.authorize({ nas, mac: first, userName: 'guest', ssid: 'Lobby' } as Parameters<typeof e.radius.authorize>[0])).toMatchObject({ accept: true });
      const acct = { nas, mac: first, userName: 'guest', acctSessionId: `c-${first}`, sessionTime: 0, delayTime: 0 };
      await e.radius.account({ ...acct, status: 'start', inputOctets: 0, outputOctets: 0 });
      await e.radius.account({ ...acct, status: 'interim', inputOctets: 1000, outputOctets: 2000, sessionTime: 30 });
      // Reports of one turn go to Redis together, in one call (accountSessions): the actors' batcher, two reports at once.
      const batcher = new AccountBatcher(e.redis);
      const report = { tenant: t.tenantId, hs: t.hotspotId, day: '20261129', nowMs: Date.now(), inOctets: 10, outOctets: 20, ip: '', ap: '', signal: '', status: 'interim' as const };
      const replies = await Promise.all([first, second].map((m) => batcher.submit({ ...report, mac: m, acctId: `c-${m}` })));
      expect(replies.map((r) => r[0])).toEqual(['ok', 'ok']);

      expect(await e.sessions.extend(t.tenantId, sid, 30, 'test')).toMatchObject({ status: 'active' }); // extendSession
      expect(await e.sessions.disconnect(t.tenantId, sid2, 'test')).toMatchObject({ status: 'disconnected' }); // endSession
      await e.posture.record(t.tenantId, { mac: first, verdict: 'pass', hotspot_id: t.hotspotId }); // recordPosture
      expect((await e.readModels.overview(t.tenantId))).toBeTruthy(); // readBatch

      // A long operator change keeps its intent fresh (refreshIntent), then commits it (commitAudit).
      const change = await e.auditLog.begin(t.tenantId, { by: 'test', route: 'PUT /v1/test', params: [] });
      await change.refresh();
      await change.withdraw();

      expect((await call(svc.base, 'DELETE', `/v1/vouchers/${v.id}`, { auth: t.apiKey })).status).toBe(200); // removeVoucher
    }
    // The sink stores the starts and raises the vouchers' counters in Redis after its commit (raiseUsesN).
    await until(async () => (await e.pool.query('SELECT 1 FROM sessions WHERE tenant_id = ANY($1)', [spread.map((t) => t.tenantId)])).rowCount === 6,
      { what: 'six session rows' });
  });

  test('webhooks: subscribe, route, claim, settle, dead-letter, redeliver, erase from a kept body, unsubscribe, trim', async ({ svc }) => {
    const e = svc.service.engine;
    const rx = await WebhookReceiver.start();
    let healthy = false;
    rx.reply = () => ({ status: healthy ? 200 : 503 });
    try {
      for (const t of tenants) {
        const sub = await call(svc.base, 'POST', '/v1/webhooks', { auth: t.apiKey, body: { url: rx.url, events: ['device.new'], secret: 'test-signing-secret-0123456789' } });
        expect(sub.status, JSON.stringify(sub.body)).toBe(201); // addWebhook
        const device = mac();
        healthy = false;
        await e.events.append(t.tenantId, 'device.new', t.hotspotId, { mac: device }); // routeWebhookEvents, claimWebhookDeliveries, settleWebhookDeliveries
        const dead = async (): Promise<{ delivery_id: string }[]> =>
          (await call(svc.base, 'GET', `/v1/webhooks/${sub.body.id}/deliveries?status=dead`, { auth: t.apiKey })).body.data;
        await until(async () => (await dead()).length === 1, { what: 'a dead letter', timeoutMs: 20_000 });

        // Erasure of the device: its MAC in the kept body is pseudonymised (replaceHashValue).
        const filed = await call(svc.base, 'POST', '/v1/privacy/requests', { auth: t.apiKey, body: { type: 'erasure', subject: { mac: device } } });
        expect(filed.status, JSON.stringify(filed.body)).toBe(201);
        expect((await call(svc.base, 'POST', `/v1/privacy/requests/${filed.body.id}/close`, { auth: t.apiKey, body: { outcome: 'completed' } })).status).toBe(200);

        healthy = true;
        const delivered = rx.requests.filter((r) => r.answered === 200).length;
        const again = await call(svc.base, 'POST', `/v1/webhooks/${sub.body.id}/deliveries/${(await dead())[0]!.delivery_id}/redeliver`, { auth: t.apiKey });
        expect(again.status).toBe(202); // redeliverWebhook
        await rx.when(() => rx.requests.filter((r) => r.answered === 200).length > delivered, 'the redelivery');
        expect((await call(svc.base, 'DELETE', `/v1/webhooks/${sub.body.id}`, { auth: t.apiKey })).status).toBeLessThan(300); // removeWebhook
      }
    } finally {
      await rx.close();
    }
    // The events trimmer's pass over every tenant's stream (trimEvents), one pipeline per slot.
    const trimmer = new EventTrimmer(e.redis, async () => tenants.map((t) => t.tenantId), log);
    expect(await trimmer.trimAll(1)).toBeGreaterThanOrEqual(0);
    // A graceful stop's release of a hotspot's lease (releaseLease), asked by a process that does not hold it: nothing changes.
    for (const t of tenants) expect(await e.redis.releaseLeaseV1(keys.lease(t.tenantId, t.hotspotId), keys.leaseNext(t.tenantId, t.hotspotId), 'not-the-holder')).toBe(0);
  });

  test('OTP and sponsor approval through their stores on the cluster client', async ({ svc }) => {
    const e = svc.service.engine;
    const otp = new OtpStore(e.redis);
    const sponsor = new SponsorStore(e.redis);
    const now = Date.now();
    const terms = { channel: 'sms' as const, method: 'sms_otp' as const, minutes: 60, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '' };
    const limits = { cooldown_sec: 0, per_identity_daily: 100, per_ip_hourly: 100, per_mac_hourly: 100, per_prefix_hourly: 100 } as unknown as NewCode['limits'];
    for (const t of tenants) {
      await e.vouchers.loadIntoRedis(t.tenantId); // the loaded marker, set on the tenant's own master (serverRunId by its key)
      const identity = `+90532${Math.floor(1_000_000 + Math.random() * 8_999_999)}`;
      const requestId = `otp_${randomBytes(8).toString('hex')}`;
      const code = { tenantId: t.tenantId, hotspotId: t.hotspotId, identity, channel: 'msgapp' as const, source: '10.1.1.1', mac: mac(), prefix: '90532', limits };
      // The watch falls due on this test's clock only (`later`): the service's own fallback poller, on the
      // real clock, would otherwise claim a watch already due before this test does (fresh-clone run 49).
      const later = now + 600_000;
      expect(await otp.request({ ...code, requestId, hash: 'h1', fallbackDueMs: later, fallbackSms: true }, now)).toEqual({ ok: true }); // requestOtp
      expect(await otp.claimDue(t.tenantId, later, 10)).toContain(requestId); // claimOtpFallbacks
      expect(await otp.settle(t.tenantId, { hotspotId: t.hotspotId, identity }, requestId, 'resent', 'h2', later, 'sent')).toBe(true); // settleOtpFallback
      await otp.delivered(t.tenantId, requestId, 'sms'); // markOtpDelivered
      const used = await otp.use({ tenantId: t.tenantId, hotspotId: t.hotspotId, identity, hash: 'h2', mac: code.mac, ip: '10.1.1.1', ssid: 'Lobby',
        sessionId: `sess_${randomBytes(8).toString('hex')}`, now: later, terms: [terms] }); // useOtp
      expect(used.kind).toBe('started');

      const ask = async (): Promise<{ requestId: string; tokenHash: string; mac: string }> => {
        const requestId = `spr_${randomBytes(8).toString('hex')}.${t.tenantId}`;
        const { hash } = newLinkToken(t.tenantId);
        const device = mac();
        expect(await sponsor.file({ tenantId: t.tenantId, requestId, tokenHash: hash, hotspotId: t.hotspotId, mac: device, ip: '10.1.1.2', ssid: 'Lobby',
          guest: 'Guest', sponsor: 'host@example.com', gateway: '', lang: 'en', source: '10.1.1.2', linkTtlMs: 60_000,
          limits: { perIp: 100, perMac: 100, perSponsor: 100 } }, now)).toEqual({ ok: true }); // requestSponsor
        return { requestId, tokenHash: hash, mac: device };
      };
      const a = await ask();
      const approved = await sponsor.approve({ tenantId: t.tenantId, requestId: a.requestId, tokenHash: a.tokenHash, mac: a.mac, hotspotId: t.hotspotId, ip: '10.1.1.2',
        ssid: 'Lobby', sessionId: `sess_${randomBytes(8).toString('hex')}`, minutes: 60, idleSec: 0, user: 'Guest', downKbps: 0, upKbps: 0, quotaMb: 0,
        sessionQuotaMb: 0, profile: '' }, now); // approveSponsor
      expect(String(approved[0])).toBe('ok');
      const b = await ask();
      expect(await sponsor.reject(t.tenantId, b.requestId, b.tokenHash, now)).toBe('ok'); // rejectSponsor
      const c = await ask();
      await sponsor.withdraw(t.tenantId, c.requestId, c.tokenHash, now); // withdrawSponsor
      expect((await sponsor.get(t.tenantId, c.requestId, now))?.status).not.toBe('pending');
    }
  });

  test('room sign-in over a PMS link: hold the link, a miss, a sign-in, a check-out', async ({ svc }) => {
    const t = tenants[0]!;
    const sim = await FiasSimulator.start();
    const reservation = `R${randomBytes(3).toString('hex').toUpperCase()}`;
    sim.checkIn({ reservation, room: '204', name: 'Yilmaz' });
    try {
      const put = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey, body: { host: '127.0.0.1', port: sim.port, resync_after_gap_sec: 3600 } });
      expect(put.status, JSON.stringify(put.body)).toBe(200); // holdPmsLease from here on
      const link = async (): Promise<boolean> => (await call(svc.base, 'GET', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey })).body.status?.accepting_sign_ins === true;
      await until(link, { what: 'the PMS link accepting sign-ins', timeoutMs: 20_000 });
      const verify = (surname: string, m: string): Promise<{ status: number; body: Record<string, unknown> }> =>
        call(svc.base, 'POST', `/api/v1/hotspot-portal/pms/verify?hotspot_id=${t.hotspotId}`, { body: { room: '204', surname, mac: m, ip: '10.30.0.9' } });
      expect((await verify('Nobody', mac())).status).toBeGreaterThanOrEqual(400); // reservePmsGuess
      const ok = await verify('Yilmaz', mac());
      expect(ok.status, JSON.stringify(ok.body)).toBe(200); // startSession, attachPmsSession
      sim.checkOut(reservation); // checkOutPmsGuest
      await until(async () => (await call(svc.base, 'GET', `/v1/sessions/${String(ok.body.session_id)}`, { auth: t.apiKey })).body.status !== 'active',
        { what: 'the check-out ending the session', timeoutMs: 20_000 });
    } finally {
      await call(svc.base, 'DELETE', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey });
      await sim.close();
    }
  });

  test('every script ran on some master, and no node ever answered CROSSSLOT', async ({ cluster }) => {
    const masters = cluster.nodes.map((n) => cluster.node(n.port));
    try {
      const cached = await Promise.all(masters.map((m) => m.script('EXISTS', ...SCRIPTS.map((s) => s.sha)) as Promise<number[]>));
      const missing = SCRIPTS.filter((_, i) => cached.every((c) => c[i] !== 1)).map((s) => s.file);
      expect(missing).toEqual([]);
      const perMaster = cached.map((c) => c.filter((x) => x === 1).length);
      expect(perMaster.filter((n) => n > 0).length, 'scripts ran on every master').toBe(3);
      for (const m of masters) expect(await m.info('errorstats')).not.toMatch(/CROSSSLOT/);
    } finally {
      for (const m of masters) m.disconnect();
    }
  });
});

