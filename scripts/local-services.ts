import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { projectPath } from '../engine/index.js';

/**
 * Local Redis and PostgreSQL 15 servers on loopback, for `npm start` (data
 * under .data/, kept between runs) and for the tests (throw-away instances in
 * a temporary folder on free ports).
 *
 * Redis runs with AOF, `appendfsync everysec`: a Redis crash loses at most
 * about one second of writes, a crash of our service loses nothing.
 * PostgreSQL's initdb/pg_ctl refuse to run as root, so as root they run as
 * the `postgres` system user on a data folder it owns.
 */
export interface LocalServices {
  redisUrl: string;
  databaseUrl: string;
  redisPort: number;
  pgPort: number;
  stop(): Promise<void>;
}

export interface LocalOptions {
  dir: string;
  redisPort?: number;
  pgPort?: number;
  /** Throw-away: faster, non-durable Postgres settings (fsync off). */
  ephemeral?: boolean;
  /** More postgresql.conf lines for a new cluster (e.g. WAL archiving for the restore drill). */
  postgresConf?: string;
  database?: string;
  log?: (line: string) => void;
}

const isRoot = process.getuid?.() === 0;

/**
 * A port free on 127.0.0.1 now, for a server another process binds next (it
 * cannot be handed our bound socket). Picked below the kernel's ephemeral
 * range (net.ipv4.ip_local_port_range), never from it: a port the kernel hands
 * out for a bind to 0 and takes back is one it hands to the next outgoing
 * connection on the machine just as readily, and the server that binds it a
 * moment later fails with EADDRINUSE (a fresh CI run's cluster node did).
 * Below the range only an explicit bind takes a port. Each process walks
 * the ports from a random start, so it never hands out one port twice, and
 * two processes (the test workers) meet only where their walks cross; each
 * port is probed before it is returned.
 */
export function freePort(): Promise<number> {
  return freeBelowEphemeral((port) => probe((done) => {
    const s = createServer();
    s.once('error', () => done(false));
    s.listen(port, '127.0.0.1', () => s.close(() => done(true)));
  }));
}

/** The same for UDP (a free TCP port says nothing of the same UDP port). */
export function freeUdpPort(): Promise<number> {
  return freeBelowEphemeral((port) => probe((done) => {
    const s = createSocket('udp4');
    s.once('error', () => { s.close(); done(false); });
    s.bind(port, '127.0.0.1', () => s.close(() => done(true)));
  }));
}

const probe = (run: (done: (free: boolean) => void) => void): Promise<boolean> => new Promise((resolve) => run(resolve));

/** Ports tried at most before giving up: with a few thousand to pick from, a run of taken ones means something is wrong. */
const PORT_TRIES = 64;

/** This process's walk: the offset of the port it hands out next, from a random start (freeBelowEphemeral). */
let walk = -1;

async function freeBelowEphemeral(isFree: (port: number) => Promise<boolean>): Promise<number> {
  const top = ephemeralLow() - 1;
  const bottom = Math.max(1024, top - 12_000);
  const span = top - bottom + 1;
  if (span < 1000) throw new Error(`freePort: the ephemeral port range starts at ${top + 1}, leaving too few ports below it`);
  if (walk < 0) walk = Math.floor(Math.random() * span);
  for (let i = 0; i < PORT_TRIES; i++) {
    const port = bottom + (walk++ % span);
    if (await isFree(port)) return port;
  }
  throw new Error(`freePort: ${PORT_TRIES} ports between ${bottom} and ${top} were all taken`);
}

/** The first port of the kernel's ephemeral range (Linux's default 32768 where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32768;
  } catch {
    return 32768;
  }
}

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Installs redis-server from Debian's packages when missing and we are root; otherwise says what to install. */
export function ensureRedisInstalled(log: (l: string) => void): void {
  if (has('redis-server')) return;
  if (!isRoot || !has('apt-get')) {
    throw new Error('redis-server is not installed. Install it (Debian/Ubuntu: sudo apt-get install redis-server) or set REDIS_URL.');
  }
  log('redis-server missing: installing it from Debian packages (apt-get)...');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function pgBin(name: string): string {
  if (has(name)) return name;
  for (const v of ['15', '16', '17']) {
    const p = `/usr/lib/postgresql/${v}/bin/${name}`;
    if (existsSync(p)) return p;
  }
  throw new Error(`${name} (PostgreSQL 15) not found. Install postgresql-15 or set DATABASE_URL.`);
}

/** Runs a PostgreSQL program, as the postgres user when we are root. */
function pgRun(name: string, args: string[]): string {
  const bin = pgBin(name);
  const [cmd, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function ownByPostgres(path: string): void {
  if (!isRoot) return;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(path, uid, gid);
}

export async function waitFor(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up within ${ms} ms`);
}

async function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    import('node:net').then(({ connect }) => {
      const s = connect(port, '127.0.0.1');
      s.setTimeout(500);
      s.once('connect', () => s.write('PING\r\n'));
      s.once('data', (d) => { s.destroy(); resolve(d.toString().startsWith('+PONG')); });
      s.once('error', () => resolve(false));
      s.once('timeout', () => { s.destroy(); resolve(false); });
    });
  });
}

/** Starts (or reuses, when already running from the same folder) Redis and PostgreSQL. */
export async function startLocalServices(opts: LocalOptions): Promise<LocalServices> {
  const log = opts.log ?? (() => undefined);
  const database = opts.database ?? 'guestwifi';
  mkdirSync(opts.dir, { recursive: true });
  const redisPort = opts.redisPort ?? (await freePort());
  const pgPort = opts.pgPort ?? (await freePort());

  // Redis
  ensureRedisInstalled(log);
  const redisDir = join(opts.dir, 'redis');
  mkdirSync(redisDir, { recursive: true });
  if (!(await redisAnswers(redisPort))) {
    const args = [
      '--port', String(redisPort), '--bind', '127.0.0.1', '--dir', redisDir,
      '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '',
      // Test files that need a Redis of their own each take a database number: 16 is not enough.
      '--databases', '32',
      '--daemonize', 'yes', '--pidfile', join(redisDir, 'redis.pid'), '--logfile', join(redisDir, 'redis.log'),
    ];
    const r = spawnSync('redis-server', args, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`redis-server failed to start (see ${join(redisDir, 'redis.log')})`);
    await waitFor(() => redisAnswers(redisPort), `redis-server on 127.0.0.1:${redisPort}`);
    log(`redis-server started on 127.0.0.1:${redisPort} (AOF everysec, data in ${redisDir})`);
  }

  // PostgreSQL
  const pgDir = join(opts.dir, 'postgres');
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    mkdirSync(pgDir, { recursive: true, mode: 0o700 });
    ownByPostgres(opts.dir);
    ownByPostgres(pgDir);
    pgRun('initdb', ['-D', pgDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C']);
    const extra = opts.ephemeral ? '\nfsync = off\nfull_page_writes = off\nsynchronous_commit = off\n' : '';
    writeFileSync(join(pgDir, 'postgresql.auto.conf'),
      `listen_addresses = '127.0.0.1'\nunix_socket_directories = '${pgDir}'\nmax_connections = 200\n${extra}${opts.postgresConf ?? ''}`);
    ownByPostgres(join(pgDir, 'postgresql.auto.conf'));
  }
  const status = spawnSync(isRoot ? 'runuser' : pgBin('pg_ctl'), isRoot ? ['-u', 'postgres', '--', pgBin('pg_ctl'), 'status', '-D', pgDir] : ['status', '-D', pgDir]);
  const running = status.status === 0;
  let runningPort = pgPort;
  if (running) {
    const pidFile = readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
    runningPort = Number(pidFile[3]);
  } else {
    pgRun('pg_ctl', ['-D', pgDir, '-l', join(pgDir, 'server.log'), '-o', `-p ${pgPort}`, '-w', '-t', '60', 'start']);
    log(`postgres started on 127.0.0.1:${pgPort} (data in ${pgDir})`);
  }
  const adminUrl = `postgres://postgres@127.0.0.1:${runningPort}/postgres`;
  await waitFor(async () => {
    const c = new pg.Client(adminUrl);
    try { await c.connect(); await c.end(); return true; } catch { await c.end().catch(() => undefined); return false; }
  }, `postgres on 127.0.0.1:${runningPort}`);
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();

  return {
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    databaseUrl: `postgres://postgres@127.0.0.1:${runningPort}/${database}`,
    redisPort,
    pgPort: runningPort,
    stop: async () => {
      spawnSync('redis-cli', ['-p', String(redisPort), 'shutdown', 'nosave'], { stdio: 'ignore' });
      try { pgRun('pg_ctl', ['-D', pgDir, '-m', 'immediate', '-w', 'stop']); } catch { /* already stopped */ }
    },
  };
}


/**
 * The environment with working local defaults: REDIS_URL and DATABASE_URL
 * pointing at servers under .data/ (LOCAL_DATA_DIR; started when not running, on
 * LOCAL_REDIS_PORT / LOCAL_PG_PORT, default 16379 / 15432), and a JWT_SECRET
 * generated once into .data/jwt-secret, and a SECRETS_KEY (32 random bytes, base64) into
 * .data/secrets-key, so inline tenant secrets work out of the box. Values already set are kept.
 */
export async function withLocalDefaults(base: NodeJS.ProcessEnv, say: (l: string) => void): Promise<{ env: NodeJS.ProcessEnv; dataDir: string }> {
  const dataDir = base.LOCAL_DATA_DIR || projectPath('.data');
  mkdirSync(dataDir, { recursive: true });
  const env = { ...base };
  if (!env.REDIS_URL || !env.DATABASE_URL) {
    const local = await startLocalServices({
      dir: dataDir, log: say,
      redisPort: Number(env.LOCAL_REDIS_PORT || 16379), pgPort: Number(env.LOCAL_PG_PORT || 15432),
    });
    env.REDIS_URL ||= local.redisUrl;
    env.DATABASE_URL ||= local.databaseUrl;
  }
  if (!env.JWT_SECRET) {
    const file = join(dataDir, 'jwt-secret');
    if (!existsSync(file)) {
      writeFileSync(file, randomBytes(48).toString('base64url'), { mode: 0o600 });
      say(`JWT_SECRET not set: generated one into ${file}`);
    }
    env.JWT_SECRET = readFileSync(file, 'utf8').trim();
  }
  if (!env.SECRETS_KEY) {
    const file = join(dataDir, 'secrets-key');
    if (!existsSync(file)) {
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
      say(`SECRETS_KEY not set: generated one into ${file}`);
    }
    env.SECRETS_KEY = readFileSync(file, 'utf8').trim();
  }
  return { env, dataDir };
}
