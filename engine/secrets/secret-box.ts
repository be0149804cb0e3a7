import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** A key of the keyring: 32 bytes, and the id stored beside every ciphertext sealed under it. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** What is stored for one secret: the key's id, the 12-byte nonce and the ciphertext with its 16-byte GCM tag appended. */
export interface Sealed {
  key_id: string;
  nonce: Buffer;
  ciphertext: Buffer;
}

const TAG_BYTES = 16;

/**
 * A key from SECRETS_KEY / SECRETS_KEY_OLD: 32 bytes written as 64 hex digits
 * or as base64 (44 characters, or 43 unpadded base64url). Null when it is
 * neither (the config reports that without echoing the value).
 */
export function parseSecretKey(raw: string): SecretKey | null {
  const text = raw.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(text)) key = Buffer.from(text, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(text)) key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== 32) return null;
  return { id: keyId(key), key };
}

/**
 * The key's id: a label-keyed SHA-256 of the key, 16 hex digits. Derived, not
 * configured, so a ciphertext names the key that opens it without anyone
 * keeping a table of ids; the hash of a 256-bit random key reveals nothing of it.
 */
export function keyId(key: Buffer): string {
  return 'k' + createHash('sha256').update('gw secrets key id\0').update(key).digest('hex').slice(0, 16);
}

/**
 * AES-256-GCM sealing of tenant secrets (provider credentials given inline).
 * Seals under the current key (SECRETS_KEY); opens under any key of the ring
 * (SECRETS_KEY and SECRETS_KEY_OLD), found by the id stored beside the
 * ciphertext, so a key can be rotated while processes run: deploy the new key
 * with the old one as SECRETS_KEY_OLD, run `cli secrets rotate`, drop the old.
 * The additional data binds a ciphertext to its tenant and field: a row copied
 * to another tenant or field does not open.
 */
export class SecretBox {
  private readonly ring = new Map<string, Buffer>();

  constructor(readonly current: SecretKey | undefined, old: readonly SecretKey[] = []) {
    for (const k of old) this.ring.set(k.id, k.key);
    if (current) this.ring.set(current.id, current.key);
  }

  /** Whether secrets can be sealed here (SECRETS_KEY is set). */
  get canSeal(): boolean {
    return this.current !== undefined;
  }

  /** Whether `keyId` is one of this ring's keys. */
  has(keyId: string): boolean {
    return this.ring.has(keyId);
  }

  seal(plain: string, aad: string): Sealed {
    if (!this.current) throw new Error('SECRETS_KEY is not set');
    const nonce = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.current.key, nonce);
    c.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
    return { key_id: this.current.id, nonce, ciphertext };
  }

  /** The plaintext, or null when the key is not in the ring or the ciphertext (or its tenant and field) does not check out. */
  open(s: Sealed, aad: string): string | null {
    const key = this.ring.get(s.key_id);
    if (!key || s.ciphertext.length < TAG_BYTES) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', key, s.nonce);
      d.setAAD(Buffer.from(aad, 'utf8'));
      d.setAuthTag(s.ciphertext.subarray(s.ciphertext.length - TAG_BYTES));
      return Buffer.concat([d.update(s.ciphertext.subarray(0, s.ciphertext.length - TAG_BYTES)), d.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
