import { AppError } from '../errors.js';
import type { Pool } from '../store/postgres.js';
import type { TsaClient } from './tsa-client.js';

export type StampStatus = 'granted' | 'failed' | 'not_configured';

/** The time-stamp of one day's access log (its exact content, by SHA-256). */
export interface DayStamp {
  status: StampStatus;
  /** The TimeStampResp, when granted. */
  tsr?: Buffer;
  gen_time?: string;
  /** A token from an earlier export or summary for the same content. */
  reused?: boolean;
  error?: { code: string; message: string };
}

/**
 * Time-stamps daily access logs once per content and keeps the answers
 * (compliance_timestamps). A granted token is reused for as long as the
 * day's file is byte for byte the same: an earlier token is better evidence
 * (it proves the log existed sooner) and the authority may charge per token.
 * A failure is recorded so the daily summary can report it, and retried on
 * the next request.
 */
export class TimestampStore {
  constructor(private readonly pool: Pool, private readonly tsa: TsaClient | null) {}

  /** The day's stamp for this digest, asking the authority only when no granted token exists. Never throws for a TSA failure. */
  async stamp(tenantId: string, day: string, sha256: Buffer): Promise<DayStamp> {
    const known = await this.find(tenantId, day, sha256);
    if (known?.status === 'granted') return { ...known, reused: true };
    if (!this.tsa) return { status: 'not_configured' };
    try {
      const t = await this.tsa.stamp(sha256);
      await this.pool.query(
        `INSERT INTO compliance_timestamps (tenant_id, day, sha256, status, tsr, gen_time, error, tsa_url)
         VALUES ($1, $2, $3, 'granted', $4, $5, NULL, $6)
         ON CONFLICT (tenant_id, day, sha256) DO UPDATE
           SET status = 'granted', tsr = excluded.tsr, gen_time = excluded.gen_time, error = NULL, tsa_url = excluded.tsa_url, created_at = now()
           WHERE compliance_timestamps.status <> 'granted'`,
        [tenantId, day, sha256, t.tsr, t.genTime, this.tsa.url]);
      return { status: 'granted', tsr: t.tsr, gen_time: t.genTime, reused: false };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const error = { code: err.code, message: err.message };
      await this.pool.query(
        `INSERT INTO compliance_timestamps (tenant_id, day, sha256, status, error, tsa_url) VALUES ($1, $2, $3, 'failed', $4, $5)
         ON CONFLICT (tenant_id, day, sha256) DO UPDATE SET error = excluded.error, created_at = now()
           WHERE compliance_timestamps.status = 'failed'`,
        [tenantId, day, sha256, `${error.code}: ${error.message}`, this.tsa.url]);
      return { status: 'failed', error };
    }
  }

  /** What is recorded for this exact content, without asking the authority. */
  async find(tenantId: string, day: string, sha256: Buffer): Promise<DayStamp | null> {
    const { rows } = await this.pool.query<{ status: 'granted' | 'failed'; tsr: Buffer | null; gen_time: Date | null; error: string | null }>(
      'SELECT status, tsr, gen_time, error FROM compliance_timestamps WHERE tenant_id = $1 AND day = $2 AND sha256 = $3',
      [tenantId, day, sha256]);
    const r = rows[0];
    if (!r) return null;
    if (r.status === 'granted' && r.tsr) return { status: 'granted', tsr: r.tsr, gen_time: r.gen_time?.toISOString() };
    const [code = 'tsa_failed', ...rest] = (r.error ?? '').split(': ');
    return { status: 'failed', error: { code, message: rest.join(': ') } };
  }
}
