import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect } from 'vitest';
import { mac } from '../support/macs.js';
import { asPostgres, e2eTest, expectOneStartEach, keys, startStorm, until, type ServiceProcess } from './own-stack.js';

/**
 * The restore drill of docs/backup.md, for real: a base backup of PostgreSQL
 * plus its archived WAL, and a Redis RDB snapshot, both taken while guests
 * sign in; more guests sign in after the backup; then both servers lose
 * everything and are restored from the backup (Postgres replayed to the
 * last archived WAL, Redis only to its older snapshot). The service started
 * on the restored pair must keep every session record exactly once in a
 * chain that verifies, and no voucher's uses may go back to the snapshot's
 * count: a voucher used 7 times of 10 (3 before the snapshot) gives exactly
 * 3 more uses after the restore, not 7.
 */
const NODE_ID = 'e2e-restore-drill';
const isRoot = process.getuid?.() === 0;
const run = promisify(execFile);

// The WAL archive lives outside the stack's folder (the drill wipes that one); created before the cluster starts.
const archive = mkdtempSync(join(tmpdir(), 'gw-wal-archive-'));
const backup = mkdtempSync(join(tmpdir(), 'gw-backup-'));
const postgresUid = isRoot ? Number((await run('id', ['-u', 'postgres'])).stdout.trim()) : -1;
const postgresGid = isRoot ? Number((await run('id', ['-g', 'postgres'])).stdout.trim()) : -1;
const ownByPostgres = (path: string): void => { if (isRoot) chownSync(path, postgresUid, postgresGid); };
ownByPostgres(archive);
ownByPostgres(backup);
afterAll(() => {
  rmSync(archive, { recursive: true, force: true });
  rmSync(backup, { recursive: true, force: true });
});

const test = e2eTest(NODE_ID, [
  // The stack is ephemeral (fsync off) for speed; the backup needs full page images and archived WAL.
  'full_page_writes = on', 'wal_level = replica', 'archive_mode = on',
  `archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'`, '',
].join('\n'));

async function redisCli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...args], { timeout: 30_000 })).stdout.trim();
}
function emptyFolder(dir: string): void {
  for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
}

describe('backup under load, wipe, restore (docs/backup.md)', () => {
  let svc: ServiceProcess | undefined;

  test('the chain verifies, every session record is there once, and no voucher use goes back', async ({ stack, redis, db, spawn }) => {
    svc = await spawn();
    const { tenant_id: tenantId, api_key: apiKey } = await stack.cli(['tenant', 'create', '--name', 'Drill Venue', '--json']);
    const api = async (path: string, body: unknown): Promise<any> => {
      const res = await fetch(svc!.base + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
      expect(res.status, `POST ${path}`).toBe(201);
      return res.json();
    };
    const hotspot = await api('/v1/hotspots', { name: 'Hall', timezone: 'UTC' });
    await api('/v1/vouchers', { code: 'DRILL-LOAD', max_uses: null });
    await api('/v1/vouchers', { code: 'DRILL-TEN', max_uses: 10 });
    let tenMacs = 0;
    const useTen = async (): Promise<number> => {
      const res = await fetch(`${svc!.base}/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hotspot.id}`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 'DRILL-TEN', mac: mac(++tenMacs, 0x7e), ip: '10.9.0.2' }),
      });
      await res.arrayBuffer();
      return res.status;
    };
    const outbox = keys.outbox(tenantId);
    const drained = async (): Promise<boolean> =>
      (await redis.xlen(outbox)) === 0 && Number(((await redis.xpending(outbox, 'pg-sink')) as [number])[0]) === 0;

    // Guests arrive; the limited voucher is used 3 times before the backup.
    const storm = startStorm({ base: () => svc!.base, hotspotId: hotspot.id, code: 'DRILL-LOAD', concurrency: 20, macPrefix: 0x7d });
    const ok = (): number => storm.attempts.filter((a) => a.status === 200).length;
    await until(() => ok() >= 150, { timeoutMs: 30_000, what: 'sign-ins before the backup' });
    for (let i = 0; i < 3; i++) expect(await useTen()).toBe(200);

    // The backup, under load: Redis's snapshot first, then Postgres's base backup (WAL comes from the archive).
    const redisDir = join(stack.dir, 'redis');
    const pgDir = join(stack.dir, 'postgres');
    const saved = await redisCli(stack.local.redisPort, 'LASTSAVE');
    await redisCli(stack.local.redisPort, 'BGSAVE');
    await until(async () => (await redisCli(stack.local.redisPort, 'LASTSAVE')) !== saved, { timeoutMs: 30_000, what: 'BGSAVE done' });
    copyFileSync(join(redisDir, 'dump.rdb'), join(backup, 'dump.rdb'));
    const atSnapshot = ok();
    await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(stack.local.pgPort), '-U', 'postgres',
      '-D', join(backup, 'base'), '-X', 'none', '-c', 'fast']);

    // More guests after the backup; the limited voucher reaches 7 uses.
    await until(() => ok() >= atSnapshot + 150, { timeoutMs: 30_000, what: 'sign-ins after the backup' });
    for (let i = 0; i < 4; i++) expect(await useTen()).toBe(200);
    const attempts = await storm.stop();
    expect(attempts.filter((a) => a.status !== 200)).toEqual([]);
    const authorized = attempts.map((a) => a.body.session_id as string);
    await until(drained, { timeoutMs: 30_000, what: 'outbox drained into Postgres' });
    const before = (await db.query<{ code: string; current_uses: number }>(
      'SELECT code, current_uses FROM vouchers WHERE tenant_id = $1 ORDER BY code', [tenantId])).rows;
    expect(before).toEqual([{ code: 'DRILL-LOAD', current_uses: authorized.length }, { code: 'DRILL-TEN', current_uses: 7 }]);
    // Close the WAL segment holding the last commit and wait for the archiver to have it.
    const last = (await db.query<{ f: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS f')).rows[0]!.f;
    await until(async () => ((await db.query<{ w: string | null }>('SELECT last_archived_wal AS w FROM pg_stat_archiver')).rows[0]!.w ?? '') >= last,
      { timeoutMs: 30_000, what: `WAL ${last} archived` });

    // Disaster: the service stops and both servers lose their data.
    await svc.stop();
    await redisCli(stack.local.redisPort, 'SHUTDOWN', 'NOSAVE').catch(() => undefined);
    await asPostgres('pg_ctl', ['-D', pgDir, '-m', 'immediate', '-w', 'stop']);
    emptyFolder(redisDir);
    emptyFolder(pgDir);

    // Restore PostgreSQL: the base backup, then every archived WAL segment replayed; it promotes at the end.
    cpSync(join(backup, 'base'), pgDir, { recursive: true });
    // This cluster keeps its Unix socket in the data folder, so the backup copied the old server's socket lock
    // (`.s.PGSQL.<port>.lock`, naming its process id); on a busy machine that id may be alive again, and the
    // restored server would refuse to start. A server's lock files are never restored.
    for (const f of readdirSync(pgDir)) if (f.startsWith('.s.PGSQL.')) rmSync(join(pgDir, f));
    appendFileSync(join(pgDir, 'postgresql.auto.conf'), `restore_command = 'cp ${archive}/%f %p'\n`);
    writeFileSync(join(pgDir, 'recovery.signal'), '');
    if (isRoot) await run('chown', ['-R', 'postgres:postgres', pgDir]);
    await stack.startPostgres().catch((err: Error) => {
      throw new Error(`${err.message}\nserver.log: ${readFileSync(join(pgDir, 'server.log'), 'utf8').slice(-3000)}`);
    });
    await until(async () => (await db.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r === false,
      { timeoutMs: 60_000, what: 'recovery finished' });

    // Restore Redis: load the snapshot with AOF off (else Redis starts from an empty AOF), then turn AOF on.
    copyFileSync(join(backup, 'dump.rdb'), join(redisDir, 'dump.rdb'));
    await run('redis-server', ['--port', String(stack.local.redisPort), '--bind', '127.0.0.1', '--dir', redisDir,
      '--appendonly', 'no', '--save', '', '--daemonize', 'yes', '--pidfile', join(redisDir, 'redis.pid'), '--logfile', join(redisDir, 'redis.log')]);
    await until(async () => (await redisCli(stack.local.redisPort, 'PING').catch(() => '')) === 'PONG', { timeoutMs: 30_000, what: 'redis up' });
    await redisCli(stack.local.redisPort, 'CONFIG', 'SET', 'appendonly', 'yes');
    await until(async () => /aof_enabled:1[\s\S]*aof_rewrite_in_progress:0/.test(await redisCli(stack.local.redisPort, 'INFO', 'persistence')),
      { timeoutMs: 30_000, what: 'AOF rewritten' });
    // The snapshot is older than Postgres: it still counts the limited voucher's 3 uses.
    expect(Number(await redis.hget(keys.voucher(tenantId, 'DRILL-TEN'), 'uses'))).toBe(3);

    svc = await spawn();
    // Postgres has every session start, once, in a chain that verifies (snapshot entries replayed by the sink change nothing).
    await until(drained, { timeoutMs: 30_000, what: 'restored outbox drained' });
    await expectOneStartEach(db, tenantId, authorized);
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [tenantId])).rows[0]!.n)
      .toBe(authorized.length + 7);
    // No use goes back: 10 - 7 = 3 more uses, whatever the snapshot said.
    const after: number[] = [];
    for (let i = 0; i < 5; i++) after.push(await useTen());
    expect(after.slice(0, 3)).toEqual([200, 200, 200]);
    expect(after.slice(3).filter((s) => s === 200)).toEqual([]);
    await until(drained, { timeoutMs: 30_000, what: 'new uses drained' });
    const verdict = await stack.cli(['audit', 'verify', '--tenant', tenantId, '--json']);
    // Session starts (load, 7 + 3 limited) plus the three operator records (hotspot, two vouchers).
    expect(verdict).toEqual({ tenant_id: tenantId, records: authorized.length + 10 + 3, valid: true, first_break: null });
  }, 180_000);
});
