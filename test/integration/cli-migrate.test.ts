import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectPath } from '../../engine/index.js';

/**
 * `cli migrate status|up` (issue 24): status lists every migration file,
 * applied or pending, and changes nothing; up applies what is pending. Run
 * against a database of its own, made empty for the test, so "pending" is real.
 */

const run = promisify(execFile);
const DB = `migrate_cli_${process.pid}`;
const files = readdirSync(projectPath('engine', 'store', 'migrations')).filter((f) => f.endsWith('.sql')).sort();

let admin: pg.Client;
let url: string;

async function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), 'migrate', ...args], {
      env: { ...process.env, DATABASE_URL: url, REDIS_URL: inject('redisUrl'), LOG_LEVEL: 'silent' },
    });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

async function inDb<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  const base = inject('databaseUrl');
  admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  const u = new URL(base);
  u.pathname = `/${DB}`;
  url = u.toString();
});

afterAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.end();
});

describe('cli migrate', () => {
  it('status on an empty database lists every file as pending, exits 0, and creates nothing', async () => {
    const r = await cli('status', '--json');
    expect(r.code).toBe(0);
    const st = JSON.parse(r.stdout) as { migrations: { file: string; applied_at: string | null }[]; unknown: string[] };
    expect(st.migrations.map((m) => m.file)).toEqual(files);
    expect(st.migrations.every((m) => m.applied_at === null)).toBe(true);
    expect(await inDb("SELECT 1 FROM pg_tables WHERE tablename = 'schema_migrations'")).toHaveLength(0);

    const text = await cli('status');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`pending  ${files[0]}`);
    expect(text.stdout).toContain(`0 applied, ${files.length} pending`);
  });

  it('up applies them all, in order; then status lists them applied and up has nothing left', async () => {
    const up = await cli('up', '--json');
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout)).toEqual({ applied: files });
    expect(await inDb("SELECT 1 FROM pg_tables WHERE tablename = 'sessions'")).toHaveLength(1);

    const st = JSON.parse((await cli('status', '--json')).stdout) as { migrations: { file: string; applied_at: string | null }[] };
    expect(st.migrations.every((m) => m.applied_at !== null && !Number.isNaN(Date.parse(m.applied_at)))).toBe(true);
    expect((await cli('up')).stdout.trim()).toBe('nothing pending');
  });

  it('names a migration the database has and this release does not (a newer release applied it)', async () => {
    await inDb("INSERT INTO schema_migrations (version) VALUES ('999_from_a_newer_release.sql')");
    const r = await cli('status');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('unknown  999_from_a_newer_release.sql');
    expect(r.stdout).toContain(`${files.length} applied, 0 pending`);
  });

  it('refuses a sub-command it does not know, with the usage', async () => {
    const r = await cli('down');
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain('migrate status | migrate up');
  });
});
