import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import { describe, expect, inject } from 'vitest';
import { projectPath, signOperatorToken } from '../../engine/index.js';
import { call, JWT_SECRET, newTenant, type Running, serviceTest } from '../support/fixture.js';

const run = promisify(execFile);
const SECRET = new TextEncoder().encode(JWT_SECRET);

/** The CLI against the test Redis and Postgres. */
async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), ...args], {
    env: { ...process.env, REDIS_URL: inject('redisUrl'), DATABASE_URL: inject('databaseUrl'), JWT_SECRET, LOG_LEVEL: 'silent' },
  });
  return stdout.trim();
}

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
const nowSec = (): number => Math.floor(Date.now() / 1000);

/** A JWT built by hand, for headers a library would refuse to sign. */
function handmade(header: Record<string, unknown>, payload: Record<string, unknown>, sign: 'none' | 'hs256'): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const sig = sign === 'none' ? '' : createHmac('sha256', JWT_SECRET).update(input).digest('base64url');
  return `${input}.${sig}`;
}

const test = serviceTest();

/**
 * Operator authentication: HS256 JWTs and API keys, in either header
 * (`Authorization: Bearer` or `X-API-Key`); every refusal is 401 {error: "unauthorized", message}.
 */
describe('authentication', () => {
  let svc: Running;
  test.beforeAll(({ svc: s_ }) => { svc = s_; });

  const expectUnauthorized = async (headers: { bearer?: string; auth?: string }, why: string): Promise<void> => {
    const r = await call(svc.base, 'GET', '/v1/vouchers', headers);
    expect(r.status, why).toBe(401);
    expect(r.body, why).toEqual({ error: 'unauthorized', message: expect.any(String) });
  };

  test('accepts a token from signOperatorToken, and one printed by the CLI', async ({ svc, tenant: t }) => {
    const token = await signOperatorToken(SECRET, t.tenantId, ['admin'], 3600);
    const r = await call(svc.base, 'GET', '/v1/vouchers', { bearer: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ data: [], total: 0 });

    const printed = await cli('token', '--tenant', t.tenantId);
    expect(printed).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const me = await call(svc.base, 'GET', '/api/v1/tenants/me', { bearer: printed });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(t.tenantId);
  });

  test('a token without the admin role reads but changes nothing (403); admin and API keys change', async ({ svc, tenant: t }) => {
    const viewer = await signOperatorToken(SECRET, t.tenantId, ['viewer'], 3600);
    const none = await signOperatorToken(SECRET, t.tenantId, [], 3600);
    const admin = await signOperatorToken(SECRET, t.tenantId, ['viewer', 'admin'], 3600);
    for (const token of [viewer, none]) {
      expect((await call(svc.base, 'GET', '/v1/vouchers', { bearer: token })).status).toBe(200);
      const r = await call(svc.base, 'POST', '/v1/vouchers', { bearer: token, body: { code: 'ROLE-1' } });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'forbidden', message: expect.stringMatching(/admin role/) });
      expect((await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { bearer: token, body: { name: 'X' } })).status).toBe(403);
    }
    expect((await call(svc.base, 'GET', '/v1/vouchers', { bearer: viewer })).body.total).toBe(0);
    const made = await call(svc.base, 'POST', '/v1/vouchers', { bearer: admin, body: { code: 'ROLE-1' } });
    expect(made.status).toBe(201);
    expect((await call(svc.base, 'DELETE', `/v1/vouchers/${made.body.id}`, { bearer: viewer })).status).toBe(403);
    expect((await call(svc.base, 'DELETE', `/v1/vouchers/${made.body.id}`, { auth: t.apiKey })).status).toBe(200);
  });

  test('refuses every bad JWT with 401 and a message', async ({ svc, tenant: t }) => {
    const claims = { tenant_id: t.tenantId, roles: ['admin'], sub: 'op' };
    const good = (): SignJWT => new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime(nowSec() + 600);

    // The control: the same claims, rightly signed, pass.
    expect((await call(svc.base, 'GET', '/v1/vouchers', { bearer: await good().sign(SECRET) })).status).toBe(200);

    await expectUnauthorized({ bearer: await good().sign(new TextEncoder().encode('another-secret-another-secret-0123456789')) }, 'wrong signature');
    const valid = await good().sign(SECRET);
    const [h, , s] = valid.split('.');
    await expectUnauthorized({ bearer: `${h}.${b64({ ...claims, tenant_id: 'tn_someoneelse', exp: nowSec() + 600 })}.${s}` }, 'tampered payload');
    await expectUnauthorized({ bearer: handmade({ alg: 'none', typ: 'JWT' }, { ...claims, exp: nowSec() + 600 }, 'none') }, 'alg none');
    await expectUnauthorized({ bearer: handmade({ alg: 'RS256', typ: 'JWT' }, { ...claims, exp: nowSec() + 600 }, 'hs256') }, 'RS256 header over an HMAC');
    await expectUnauthorized({
      bearer: await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).setIssuedAt().setExpirationTime(nowSec() + 600).sign(SECRET),
    }, 'HS512');
    await expectUnauthorized({
      bearer: await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(nowSec() - 3600).setExpirationTime(nowSec() - 31).sign(SECRET),
    }, 'expired 31 s ago, beyond the 30 s leeway');
    await expectUnauthorized({
      bearer: await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().sign(SECRET),
    }, 'no exp');
    await expectUnauthorized({
      bearer: await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(nowSec() + 86_400).setExpirationTime(nowSec() + 90_000).sign(SECRET),
    }, 'issued a day in the future');
    // Within the leeway, a clock a little ahead is fine.
    const ahead = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(nowSec() + 20).setExpirationTime(nowSec() + 600).sign(SECRET);
    expect((await call(svc.base, 'GET', '/v1/vouchers', { bearer: ahead })).status).toBe(200);
    await expectUnauthorized({
      bearer: await new SignJWT({ roles: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(nowSec() + 600).sign(SECRET),
    }, 'no tenant_id');
    await expectUnauthorized({
      bearer: await new SignJWT({ ...claims, tenant_id: '' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(nowSec() + 600).sign(SECRET),
    }, 'empty tenant_id');
    await expectUnauthorized({
      bearer: await new SignJWT({ ...claims, tenant_id: 'tn_nosuchtenant00000' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(nowSec() + 600).sign(SECRET),
    }, 'unknown tenant');
    await expectUnauthorized({ bearer: 'not.a.jwt' }, 'garbage');
    await expectUnauthorized({}, 'no credentials');
    const basic = await fetch(`${svc.base}/v1/vouchers`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basic.status).toBe(401);
    expect(await basic.json()).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  test('allows 30 s of clock skew on exp, and no more', async ({ svc, tenant: t }) => {
    const expiredAgo = async (sec: number): Promise<number> => {
      const token = await new SignJWT({ tenant_id: t.tenantId }).setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt(nowSec() - 3600).setExpirationTime(nowSec() - sec).sign(SECRET);
      return (await call(svc.base, 'GET', '/v1/vouchers', { bearer: token })).status;
    };
    expect(await expiredAgo(10)).toBe(200);
    expect(await expiredAgo(45)).toBe(401);
  });

  test('accepts an API key as X-API-Key and as Bearer; a garbled key is refused', async ({ svc, tenant: t }) => {
    expect((await call(svc.base, 'GET', '/v1/vouchers', { auth: t.apiKey })).status).toBe(200);
    expect((await call(svc.base, 'GET', '/v1/vouchers', { bearer: t.apiKey })).status).toBe(200);
    const garbled = t.apiKey.slice(0, -2) + (t.apiKey.endsWith('AA') ? 'BB' : 'AA');
    await expectUnauthorized({ auth: garbled }, 'garbled key in X-API-Key');
    await expectUnauthorized({ bearer: garbled }, 'garbled key as Bearer');
  });

  test('refuses a key revoked through the CLI on the very next request; the tenant\'s other keys go on', async ({ svc, tenant: t }) => {
    const { apiKey } = await svc.service.engine.tenants.createApiKey(t.tenantId, 'pos');
    expect((await call(svc.base, 'GET', '/v1/vouchers', { auth: apiKey })).status).toBe(200);

    const out = await cli('apikey', 'revoke', '--tenant', t.tenantId, '--key', apiKey);
    expect(out).toBe(`revoked ${apiKey.split('_').slice(0, 2).join('_')}`);
    await expectUnauthorized({ auth: apiKey }, 'revoked key, X-API-Key');
    await expectUnauthorized({ bearer: apiKey }, 'revoked key, Bearer');
    expect((await call(svc.base, 'GET', '/v1/vouchers', { auth: t.apiKey })).status).toBe(200);
  });

  test('`tenant create --json` prints {tenant_id, api_key}, and the key works', async ({ svc }) => {
    const name = `CLI Venue ${Date.now()}`;
    const printed = JSON.parse(await cli('tenant', 'create', '--name', name, '--json'));
    expect(printed).toEqual({ tenant_id: expect.stringMatching(/^tn_/), api_key: expect.stringMatching(/^gwk_[0-9a-f]{8}_[\w-]{43}$/) });
    const me = await call(svc.base, 'GET', '/api/v1/tenants/me', { auth: printed.api_key });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ id: printed.tenant_id, name, modules: ['vouchers', 'sessions', 'reports', 'compliance', 'webhooks'] });
    const created = await call(svc.base, 'POST', '/v1/vouchers', { auth: printed.api_key, body: { code: 'CLIKEY' } });
    expect(created.status).toBe(201);
  });

  test('answers 403 module_not_licensed when the tenant lacks the vouchers module', async ({ svc }) => {
    const t = await newTenant(svc.service, 'No Vouchers', ['sessions', 'reports']);
    for (const [method, path, body] of [
      ['GET', '/v1/vouchers', undefined], ['POST', '/v1/vouchers', { code: 'NOPE123' }],
      ['POST', '/api/v1/vouchers', { count: 1 }], ['DELETE', '/v1/vouchers/vch_x', undefined],
    ] as const) {
      const r = await call(svc.base, method, path, { auth: t.apiKey, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual({ error: 'module_not_licensed', message: expect.stringContaining('vouchers') });
    }
    // Routes of no module stay open to it, and the credential is checked before the licence.
    expect((await call(svc.base, 'GET', '/v1/hotspots', { auth: t.apiKey })).status).toBe(200);
    expect((await call(svc.base, 'GET', '/v1/vouchers')).status).toBe(401);
    const { rows } = await svc.service.engine.pool.query('SELECT count(*)::int AS n FROM vouchers WHERE tenant_id = $1', [t.tenantId]);
    expect(rows[0].n).toBe(0);
  });

  test('refuses to start with a JWT_SECRET shorter than 32 bytes, naming it', async () => {
    const err = await run(process.execPath, [projectPath('dist', 'scripts', 'serve.js')], {
      env: {
        ...process.env, REDIS_URL: inject('redisUrl'), DATABASE_URL: inject('databaseUrl'),
        JWT_SECRET: 'x'.repeat(31), HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', LOG_LEVEL: 'silent',
      },
      timeout: 20_000,
    }).then(() => null, (e: { code?: number; stderr?: string }) => e);
    expect(err).not.toBeNull();
    expect(err!.code).not.toBe(0);
    expect(typeof err!.code).toBe('number');
    expect(err!.stderr).toContain('JWT_SECRET');
  });
});
