import { describe, expect, it } from 'vitest';
import { emailDomain, limitPrefix, normalizeEmail, normalizePhone, prefixAllowed } from '../../engine/signin/otp/identity.js';
import { deriveOtpKey, generateCode, OtpHasher } from '../../engine/signin/otp/otp-code.js';

describe('OTP identities', () => {
  it('normalises international phone forms to E.164 and refuses the rest', () => {
    expect(normalizePhone('+90 532 123 45 67')).toBe('+905321234567');
    expect(normalizePhone('0090-532-123-45-67')).toBe('+905321234567');
    expect(normalizePhone('+44 (20) 7946.0958')).toBe('+442079460958');
    for (const bad of ['05321234567', '+0532123456', '+90532123456', '+9053212345678', 'phone', '+1234567', '+1234567890123456', '']) {
      expect(normalizePhone(bad), bad).toBeNull();
    }
  });

  it('blocked prefixes refuse; a non-empty allowed list admits only its prefixes', () => {
    expect(prefixAllowed('+905321234567', [], [])).toBe(true);
    expect(prefixAllowed('+905321234567', ['+90'], [])).toBe(true);
    expect(prefixAllowed('+442079460958', ['+90'], [])).toBe(false);
    expect(prefixAllowed('+905001234567', ['+90'], ['+90500'])).toBe(false);
    expect(prefixAllowed('+8821234567', [], ['+882'])).toBe(false);
    expect(limitPrefix('+905321234567', 5)).toBe('+90532');
  });

  it('normalises e-mail addresses (trim, lower case) and refuses what is not one', () => {
    expect(normalizeEmail('  Guest@Example.COM ')).toBe('guest@example.com');
    expect(emailDomain('guest@example.com')).toBe('example.com');
    for (const bad of ['guest', 'guest@', '@example.com', 'a b@example.com', 'guest@example', 'guest@-x.com', `${'a'.repeat(65)}@example.com`]) {
      expect(normalizeEmail(bad), bad).toBeNull();
    }
  });
});

describe('OTP codes', () => {
  it('are six digits, leading zeros kept, and spread over the range', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const c = generateCode();
      expect(c).toMatch(/^[0-9]{6}$/);
      seen.add(c);
    }
    expect(seen.size).toBeGreaterThan(1990);
  });

  it('are hashed with a key, bound to tenant, hotspot and identity', () => {
    const key = deriveOtpKey(new TextEncoder().encode('x'.repeat(32)));
    expect(key.equals(Buffer.from('x'.repeat(32)))).toBe(false);
    const h = new OtpHasher(key);
    const a = h.hash('tn_a', 'hs_1', '+905321234567', '123456');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(h.hash('tn_a', 'hs_1', '+905321234567', '123456')).toBe(a);
    expect(h.hash('tn_b', 'hs_1', '+905321234567', '123456')).not.toBe(a);
    expect(h.hash('tn_a', 'hs_2', '+905321234567', '123456')).not.toBe(a);
    expect(h.hash('tn_a', 'hs_1', '+905321234568', '123456')).not.toBe(a);
    expect(new OtpHasher(deriveOtpKey(new TextEncoder().encode('y'.repeat(32)))).hash('tn_a', 'hs_1', '+905321234567', '123456')).not.toBe(a);
  });
});
