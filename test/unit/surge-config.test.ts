import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = {
  REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32),
};

/** The failed-sign-in surge's settings (docs/dashboard-api.md, Incidents): a window no burst can fall between checks of. */
describe('INCIDENT_SURGE_* settings', () => {
  it('default to a 60 s window and a factor of 3; the settings before keep their values', () => {
    expect(loadConfig(env).incidents).toMatchObject({ surgeWindowSec: 60, surgeBaselineFactor: 3, surgeRejects: 50, surgeRejectPct: 50 });
    expect(loadConfig({ ...env, INCIDENT_SURGE_REJECTS: '80', INCIDENT_SURGE_REJECT_PCT: '100' }).incidents)
      .toMatchObject({ surgeRejects: 80, surgeRejectPct: 100, surgeWindowSec: 60 });
  });

  it('unset, the window grows with a longer watch interval, so an existing INCIDENT_WATCH_MS keeps working', () => {
    expect(loadConfig({ ...env, INCIDENT_WATCH_MS: '120000' }).incidents.surgeWindowSec).toBe(140);
    expect(loadConfig({ ...env, INCIDENT_WATCH_MS: '1000' }).incidents.surgeWindowSec).toBe(60);
  });

  it('refuses a window of partial steps, or one a burst could fall between two checks of, in one line', () => {
    expect(loadConfig({ ...env, INCIDENT_SURGE_WINDOW_SEC: '120', INCIDENT_SURGE_BASELINE_FACTOR: '5' }).incidents)
      .toMatchObject({ surgeWindowSec: 120, surgeBaselineFactor: 5 });
    expect(() => loadConfig({ ...env, INCIDENT_SURGE_WINDOW_SEC: '45' })).toThrow(/INCIDENT_SURGE_WINDOW_SEC=45 must be a multiple of 10 and at least 50/);
    expect(() => loadConfig({ ...env, INCIDENT_SURGE_WINDOW_SEC: '40' })).toThrow(/INCIDENT_SURGE_WINDOW_SEC=40 must be a multiple of 10 and at least 50/);
    expect(() => loadConfig({ ...env, INCIDENT_SURGE_BASELINE_FACTOR: '0' })).toThrow(/INCIDENT_SURGE_BASELINE_FACTOR="0" must be an integer from 1/);
  });
});
