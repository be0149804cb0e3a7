import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { inject } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { runService, type Service } from '../../scripts/serve.js';
import { SERVICE_NODE_OPTIONS } from '../../scripts/node-options.js';

/**
 * Launching the service under test. In this process (`startService`), for
 * tests that reach into the engine; or as the production entry point in a
 * child process (`spawnService`), for tests that kill it or run several.
 * Both take their environment from `testEnv` unless given one of their own.
 */

export const JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789';

/** The environment of a service under test: the throw-away servers of test/global-setup.ts, port 0. */
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
    // The fake carriers and SMTP listeners are on loopback; tests of the refusal set it to false.
    ALLOW_PRIVATE_TARGETS: 'true',
    // Every process holds the PMS links of every hotel it finds in Postgres: only the room sign-in tests' own
    // services do here, so one test file's hotel is never linked from another file's process (with other timers).
    PMS_HOLD_LINKS: 'false',
    // Every process sends every tenant's scheduled report mail through its own SMTP_URL (unset in most files): only the
    // schedule tests' own services run the scheduler, so no other file's process takes up (and fails) their runs.
    REPORT_SCHEDULER: 'false',
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

export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  /** Its bound RADIUS ports (0 when RADIUS is off), from the ready line. */
  radius: { auth: number; acct: number };
  /** SIGKILL: no shutdown code runs, as when the machine loses power under the process. */
  kill9(): Promise<void>;
  /** SIGTERM and wait (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/**
 * `node dist/scripts/serve.js` in a child process with `env` (the whole
 * environment: pass `{ ...process.env, ...testEnv() }` for the shared
 * servers); resolves on its `{"ready":true,...}` line. `at.entry` runs an
 * installed copy instead (another folder's dist/scripts/serve.js). Runs from dist/:
 * `npm test` builds first; alone, run `npm run -s build` before.
 */
export async function spawnService(env: NodeJS.ProcessEnv, at: { entry?: string; cwd?: string } = {}): Promise<ServiceProcess> {
  const entry = at.entry ?? projectPath('dist', 'scripts', 'serve.js');
  const child = spawn(process.execPath, [...SERVICE_NODE_OPTIONS, entry], { env, cwd: at.cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  let radius = { auth: 0, acct: 0 };
  const ports = await new Promise<Record<string, number>>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('service not ready within 30 s')); }, 30_000);
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`service exited with ${code ?? signal} before it was ready`)); });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        if (msg.ready) { clearTimeout(timer); radius = { auth: msg.radius?.auth ?? 0, acct: msg.radius?.acct ?? 0 }; resolve(msg.ports); }
      } catch { /* not JSON */ }
    });
  });
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    base: `http://127.0.0.1:${ports.main}`,
    radius,
    kill9: async () => { if (!gone()) { child.kill('SIGKILL'); await exited; } },
    stop: async () => {
      if (gone()) return;
      const hard = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(hard);
    },
  };
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** A JSON request. `auth` is an API key (X-API-Key), `bearer` a JWT; `raw` a body sent as is. */
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
