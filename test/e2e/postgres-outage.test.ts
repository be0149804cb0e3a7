import { describe, expect } from 'vitest';
import { e2eTest, expectOneStartEach, keys, startStorm, until, type ServiceProcess } from './own-stack.js';

/**
 * Invariant 2 while Postgres is away: sign-in needs only Redis (the decision,
 * the grant and the queued start record are one Lua script), so guests keep
 * being authorised through a 60 s Postgres outage; when Postgres is back the
 * sink delivers every start record exactly once, the chain verifies, and the
 * sink's lag metric, which grew during the outage, returns to 0.
 */
const NODE_ID = 'e2e-pg-outage-node';
const CODE = 'OUTAGE-STORM';
const OUTAGE_MS = 60_000;

async function lagSeconds(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /^guestwifi_outbox_sink_lag_seconds (\S+)$/m.exec(text);
  if (!m) throw new Error('outbox_sink_lag_seconds missing from /metrics');
  return Number(m[1]);
}

const test = e2eTest(NODE_ID);

describe('Postgres outage during a sign-in storm', () => {
  let svc: ServiceProcess | undefined;

  test('no sign-in refused for 60 s without Postgres; afterwards every start record lands once, chain valid, lag back to 0', async ({ stack, redis, db, spawn }) => {
    svc = await spawn();
    const { base } = svc;
    const { tenant_id: tenantId, api_key: apiKey } = await stack.cli(['tenant', 'create', '--name', 'Outage Venue', '--json']);
    const api = async (path: string, body: unknown): Promise<any> => {
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
      expect(res.status, `POST ${path}`).toBe(201);
      return res.json();
    };
    const hotspot = await api('/v1/hotspots', { name: 'Lobby', timezone: 'UTC' });
    await api('/v1/vouchers', { code: CODE, max_uses: null });
    const outbox = keys.outbox(tenantId);
    const inSink = async (): Promise<number> => Number(((await redis.xpending(outbox, 'pg-sink')) as [number])[0]);

    // A steady storm (paced, so the backlog of 60 s stays a few tens of thousands of records).
    const storm = startStorm({ base: () => base, hotspotId: hotspot.id, code: CODE, concurrency: 50, macPrefix: 0x50, ratePerSec: 400 });
    await until(async () => (await db.query(
      "SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start'", [tenantId])).rows[0].n >= 200, { timeoutMs: 15_000, what: 'sign-ins reaching Postgres' });

    await stack.stopPostgres();
    const down = storm.attempts.length;
    const lags: number[] = [];
    const sampler = setInterval(() => void lagSeconds(base).then((l) => lags.push(l), () => lags.push(NaN)), 1_000);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    clearInterval(sampler);
    const up = storm.attempts.length;
    await stack.startPostgres();
    await new Promise((r) => setTimeout(r, 3_000));
    const attempts = await storm.stop();

    // Not one guest refused, before, during or after the outage.
    const refused = attempts.filter((a) => a.status !== 200 || a.body?.status !== 'authorized');
    expect(refused.slice(0, 5), `${refused.length} of ${attempts.length} sign-ins refused`).toEqual([]);
    expect(up - down, 'sign-ins during the outage').toBeGreaterThan((OUTAGE_MS / 1000) * 100);
    // The metric saw the backlog grow while Postgres was away.
    expect(Math.max(...lags.filter(Number.isFinite)), `lag samples ${lags.join(' ')}`).toBeGreaterThan(OUTAGE_MS / 1000 - 10);

    await until(async () =>
      (await lagSeconds(base)) === 0 && (await redis.xlen(outbox)) === 0 && (await inSink()) === 0, { timeoutMs: 30_000, what: 'lag back to 0 and outbox drained' });

    const authorized = attempts.map((a) => a.body.session_id as string);
    expect(new Set(authorized).size).toBe(authorized.length);
    const starts = await expectOneStartEach(db, tenantId, authorized);
    expect(starts.length).toBe(authorized.length);
    const sessions = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1 AND id = ANY($2)', [tenantId, authorized])).rows[0]!;
    expect(sessions.n).toBe(authorized.length);
    expect(Number(await redis.hget(keys.voucher(tenantId, CODE), 'uses'))).toBe(authorized.length);

    const verdict = await stack.cli(['audit', 'verify', '--tenant', tenantId, '--json']);
    expect(verdict).toEqual({ tenant_id: tenantId, records: authorized.length + 2, valid: true, first_break: null });
  }, 110_000);
});
