import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };

describe('HOTSPOT_LEASE_MS', () => {
  it('30 s by default; 3 s to 5 min; a bad value named', () => {
    expect(loadConfig(env).hotspotLeaseMs).toBe(30_000);
    expect(loadConfig({ ...env, HOTSPOT_LEASE_MS: '6000' }).hotspotLeaseMs).toBe(6_000);
    // Renewed every third of it: under 3 s, a process's event-loop stall of a second would hand its hotspots over.
    expect(() => loadConfig({ ...env, HOTSPOT_LEASE_MS: '1000' })).toThrow(/HOTSPOT_LEASE_MS="1000" must be an integer from 3000 to 300000/);
    expect(() => loadConfig({ ...env, HOTSPOT_LEASE_MS: 'soon' })).toThrow(/HOTSPOT_LEASE_MS="soon"/);
  });
});
