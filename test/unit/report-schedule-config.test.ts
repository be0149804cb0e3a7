import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };

describe('scheduled report mail settings', () => {
  it('run in every process by default, each minute, a run held 10 minutes; overrides read; each bad value named', () => {
    expect(loadConfig(env).reportSchedules).toEqual({ run: true, pollMs: 60_000, leaseMs: 600_000, maxCsvBytes: 10 * 1024 * 1024 });
    expect(loadConfig({ ...env, REPORT_SCHEDULER: 'false', REPORT_SCHEDULE_POLL_MS: '200', REPORT_SCHEDULE_LEASE_SEC: '300' }).reportSchedules)
      .toEqual({ run: false, pollMs: 200, leaseMs: 300_000, maxCsvBytes: 10 * 1024 * 1024 });
    expect(() => loadConfig({ ...env, REPORT_SCHEDULER: 'sometimes' })).toThrow(/REPORT_SCHEDULER="sometimes" must be true or false/);
    expect(() => loadConfig({ ...env, REPORT_SCHEDULE_POLL_MS: '10' })).toThrow(/REPORT_SCHEDULE_POLL_MS="10" must be an integer from 100 to 3600000/);
    // A lease shorter than a slow send (SMTP waits up to 30 s to connect and 120 s per step) would hand a run still being sent to another process.
    expect(() => loadConfig({ ...env, REPORT_SCHEDULE_LEASE_SEC: '120' })).toThrow(/REPORT_SCHEDULE_LEASE_SEC="120" must be an integer from 300 to 86400/);
  });

  it('cap the session CSV a mail attaches at 10 MiB by default; 64 KiB to 16 MiB (about 22.4 MB base64, under the ~25 MB servers take)', () => {
    expect(loadConfig({ ...env, REPORT_MAIL_MAX_CSV_BYTES: '65536' }).reportSchedules.maxCsvBytes).toBe(65_536);
    expect(() => loadConfig({ ...env, REPORT_MAIL_MAX_CSV_BYTES: '26214400' })).toThrow(/REPORT_MAIL_MAX_CSV_BYTES="26214400" must be an integer from 65536 to 16777216/);
  });
});
