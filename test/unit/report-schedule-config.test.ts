import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };

describe('scheduled report mail settings', () => {
  it('run in every process by default, each minute, a run held 10 minutes; overrides read; each bad value named', () => {
    expect(loadConfig(env).reportSchedules).toEqual({ run: true, pollMs: 60_000, leaseMs: 600_000 });
    expect(loadConfig({ ...env, REPORT_SCHEDULER: 'false', REPORT_SCHEDULE_POLL_MS: '200', REPORT_SCHEDULE_LEASE_SEC: '300' }).reportSchedules)
      .toEqual({ run: false, pollMs: 200, leaseMs: 300_000 });
    expect(() => loadConfig({ ...env, REPORT_SCHEDULER: 'sometimes' })).toThrow(/REPORT_SCHEDULER="sometimes" must be true or false/);
    expect(() => loadConfig({ ...env, REPORT_SCHEDULE_POLL_MS: '10' })).toThrow(/REPORT_SCHEDULE_POLL_MS="10" must be an integer from 100 to 3600000/);
    // A lease shorter than a slow send (SMTP waits up to 30 s to connect and 120 s per step) would hand a run still being sent to another process.
    expect(() => loadConfig({ ...env, REPORT_SCHEDULE_LEASE_SEC: '120' })).toThrow(/REPORT_SCHEDULE_LEASE_SEC="120" must be an integer from 300 to 86400/);
  });
});
