import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';
import { deriveOtpKey } from '../../engine/signin/otp/otp-code.js';

const env = {
  REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32),
};

/** The OTP code key: OTP_SECRET when given (32 bytes at least), else its own key derived from JWT_SECRET. */
describe('OTP key configuration', () => {
  it('derives a key of its own from JWT_SECRET when OTP_SECRET is unset', () => {
    const key = Buffer.from(loadConfig(env).otpKey);
    expect(key.equals(deriveOtpKey(new TextEncoder().encode('x'.repeat(32))))).toBe(true);
    expect(key.equals(Buffer.from('x'.repeat(32)))).toBe(false);
  });

  it('uses OTP_SECRET, and refuses one shorter than 32 bytes', () => {
    expect(Buffer.from(loadConfig({ ...env, OTP_SECRET: 'o'.repeat(40) }).otpKey).toString()).toBe('o'.repeat(40));
    expect(() => loadConfig({ ...env, OTP_SECRET: 'short' })).toThrow(/OTP_SECRET must be at least 32 bytes; it is 5/);
  });
});
