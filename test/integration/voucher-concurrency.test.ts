import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { call, keys, type ServiceProcess, serviceTest, spawnService, testEnv, until } from '../support/fixture.js';

const run = promisify(execFile);

const test = serviceTest();

/**
 * Invariant 1: a voucher is never used more than max_uses times, whatever the
 * concurrency. Two engine processes share Redis and Postgres; two client
 * processes send 500 verifies each, all at once, with distinct MACs.
 */
describe('voucher use under concurrency across processes', () => {
  let engines: ServiceProcess[] = [];

  beforeAll(async () => {
    engines = await Promise.all([spawnService({ ...process.env, ...testEnv() }), spawnService({ ...process.env, ...testEnv() })]);
  });
  afterAll(async () => {
    await Promise.all(engines.map((e) => e.stop()));
  });

  test('1,000 concurrent verifies on max_uses 5: exactly 5 authorized, 995 exhausted; Redis and Postgres both count 5', async ({ svc: admin, redis, db, tenant: t }) => {
    const created = await call(admin.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'STORM-5', max_uses: 5 } });
    expect(created.status).toBe(201);

    const storm = (base: string, prefix: string) =>
      run(process.execPath, [projectPath('test', 'fixtures', 'verify-storm.mjs'), base, t.hotspotId, 'STORM-5', '500', prefix], { maxBuffer: 16 << 20 })
        .then(({ stdout }) => JSON.parse(stdout) as { status: number; body: any }[]);
    const answers = (await Promise.all([storm(engines[0]!.base, 'A1'), storm(engines[1]!.base, 'B2')])).flat();

    expect(answers).toHaveLength(1000);
    const authorized = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(authorized).toHaveLength(5);
    for (const a of authorized) expect(a.body.status).toBe('authorized');
    expect(new Set(authorized.map((a) => a.body.session_id)).size).toBe(5);
    expect(refused).toHaveLength(995);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ error: 'voucher_exhausted', max_uses: 5, current_uses: 5 });
    }

    expect(await redis.hget(keys.voucher(t.tenantId, 'STORM-5'), 'uses')).toBe('5');

    await until(async () => {
      const { rows } = await db.query('SELECT current_uses FROM vouchers WHERE id = $1', [created.body.id]);
      return rows[0].current_uses === 5;
    });
    const uses = await db.query('SELECT count(*)::int AS n, count(DISTINCT mac)::int AS macs FROM voucher_uses WHERE voucher_id = $1', [created.body.id]);
    expect(uses.rows[0]).toEqual({ n: 5, macs: 5 });
  });
});
