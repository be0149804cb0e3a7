import pg from 'pg';
import { RETENTION_LOCK_ID } from '../../engine/index.js';

/**
 * Runs `fn` while holding the retention job's advisory lock on a connection of its own. Every service
 * of every test file runs retention on the real clock (at its start, then hourly) across all tenants,
 * and skips its turn while the lock is held: a test whose rows are past that clock's cutoff sets them
 * up (or does all its work) inside, so none of those runs falls between its steps.
 */
export async function underRetentionLock<T>(databaseUrl: string, fn: () => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_ID]);
    return await fn();
  } finally {
    await c.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_ID]).catch(() => undefined);
    await c.end();
  }
}
