import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';

const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };
const files = { RADSEC_CERT_FILE: '/etc/hostname', RADSEC_KEY_FILE: '/etc/hostname', RADSEC_CA_FILE: '/etc/hostname' };

/** RadSec's settings (issue 24's contract): all three files or none, readable at start, port 2083 unless set. */
describe('RadSec settings', () => {
  it('is off without the files, on with all three on port 2083 or RADSEC_PORT', () => {
    expect(loadConfig(env).radsec).toBeNull();
    expect(loadConfig({ ...env, ...files }).radsec).toEqual({ certFile: '/etc/hostname', keyFile: '/etc/hostname', caFile: '/etc/hostname', port: 2083 });
    expect(loadConfig({ ...env, ...files, RADSEC_PORT: '12083' }).radsec?.port).toBe(12083);
  });

  it('refuses some of the files without the others, an unreadable file, and a port for a RadSec that is off', () => {
    expect(() => loadConfig({ ...env, RADSEC_CERT_FILE: '/etc/hostname' })).toThrow(/RadSec needs all of .*missing RADSEC_KEY_FILE, RADSEC_CA_FILE/);
    expect(() => loadConfig({ ...env, ...files, RADSEC_CA_FILE: '/nonexistent/ca.pem' })).toThrow(/RADSEC_CA_FILE="\/nonexistent\/ca.pem" is not a readable file/);
    expect(() => loadConfig({ ...env, RADSEC_PORT: '2083' })).toThrow(/RADSEC_PORT is set but RadSec is off/);
    expect(() => loadConfig({ ...env, ...files, RADSEC_PORT: '99999' })).toThrow(/RADSEC_PORT/);
  });
});
