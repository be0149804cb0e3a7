import { Errors } from '../../errors.js';
import type { OutboundPolicy } from '../../net/outbound-target.js';
import type { SecretSource, SecretStore } from '../../secrets/secret-store.js';
import { inTransaction, type Pool } from '../../store/postgres.js';
import { resolveEnvRef } from './env-ref.js';
import { MSGAPP_SECRETS, normalizeMsgappInput, type MsgappProvider, type MsgappProviderInput, type MsgappSecret } from './msgapp-provider.js';

const COLUMNS = 'tenant_id, type, provider, enabled, base_url, api_key_ref, business_device_id, template_id, access_token_ref, phone_number_id, template_name, callback_secret_ref, api_key_set, access_token_set, callback_secret_set, updated_at';

type Row = Omit<MsgappProvider, 'updated_at'> & { updated_at: Date };

/** The platform's table of per-tenant messaging-app providers (migration 013). */
export class MsgappProviderStore {
  /**
   * `onChange` hears of every change made through this store (the sender cache drops the tenant);
   * `outbound` judges the provider's base_url before it is saved (and the sender at every connection).
   */
  constructor(
    private readonly pool: Pool, private readonly outbound: OutboundPolicy,
    private readonly onChange: (tenantId: string) => void = () => undefined,
    private readonly secrets: SecretStore | null = null,
  ) {}

  /**
   * Creates or replaces the tenant's provider; 404 tenant_not_found for an unknown tenant, 400
   * target_not_allowed for a base_url it may not reach. Secrets given inline are sealed in
   * tenant_secrets in the same transaction; a PUT replaces the record, so one not given again is removed.
   */
  async put(tenantId: string, input: MsgappProviderInput): Promise<MsgappProvider> {
    const f = normalizeMsgappInput(input);
    if (MSGAPP_SECRETS.some((s) => input[s]) && !this.secrets?.box.canSeal) throw Errors.SECRETS_UNAVAILABLE();
    // A URL the caller chose; the carrier's own production address (type C's default) is ours, checked at each connection.
    if (input.base_url) await this.outbound.checkUrl('base_url', input.base_url, ['https:', 'http:']);
    const row = await inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<Row>(
        `INSERT INTO msgapp_providers (${COLUMNS})
         SELECT t.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, now() FROM tenants t WHERE t.id = $1
         ON CONFLICT (tenant_id) DO UPDATE SET type = EXCLUDED.type, provider = EXCLUDED.provider, enabled = EXCLUDED.enabled,
           base_url = EXCLUDED.base_url, api_key_ref = EXCLUDED.api_key_ref, business_device_id = EXCLUDED.business_device_id,
           template_id = EXCLUDED.template_id, access_token_ref = EXCLUDED.access_token_ref, phone_number_id = EXCLUDED.phone_number_id,
           template_name = EXCLUDED.template_name, callback_secret_ref = EXCLUDED.callback_secret_ref,
           api_key_set = EXCLUDED.api_key_set, access_token_set = EXCLUDED.access_token_set, callback_secret_set = EXCLUDED.callback_secret_set, updated_at = now()
         RETURNING ${COLUMNS}`,
        [tenantId, f.type, f.provider, f.enabled, f.base_url, f.api_key_ref, f.business_device_id, f.template_id,
          f.access_token_ref, f.phone_number_id, f.template_name, f.callback_secret_ref, f.api_key_set, f.access_token_set, f.callback_secret_set]);
      if (!rows[0]) return undefined;
      for (const s of MSGAPP_SECRETS) {
        const plain = input[s];
        if (plain) await this.secrets!.put(c, tenantId, `msgapp_provider.${s}`, plain);
        else await this.secrets?.remove(c, tenantId, `msgapp_provider.${s}`);
      }
      return rows[0];
    });
    if (!row) throw Errors.TENANT_NOT_FOUND();
    this.onChange(tenantId);
    return toRecord(row);
  }

  /** Where `rec`'s secret is found at send (or check) time: sealed inline, or its env:// reference; null: neither. */
  async secretOf(rec: MsgappProvider, s: MsgappSecret): Promise<SecretSource | null> {
    if (rec[`${s}_set`]) return (await this.secrets?.source(rec.tenant_id, `msgapp_provider.${s}`)) ?? (() => null);
    const ref = rec[`${s}_ref`];
    return ref ? () => resolveEnvRef(ref) : null;
  }

  async get(tenantId: string): Promise<MsgappProvider | null> {
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM msgapp_providers WHERE tenant_id = $1`, [tenantId]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(): Promise<MsgappProvider[]> {
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM msgapp_providers ORDER BY tenant_id`);
    return rows.map(toRecord);
  }
}

function toRecord(r: Row): MsgappProvider {
  return { ...r, updated_at: r.updated_at.toISOString() };
}
