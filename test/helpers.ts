import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { inject } from 'vitest';
import { projectPath } from '../engine/index.js';
import { runService, type Service } from '../scripts/serve.js';

export const JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789';

/** The environment of a service under test: the throw-away servers, port 0. */
export function testEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    REDIS_URL: inject('redisUrl'),
    DATABASE_URL: inject('databaseUrl'),
    JWT_SECRET,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    RADIUS_HOST: '127.0.0.1',
    RADIUS_AUTH_PORT: '0',
    RADIUS_ACCT_PORT: '0',
    LOG_LEVEL: 'silent',
    // One engine process per NODE_ID: leases and outbox consumers are per process.
    NODE_ID: `test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    ...extra,
  };
}

export interface Running {
  service: Service;
  base: string;
  stop(): Promise<void>;
}

/** The service in this process, on a free port. */
export async function startService(extra: Record<string, string> = {}): Promise<Running> {
  const service = await runService(testEnv(extra));
  const base = `http://127.0.0.1:${service.http.ports.main}`;
  return { service, base, stop: () => service.stop() };
}

/** A fresh tenant with an API key, and a hotspot. */
export async function newTenant(service: Service, name = 'Test Venue', modules?: string[]): Promise<{ tenantId: string; apiKey: string; hotspotId: string }> {
  const tenant = await service.engine.tenants.create(`${name} ${Math.random().toString(36).slice(2, 8)}`, modules);
  const { apiKey } = await service.engine.tenants.createApiKey(tenant.id);
  const hs = await service.engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
  return { tenantId: tenant.id, apiKey, hotspotId: hs.id };
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** A JSON request. `auth` is an API key or a JWT, sent as X-API-Key or Bearer. */
export async function call(base: string, method: string, path: string, opts: { auth?: string; bearer?: string; body?: unknown; raw?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.auth) headers['x-api-key'] = opts.auth;
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  const res = await fetch(base + path, {
    method, headers,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body, headers: res.headers };
}

/** The service in a child process (node dist/scripts/serve.js); resolves once it listens. */
export async function spawnService(extra: Record<string, string> = {}): Promise<{ base: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [projectPath('dist', 'scripts', 'serve.js')], {
    env: { ...process.env, ...testEnv(extra) }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const ports = await new Promise<Record<string, number>>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        if (msg.ready) resolve(msg.ports);
      } catch { /* log line */ }
    });
  });
  return {
    base: `http://127.0.0.1:${ports.main}`,
    child,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/**
 * Polls until `check` returns true or the time runs out; `seen` describes
 * the state the failure message should show (what was there instead).
 */
export async function eventually(check: () => Promise<boolean>, ms = 10_000, seen?: () => unknown): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`condition not met in ${ms} ms${seen ? `; last seen: ${JSON.stringify(await seen())}` : ''}`);
}
