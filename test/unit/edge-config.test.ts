import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = {
  REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32),
};

/** The HTTP edge's settings (issue 18, items 8 and 10; docs/http-edge.md): defaults, and each bad value named. */
describe('HTTP edge settings', () => {
  it('has defaults for the body time-out, the per-address cap and the stream caps; /metrics stays put and open', () => {
    const c = loadConfig(env);
    expect(c.http).toEqual({ bodyTimeoutMs: 30_000, maxConnectionsPerAddress: 1000, metricsPort: undefined, metricsToken: undefined });
    expect(c.streams).toMatchObject({ maxPerPrincipal: 20, maxPerTenant: 10_000, maxPerProcess: 50_000 });
  });

  it('takes overrides, and refuses a cap of 0, a port out of range and a short or spaced metrics token', () => {
    const c = loadConfig({ ...env, METRICS_PORT: '9464', METRICS_TOKEN: 'a'.repeat(16), HTTP_MAX_CONNECTIONS_PER_ADDRESS: '5', STREAM_MAX_PER_PRINCIPAL: '2' });
    expect(c.http).toMatchObject({ metricsPort: 9464, metricsToken: 'a'.repeat(16), maxConnectionsPerAddress: 5 });
    expect(c.streams.maxPerPrincipal).toBe(2);
    expect(() => loadConfig({ ...env, STREAM_MAX_PER_TENANT: '0' })).toThrow(/STREAM_MAX_PER_TENANT="0" must be an integer from 1/);
    expect(() => loadConfig({ ...env, HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' })).toThrow(/HTTP_MAX_CONNECTIONS_PER_ADDRESS="0"/);
    expect(() => loadConfig({ ...env, HTTP_BODY_TIMEOUT_MS: '10' })).toThrow(/HTTP_BODY_TIMEOUT_MS="10" must be an integer from 100/);
    expect(() => loadConfig({ ...env, METRICS_PORT: '70000' })).toThrow(/METRICS_PORT="70000" is not a TCP port/);
    expect(() => loadConfig({ ...env, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
    expect(() => loadConfig({ ...env, METRICS_TOKEN: 'with a space in it ok' })).toThrow(/METRICS_TOKEN/);
  });

  it('never prints the metrics token in its complaint', () => {
    expect(() => loadConfig({ ...env, METRICS_TOKEN: 'sekrit' })).toThrow(expect.objectContaining({ message: expect.not.stringContaining('sekrit') }));
  });
});
