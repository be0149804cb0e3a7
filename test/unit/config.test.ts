import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = {
  REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32),
};

/** Configuration from the environment: each bad value named, never a silent default. */
describe('loadConfig', () => {
  it('reads RADIUS_ENABLED as true/false or 1/0, and refuses anything else rather than leaving RADIUS on', () => {
    expect(loadConfig(env).radiusEnabled).toBe(true);
    for (const off of ['false', 'FALSE', '0', ' false ']) expect(loadConfig({ ...env, RADIUS_ENABLED: off }).radiusEnabled, off).toBe(false);
    for (const on of ['true', 'True', '1']) expect(loadConfig({ ...env, RADIUS_ENABLED: on }).radiusEnabled, on).toBe(true);
    for (const bad of ['no', 'off', 'yes', '2']) expect(() => loadConfig({ ...env, RADIUS_ENABLED: bad }), bad).toThrow(/RADIUS_ENABLED=.* must be true or false/);
  });

  it('wants an IP address to listen on, localhost too for HTTP', () => {
    expect(loadConfig({ ...env, HTTP_HOST: '::', RADIUS_HOST: '127.0.0.1' })).toMatchObject({ httpHost: '::', radiusHost: '127.0.0.1' });
    expect(loadConfig({ ...env, HTTP_HOST: 'localhost' }).httpHost).toBe('localhost');
    expect(() => loadConfig({ ...env, HTTP_HOST: 'garbage host' })).toThrow(/HTTP_HOST="garbage host" must be an IP address/);
    expect(() => loadConfig({ ...env, RADIUS_HOST: 'localhost' })).toThrow(/RADIUS_HOST="localhost" must be an IP address to listen on$/m);
  });

  it('bounds the dashboard streams: defaults, overrides, and no bound of 0 that would drop every client', () => {
    expect(loadConfig(env).streams).toEqual({ maxBufferedBytes: 65536, maxBackedUpMs: 30_000, heartbeatMs: 15_000, coalesceMs: 500, maxPerPrincipal: 20, maxPerTenant: 10_000, maxPerProcess: 50_000 });
    expect(loadConfig({ ...env, STREAM_MAX_BUFFERED_BYTES: '2048', STREAM_COALESCE_MS: '0' }).streams).toMatchObject({ maxBufferedBytes: 2048, coalesceMs: 0 });
    expect(() => loadConfig({ ...env, STREAM_MAX_BUFFERED_BYTES: '0' })).toThrow(/STREAM_MAX_BUFFERED_BYTES="0" must be an integer from 256/);
    expect(() => loadConfig({ ...env, STREAM_HEARTBEAT_MS: 'soon' })).toThrow(/STREAM_HEARTBEAT_MS="soon"/);
  });

  it('names every bad value at once', () => {
    expect(() => loadConfig({ ...env, RADIUS_ENABLED: 'nope', HTTP_HOST: 'x y', HTTP_PORT: '70000' })).toThrow(/RADIUS_ENABLED[\s\S]*HTTP_HOST|HTTP_HOST[\s\S]*RADIUS_ENABLED/);
  });
});
