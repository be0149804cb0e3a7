import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig, maskUsername } from '../../engine/index.js';
import { keyId, parseSecretKey, SecretBox } from '../../engine/secrets/secret-box.js';

const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };

describe('SecretBox (AES-256-GCM, key ids for rotation)', () => {
  const a = parseSecretKey(randomBytes(32).toString('base64'))!;
  const b = parseSecretKey(randomBytes(32).toString('hex'))!;

  it('seals under the current key, names it, and opens only for the same tenant and field', () => {
    const box = new SecretBox(a);
    const s = box.seal('user:pass-123456', 'tn_1\nsms.credentials');
    expect(s.key_id).toBe(a.id);
    expect(s.ciphertext.includes(Buffer.from('pass-123456'))).toBe(false);
    expect(box.open(s, 'tn_1\nsms.credentials')).toBe('user:pass-123456');
    expect(box.open(s, 'tn_2\nsms.credentials')).toBeNull();
    expect(box.open(s, 'tn_1\nemail.smtp_url')).toBeNull();
    const tampered = { ...s, ciphertext: Buffer.from(s.ciphertext) };
    tampered.ciphertext[0]! ^= 1;
    expect(box.open(tampered, 'tn_1\nsms.credentials')).toBeNull();
  });

  it('opens a row of an old key only while that key is in the ring; seals under the new one', () => {
    const sealed = new SecretBox(a).seal('k', 'x');
    expect(new SecretBox(b).open(sealed, 'x')).toBeNull();
    const ring = new SecretBox(b, [a]);
    expect(ring.open(sealed, 'x')).toBe('k');
    expect(ring.seal('k', 'x').key_id).toBe(b.id);
    expect(new SecretBox(undefined).canSeal).toBe(false);
  });

  it('takes 32 bytes as hex or base64, and the id is derived from the key alone', () => {
    const raw = randomBytes(32);
    expect(parseSecretKey(raw.toString('hex'))!.id).toBe(keyId(raw));
    expect(parseSecretKey(raw.toString('base64'))!.id).toBe(keyId(raw));
    expect(parseSecretKey(raw.toString('base64url'))!.id).toBe(keyId(raw));
    for (const bad of ['', 'short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), 'z'.repeat(64)]) expect(parseSecretKey(bad), bad).toBeNull();
  });

  it('SECRETS_KEY and SECRETS_KEY_OLD are checked at start, each named and never echoed', () => {
    expect(loadConfig(env).secretsKeys).toEqual({ current: undefined, old: [] });
    const k = randomBytes(32).toString('base64');
    const o = randomBytes(32).toString('hex');
    expect(loadConfig({ ...env, SECRETS_KEY: k, SECRETS_KEY_OLD: o }).secretsKeys).toMatchObject({ current: { id: parseSecretKey(k)!.id }, old: [{ id: parseSecretKey(o)!.id }] });
    expect(() => loadConfig({ ...env, SECRETS_KEY: 'not-a-key-value' })).toThrow(/SECRETS_KEY must be 32 bytes/);
    try {
      loadConfig({ ...env, SECRETS_KEY: 'not-a-key-value' });
    } catch (err) {
      expect((err as Error).message).not.toContain('not-a-key-value');
    }
    expect(() => loadConfig({ ...env, SECRETS_KEY_OLD: o })).toThrow(/SECRETS_KEY_OLD needs SECRETS_KEY/);
  });
});

describe('one identity mask', () => {
  it('masks phone numbers and e-mail addresses alike, and leaves other identities', () => {
    expect(maskUsername('+905321234567')).toBe('+905*******67');
    expect(maskUsername('ayse@example.com')).toBe('a***@example.com');
    expect(maskUsername('ayse.yilmaz@example.com')).toBe('a**********@example.com');
    expect(maskUsername('a@b.io')).toBe('a***@b.io');
    expect(maskUsername('VOUCHER-1')).toBe('VOUCHER-1');
    expect(maskUsername(null)).toBeNull();
  });
});
