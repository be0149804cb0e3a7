import { readdirSync, readFileSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { assetPath } from '../util/project-root.js';
import type { Logger } from '../logger.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// timestamptz as JS Date is what pg does already; int8 (counts) as number is
// safe for our magnitudes and saves a conversion at every call site.
pg.types.setTypeParser(20, (v: string) => Number(v));

/**
 * A pool with an error handler, so a dropped idle connection is logged instead of crashing the process.
 * `connectTimeoutMs` bounds the wait for a connection (0: none, pg's default): a host that is gone then
 * fails the request after it instead of after the system's TCP connect time-out (about 2 minutes).
 */
export function createPool(databaseUrl: string, log: Logger, max = 10, connectTimeoutMs = 0): Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: connectTimeoutMs });
  pool.on('error', (err) => log.warn({ err }, 'idle postgres connection failed'));
  // pool.on('error') covers idle connections only: a client checked out with pool.connect()
  // (the outbox sink's transaction, migrations, retention) has no listener, and when Postgres
  // goes away under it pg emits 'error' on the client, which then kills the whole process,
  // portal included. Its query in flight fails anyway, and pg-pool drops the dead client on release.
  pool.on('connect', (client) => client.on('error', (err) => log.warn({ err: err.message }, 'postgres connection lost')));
  return pool;
}

/** Socket errors of a server that is not there (refused, reset, unreachable), whichever store. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether `err` says Postgres could not be reached or went away (refused, reset, shutting down,
 * SQLSTATE class 08 or 57P0x), not that the query was wrong: the request is answered 503 then.
 */
export function isPostgresUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code))) return true;
  // pg's own words for a connection that ended or never came (no code on these).
  return /^Connection terminated|^timeout exceeded when trying to connect/.test(err.message);
}

/** Runs `fn` in a transaction; rolls back on any throw. */
export async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Loads rows with COPY ... FROM STDIN (text format) in the caller's
 * transaction: cheaper for Postgres than an INSERT ... SELECT of the same
 * rows (the audit sink's Postgres CPU per record fell by a quarter with it,
 * bench/RESULTS.md, audit-sink). `rows`
 * is the COPY text: a line a row, its fields made by copyField and joined by
 * tabs. A row Postgres refuses fails the whole COPY, with the usual SQLSTATE.
 */
export async function copyInto(c: PoolClient, table: string, columns: readonly string[], rows: string): Promise<void> {
  const stream = c.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  stream.end(rows);
  await finished(stream);
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIALS = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A field of COPY's text format: null as \N; backslash, tab, newline and carriage return escaped. */
export function copyField(v: string | number | null): string {
  if (v === null) return '\\N';
  if (typeof v === 'number') return String(v);
  return COPY_SPECIAL.test(v) ? v.replace(COPY_SPECIALS, (ch) => COPY_ESCAPES[ch]!) : v;
}

/**
 * A row of COPY's text format from its fields (each made by copyField, or a
 * number): joined, not concatenated, so the row is one flat string rather
 * than a rope of a few dozen pieces that would be garbage once written.
 */
export function copyLine(fields: (string | number)[]): string {
  return fields.join('\t');
}

/** COPY's text for rows made by copyLine: a line each (the last ended too; `lines` gets an empty one). */
export function copyText(lines: string[]): string {
  if (lines.length === 0) return '';
  lines.push('');
  return lines.join('\n');
}

/**
 * Applies the SQL files of engine/store/migrations in name order, each once,
 * each in its own transaction. An advisory lock makes concurrent starts
 * (several engine processes, parallel test files) safe.
 */
export async function migrate(pool: Pool, log: Logger): Promise<string[]> {
  const dir = migrationsDir();
  const files = migrationFiles();
  const applied: string[] = [];
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(7265011)');
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = readFileSync(`${dir}/${file}`, 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(file);
      log.info({ migration: file }, 'migration applied');
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(7265011)').catch(() => undefined);
    client.release();
  }
  return applied;
}

const migrationsDir = (): string => assetPath('engine', 'store', 'migrations');
const migrationFiles = (): string[] => readdirSync(migrationsDir()).filter((f) => f.endsWith('.sql')).sort();

/** One migration as `cli migrate status` lists it. */
export interface MigrationState { file: string; applied_at: string | null }

/**
 * Every migration file with when it was applied (null: pending), in the
 * order `migrate` applies them, plus rows the database has that no file
 * names (applied by a newer release). Reads only: nothing is created.
 */
export async function migrationStatus(pool: Pool): Promise<{ migrations: MigrationState[]; unknown: string[] }> {
  const { rows: [t] } = await pool.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  const applied = new Map<string, Date>();
  if (t?.present) {
    const { rows } = await pool.query<{ version: string; applied_at: Date }>('SELECT version, applied_at FROM schema_migrations');
    for (const r of rows) applied.set(r.version, r.applied_at);
  }
  const files = migrationFiles();
  return {
    migrations: files.map((file) => ({ file, applied_at: applied.get(file)?.toISOString() ?? null })),
    unknown: [...applied.keys()].filter((v) => !files.includes(v)).sort(),
  };
}
