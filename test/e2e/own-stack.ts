import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectPath } from '../../engine/index.js';
import { Redis } from 'ioredis';
import pg from 'pg';
import { test as base, expect } from 'vitest';
import { startLocalServices, type LocalServices } from '../../scripts/local-services.js';
import { mac as macOf } from '../support/macs.js';
import { spawnService, type ServiceProcess } from '../support/service.js';

export { keys } from '../../engine/redis/keys.js';
export { until } from '../support/poll.js';
export type { ServiceProcess } from '../support/service.js';

/**
 * Fault-injection tests need servers they may stop and a service they may
 * kill, so each file gets its own throw-away Redis and PostgreSQL (never the
 * shared ones of test/global-setup.ts, which other files use in parallel) and
 * runs the production entry point, `node dist/scripts/serve.js`, as a child.
 * The files run from `dist/`: `npm test` builds first; alone, run `npm run -s build` before.
 *
 * `const test = e2eTest(nodeId)` gives tests, one set per file:
 *   stack  the file's own servers (OwnStack below), removed after the file
 *   redis  ioredis on them, waiting out a stopped server instead of failing
 *   db     a pg.Pool of two on them, new connections after an outage
 *   spawn  starts the service (`spawnService(stack.env)`); every one started is stopped after the file
 */

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

export interface OwnStack {
  dir: string;
  local: LocalServices;
  /** The service's environment (REDIS_URL, DATABASE_URL, JWT_SECRET, ...), also used for the CLI. */
  env: NodeJS.ProcessEnv;
  /** `pg_ctl stop -m fast` on this stack's PostgreSQL (asynchronous: a storm in this process goes on meanwhile). */
  stopPostgres(): Promise<void>;
  /** Starts it again on the same port, with the options scripts/local-services.ts uses. */
  startPostgres(): Promise<void>;
  /** Runs `node dist/scripts/cli.js ...args` with the stack's environment; parses stdout as JSON. */
  cli(args: string[]): Promise<any>;
  /** Stops the servers and removes the folder. */
  destroy(): Promise<void>;
}

/** Throw-away Redis + PostgreSQL 15 in a fresh temporary folder, and an environment for the service. */
export async function ownStack(nodeId: string, postgresConf?: string): Promise<OwnStack> {
  if (!existsSync(projectPath('dist', 'scripts', 'serve.js'))) throw new Error('dist/ is missing: run `npx tsc -p .` first');
  const dir = mkdtempSync(join(tmpdir(), 'gw-e2e-'));
  let local: LocalServices;
  try {
    local = await startLocalServices({ dir, ephemeral: true, postgresConf });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: process.env.HOME,
    REDIS_URL: local.redisUrl, DATABASE_URL: local.databaseUrl, JWT_SECRET: randomBytes(48).toString('base64url'),
    HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', LOG_LEVEL: 'warn', NODE_ID: nodeId, RADIUS_ENABLED: 'false',
  };
  const pgDir = join(dir, 'postgres');
  const pgCtl = (args: string[]): Promise<void> => asPostgres('pg_ctl', args);
  return {
    dir, local, env,
    stopPostgres: () => pgCtl(['-D', pgDir, '-m', 'fast', '-w', 'stop']),
    startPostgres: () => pgCtl(['-D', pgDir, '-l', join(pgDir, 'server.log'), '-o', `-p ${local.pgPort}`, '-w', '-t', '60', 'start']),
    cli: async (args) => {
      const { stdout } = await run(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), ...args], { env, timeout: 30_000 });
      return JSON.parse(stdout);
    },
    destroy: async () => {
      await local.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgBin(name: string): string {
  for (const v of ['15', '16', '17']) {
    const p = `/usr/lib/postgresql/${v}/bin/${name}`;
    if (existsSync(p)) return p;
  }
  return name;
}

/** A PostgreSQL program (pg_ctl, pg_basebackup...) as the postgres user: they refuse root. */
export async function asPostgres(name: string, args: string[]): Promise<void> {
  const [cmd, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', pgBin(name), ...args]] : [pgBin(name), args];
  await run(cmd, argv, { timeout: 120_000 });
}

/** One portal verify of the storm: what the guest's device saw. */
export interface Attempt {
  mac: string;
  /** HTTP status, or 0 when the request failed below HTTP (connection refused or reset, time-out). */
  status: number;
  body: any;
  /** ms since the storm began, when the answer (or failure) came. */
  at: number;
}

export interface Storm {
  attempts: Attempt[];
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<Attempt[]>;
}

/**
 * Portal sign-ins from `concurrency` parallel clients, each request with a MAC
 * of its own (`02:<prefix>:<n>`), so every 200 is a new session. `base()`
 * names the service to call, or null while there is none (the clients wait).
 * `ratePerSec` caps the total rate (0: as fast as answers come).
 */
export function startStorm(opts: {
  base: () => string | null; hotspotId: string; code: string; concurrency: number; macPrefix: number; ratePerSec?: number;
}): Storm {
  const attempts: Attempt[] = [];
  const t0 = Date.now();
  const gap = opts.ratePerSec ? 1000 / opts.ratePerSec : 0;
  let n = 0;
  let running = true;
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const client = async (): Promise<void> => {
    while (running) {
      const base = opts.base();
      if (!base) { await sleep(10); continue; }
      const i = n++;
      // Paced on one shared schedule: request i leaves no earlier than t0 + i * gap.
      if (gap) {
        const wait = t0 + i * gap - Date.now();
        if (wait > 0) await sleep(wait);
      }
      const mac = macOf(i, opts.macPrefix);
      try {
        const res = await fetch(`${base}/api/v1/hotspot-portal/voucher/verify?hotspot_id=${opts.hotspotId}`, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code: opts.code, mac, ip: '10.9.0.1' }), signal: AbortSignal.timeout(5_000),
        });
        const text = await res.text();
        let body: unknown = text;
        try { body = JSON.parse(text); } catch { /* not JSON */ }
        attempts.push({ mac, status: res.status, body, at: Date.now() - t0 });
      } catch (err) {
        attempts.push({ mac, status: 0, body: String((err as Error).cause ?? (err as Error).message), at: Date.now() - t0 });
        await sleep(5);
      }
    }
  };
  const clients = Array.from({ length: opts.concurrency }, client);
  return {
    attempts,
    stop: async () => {
      running = false;
      await Promise.all(clients);
      return attempts;
    },
  };
}

/**
 * Invariant 2 in Postgres: no session has two session_start records and
 * every authorized one has exactly one. Returns the start records per session.
 */
export async function expectOneStartEach(db: pg.Pool, tenantId: string, authorized: string[]): Promise<{ session_id: string; n: number }[]> {
  const starts = (await db.query<{ session_id: string; n: number }>(
    `SELECT session_id, count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start' GROUP BY session_id`,
    [tenantId])).rows;
  const startCount = new Map(starts.map((r) => [r.session_id, r.n]));
  expect(starts.filter((r) => r.n !== 1)).toEqual([]);
  expect(authorized.filter((sid) => startCount.get(sid) !== 1)).toEqual([]);
  return starts;
}

/** The e2e fixture: see the top of this file. */
export function e2eTest(nodeId: string, postgresConf?: string) {
  return base
    .extend('stack', { scope: 'file' }, async ({}, { onCleanup }) => {
      const stack = await ownStack(nodeId, postgresConf);
      onCleanup(() => stack.destroy());
      return stack;
    })
    .extend('redis', { scope: 'file' }, async ({ stack }, { onCleanup }) => {
      const redis = new Redis(stack.local.redisUrl, { maxRetriesPerRequest: null });
      redis.on('error', () => undefined); // refused while the server is down; the commands wait
      onCleanup(() => { redis.disconnect(); });
      return redis;
    })
    .extend('db', { scope: 'file' }, async ({ stack }, { onCleanup }) => {
      const db = new pg.Pool({ connectionString: stack.local.databaseUrl, max: 2 });
      db.on('error', () => undefined); // its connections die with an outage; new ones are made afterwards
      onCleanup(() => db.end().catch(() => undefined));
      return db;
    })
    .extend('spawn', { scope: 'file' }, async ({ stack }, { onCleanup }) => {
      const started: ServiceProcess[] = [];
      onCleanup(async () => { await Promise.all(started.map((s) => s.stop())); });
      return async (): Promise<ServiceProcess> => {
        const svc = await spawnService(stack.env);
        started.push(svc);
        return svc;
      };
    });
}
