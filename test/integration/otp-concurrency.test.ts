import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { describe, expect, inject } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { OtpHasher, deriveOtpKey } from '../../engine/signin/otp/otp-code.js';
import { OtpStore } from '../../engine/signin/otp/otp-store.js';
import { DEFAULT_OTP_LIMITS } from '../../engine/signin/sign-in-settings.js';
import { keys, luaTest as it, mac } from '../support/lua.js';

const dist = (...p: string[]) => pathToFileURL(projectPath('dist', ...p)).href;

/**
 * One engine process's verifies, as a child process with its own Redis
 * connection: at `startAt` it fires `n` verifies of `code` at once through
 * the built OtpStore (the code check and the session start, use-otp-14.lua),
 * each for a device of its own, and prints each outcome.
 */
const CHILD = `
const { createRedis } = await import(${JSON.stringify(dist('engine', 'redis', 'scripts.js'))});
const { OtpStore } = await import(${JSON.stringify(dist('engine', 'signin', 'otp', 'otp-store.js'))});
const { OtpHasher, deriveOtpKey } = await import(${JSON.stringify(dist('engine', 'signin', 'otp', 'otp-code.js'))});
const [url, tenant, hotspot, phone, code, n, startAt, macBase] = process.argv.slice(1);
const redis = createRedis(url, { warn() {} });
await redis.ping();
const store = new OtpStore(redis);
const hash = new OtpHasher(deriveOtpKey(new TextEncoder().encode('concurrency-key-concurrency-key-0123'))).hash(tenant, hotspot, phone, code);
await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
const terms = [{ channel: 'sms', method: 'sms_otp', minutes: 60, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '' },
  { channel: 'msgapp', method: 'msgapp_otp', minutes: 60, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '' }];
const out = await Promise.all(Array.from({ length: Number(n) }, (_, i) => store.use({
  tenantId: tenant, hotspotId: hotspot, identity: phone, hash, mac: macBase + String(i).padStart(2, '0'), ip: '10.0.0.1', ssid: '',
  sessionId: 'sess_conc' + macBase.replace(/:/g, '') + i, now: Date.now(), terms,
})));
process.stdout.write(JSON.stringify(out.map((o) => o.kind)));
redis.disconnect();
`;

function child(args: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    p.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`verifier exited with ${code}`))));
  });
}

/** Issue 10 "Must show": 50 concurrent verifies of one code from two processes, exactly one succeeds and starts a session. */
describe('OTP single use across processes', () => {
  it('of 50 concurrent verifies of one code from two processes exactly one succeeds', async ({ redis, tenant }) => {
    const hotspot = 'hs_conc';
    const phone = '+905321234567';
    const code = '424242';
    const hasher = new OtpHasher(deriveOtpKey(new TextEncoder().encode('concurrency-key-concurrency-key-0123')));
    // The code stored as a request stores it: through request-otp-7.lua.
    const now = Date.now();
    const sent = await new OtpStore(redis).request({
      tenantId: tenant, hotspotId: hotspot, identity: phone, requestId: 'otp_conc', channel: 'sms', hash: hasher.hash(tenant, hotspot, phone, code),
      source: '10.0.0.1', mac: mac(1), prefix: '+90532', limits: { ...DEFAULT_OTP_LIMITS }, fallbackDueMs: 0, fallbackSms: false,
    }, now);
    expect(sent).toEqual({ ok: true });

    const at = String(Date.now() + 1500);
    const args = (n: number, macBase: string) => [inject('redisUrl'), tenant, hotspot, phone, code, String(n), at, macBase];
    const [a, b] = await Promise.all([child(args(25, '02:00:00:00:0a:')), child(args(25, '02:00:00:00:0b:'))]);
    const all = [...a, ...b];
    expect(all).toHaveLength(50);
    expect(all.filter((r) => r === 'started')).toHaveLength(1);
    expect(all.filter((r) => r !== 'started').every((r) => r === 'expired')).toBe(true);
    expect(await redis.exists(keys.otpCode(tenant, hotspot, phone))).toBe(0);
    // One session, and one session_start record queued with it: the one verify that used the code.
    expect(await redis.zcard(keys.live(tenant, hotspot))).toBe(1);
    const starts = (await redis.xrange(keys.outbox(tenant), '-', '+')).filter(([, f]) => f[1] === 'session_start');
    expect(starts).toHaveLength(1);
  });
});
