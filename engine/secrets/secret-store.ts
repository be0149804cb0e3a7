import type { Pool, PoolClient } from '../store/postgres.js';
import type { SecretBox } from './secret-box.js';

/** Where a sender finds its secret at send time; null: none (unset variable, unknown key, tampered row). */
export type SecretSource = () => string | null;

interface Row { tenant_id: string; name: string; key_id: string; nonce: Buffer; ciphertext: Buffer }

export interface RotateResult {
  /** Rows re-sealed under the current key. */
  rotated: number;
  /** Rows no key of the ring opens (their key is not in SECRETS_KEY_OLD, or the row was altered): left as they are. */
  unreadable: { tenant_id: string; name: string; key_id: string }[];
  /** The current key's id. */
  key_id: string;
}

/** The additional data of a row: its tenant and field. */
const aad = (tenantId: string, name: string): string => `${tenantId}\n${name}`;

/**
 * Tenant secrets at rest (table tenant_secrets), sealed by a SecretBox. The
 * plaintext exists only in the argument of put() and in the return value of a
 * source's call at send time; what processes hold between sends is the
 * ciphertext.
 */
export class SecretStore {
  constructor(private readonly pool: Pool, readonly box: SecretBox) {}

  /** Seals and stores (or replaces) one secret; `q` may be a transaction's client. */
  async put(q: Pool | PoolClient, tenantId: string, name: string, plain: string): Promise<void> {
    const s = this.box.seal(plain, aad(tenantId, name));
    await q.query(
      `INSERT INTO tenant_secrets (tenant_id, name, key_id, nonce, ciphertext) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, name) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext, updated_at = now()`,
      [tenantId, name, s.key_id, s.nonce, s.ciphertext]);
  }

  async remove(q: Pool | PoolClient, tenantId: string, name: string): Promise<void> {
    await q.query('DELETE FROM tenant_secrets WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
  }

  /** Whether the tenant has the secret stored. */
  async has(tenantId: string, name: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM tenant_secrets WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
    return (rowCount ?? 0) > 0;
  }

  /** The stored secret as a source opened at each call; null when none is stored. */
  async source(tenantId: string, name: string): Promise<SecretSource | null> {
    const { rows } = await this.pool.query<Row>('SELECT key_id, nonce, ciphertext FROM tenant_secrets WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
    const row = rows[0];
    if (!row) return null;
    const sealed = { key_id: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext };
    return () => this.box.open(sealed, aad(tenantId, name));
  }

  /**
   * Re-seals under the current key every row sealed under another key of the
   * ring, one row at a time, each update conditional on the row being still as
   * read (a concurrent put wins). Rows no key opens are reported, not touched.
   */
  async rotate(): Promise<RotateResult> {
    const current = this.box.current;
    if (!current) throw new Error('SECRETS_KEY is not set: nothing to rotate to');
    const { rows } = await this.pool.query<Row>('SELECT tenant_id, name, key_id, nonce, ciphertext FROM tenant_secrets WHERE key_id <> $1 ORDER BY tenant_id, name', [current.id]);
    let rotated = 0;
    const unreadable: RotateResult['unreadable'] = [];
    for (const r of rows) {
      const plain = this.box.open(r, aad(r.tenant_id, r.name));
      if (plain === null) {
        unreadable.push({ tenant_id: r.tenant_id, name: r.name, key_id: r.key_id });
        continue;
      }
      const s = this.box.seal(plain, aad(r.tenant_id, r.name));
      const res = await this.pool.query(
        `UPDATE tenant_secrets SET key_id = $3, nonce = $4, ciphertext = $5, updated_at = now()
         WHERE tenant_id = $1 AND name = $2 AND key_id = $6 AND nonce = $7`,
        [r.tenant_id, r.name, s.key_id, s.nonce, s.ciphertext, r.key_id, r.nonce]);
      rotated += res.rowCount ?? 0;
    }
    return { rotated, unreadable, key_id: current.id };
  }
}
