import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = {
  REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32),
};

/** ACCESS_LOG (docs/observability.md): off unless asked for; a bad value is refused with one line naming it. */
describe('ACCESS_LOG', () => {
  it('is off by default and on with true or 1', () => {
    expect(loadConfig(env).accessLog).toBe(false);
    expect(loadConfig({ ...env, ACCESS_LOG: 'true' }).accessLog).toBe(true);
    expect(loadConfig({ ...env, ACCESS_LOG: '1' }).accessLog).toBe(true);
  });

  it('refuses anything else', () => {
    expect(() => loadConfig({ ...env, ACCESS_LOG: 'yes' })).toThrow(/ACCESS_LOG="yes" must be true or false/);
  });
});
