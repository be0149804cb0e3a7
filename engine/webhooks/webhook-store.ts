import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import type { EventType } from '../events/types.js';
import { newId } from '../ids.js';
import type { OutboundPolicy } from '../net/outbound-target.js';
import { keys, WEBHOOK_GROUP } from '../redis/keys.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { inTransaction, type Pool } from '../store/postgres.js';
import { wellFormedSecret, type SigningSecrets } from './webhook-signature.js';

/** The event types a subscription may name: the eight webhook events of the contract, in its order. */
export const WEBHOOK_EVENTS = [
  'session.start', 'session.end', 'auth.success', 'auth.failure',
  'voucher.redeemed', 'sponsor.approved', 'sponsor.rejected', 'device.new',
] as const satisfies readonly EventType[];
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A subscription as the API answers it; the secret is never part of it. */
export interface Webhook {
  id: string;
  url: string;
  events: WebhookEvent[];
  active: boolean;
  created_at: string;
  /** 'gone' when the receiver's 410 disabled it; null while active. */
  disabled_reason: string | null;
  /** Until when the previous secret signs too (a rotation's overlap); null: none. */
  previous_secret_until: string | null;
}

export interface WebhookInput {
  url: string;
  events: WebhookEvent[];
  secret: string;
}

/** What the dispatcher needs to send to a subscription. */
export interface WebhookTarget {
  url: string;
  secrets: SigningSecrets;
}

interface Row {
  id: string; url: string; events: string[]; active: boolean; created_at: Date;
  disabled_reason: string | null; previous_until: Date | null;
}

const COLUMNS = 'id, url, events, active, created_at, disabled_reason, previous_until';
const secretName = (id: string): string => `webhook.${id}`;
const previousName = (id: string): string => `webhook.${id}.previous`;
const URL_PROTOCOLS = ['https:', 'http:'] as const;

function toWebhook(r: Row, now: number): Webhook {
  return {
    id: r.id, url: r.url, events: r.events as WebhookEvent[], active: r.active, created_at: r.created_at.toISOString(),
    disabled_reason: r.disabled_reason,
    previous_secret_until: r.previous_until && r.previous_until.getTime() > now ? r.previous_until.toISOString() : null,
  };
}

/**
 * Webhook subscriptions: rows in Postgres (the truth), secrets sealed in
 * tenant_secrets (engine/secrets/), and the active ones mirrored into the
 * tenant's Redis hash the routing script reads (add-webhook-2.lua,
 * remove-webhook-2.lua). A mirror write that fails after the commit is
 * repaired by reconcile(), which the dispatcher runs every few seconds.
 */
export class WebhookStore {
  constructor(
    private readonly pool: Pool,
    private readonly redis: Redis,
    private readonly secrets: SecretStore,
    private readonly outbound: OutboundPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  /** Checks the URL (outbound policy: 400 target_not_allowed) and stores the subscription with its secret sealed. */
  async create(tenantId: string, input: WebhookInput): Promise<Webhook> {
    if (!wellFormedSecret(input.secret)) {
      throw Errors.VALIDATION_FAILED('secret: a whsec_ secret must be followed by base64 of at least 16 bytes', [{ field: 'secret', message: 'invalid' }]);
    }
    await this.outbound.checkUrl('url', input.url, URL_PROTOCOLS);
    // After the request's own checks: a refused target is said as such whether or not secrets can be kept here.
    if (!this.secrets.box.canSeal) throw Errors.WEBHOOK_SECRET_UNSEALABLE();
    const u = new URL(input.url);
    // Credentials in the URL would be stored, listed and audited in clear, and never sent (no userinfo on the wire): refused.
    if (u.username || u.password) {
      throw Errors.VALIDATION_FAILED('url must not carry credentials (user:password@); the signature authenticates deliveries', [{ field: 'url', message: 'invalid' }]);
    }
    const id = newId('whk_');
    const events = [...new Set(input.events)];
    const row = await inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<Row>(
        `INSERT INTO webhooks (tenant_id, id, url, events, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${COLUMNS}`,
        [tenantId, id, input.url, events, new Date(this.now())]);
      await this.secrets.put(c, tenantId, secretName(id), input.secret);
      return rows[0]!;
    });
    await this.redis.addWebhookV1(keys.webhookSubs(tenantId), keys.events(tenantId), id, events.join(','), WEBHOOK_GROUP);
    return toWebhook(row, this.now());
  }

  async list(tenantId: string): Promise<Webhook[]> {
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
    const now = this.now();
    return rows.map((r) => toWebhook(r, now));
  }

  /** The tenant's subscription; 404 webhook_not_found for another tenant's id as for none. */
  async get(tenantId: string, id: string): Promise<Webhook> {
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM webhooks WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    if (!rows[0]) throw Errors.WEBHOOK_NOT_FOUND();
    return toWebhook(rows[0], this.now());
  }

  /** Deletes the subscription and its secrets; deliveries still owed to it are dropped when claimed. */
  async delete(tenantId: string, id: string): Promise<Webhook> {
    // The routing mirror first: a mirror entry left for a row already gone would keep the consumer group (and so the
    // events stream untrimmed) for ever, since reconcile visits only tenants with rows; a mirror entry missing for a
    // row still there (the delete below failed) is put back by reconcile.
    await this.redis.removeWebhookV1(keys.webhookSubs(tenantId), keys.events(tenantId), id, WEBHOOK_GROUP);
    const row = await inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<Row>(`DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [tenantId, id]);
      if (!rows[0]) throw Errors.WEBHOOK_NOT_FOUND();
      await this.secrets.remove(c, tenantId, secretName(id));
      await this.secrets.remove(c, tenantId, previousName(id));
      return rows[0];
    });
    await this.redis.del(keys.webhookAttempts(tenantId, id));
    return toWebhook(row, this.now());
  }

  /**
   * A new secret; the one it replaces keeps signing beside it for
   * `overlapSec` (0: replaced at once), so receivers can switch without a
   * delivery that fails their check.
   */
  async rotateSecret(tenantId: string, id: string, secret: string, overlapSec: number): Promise<Webhook> {
    if (!this.secrets.box.canSeal) throw Errors.WEBHOOK_SECRET_UNSEALABLE();
    if (!wellFormedSecret(secret)) {
      throw Errors.VALIDATION_FAILED('secret: a whsec_ secret must be followed by base64 of at least 16 bytes', [{ field: 'secret', message: 'invalid' }]);
    }
    const until = overlapSec > 0 ? new Date(this.now() + overlapSec * 1000) : null;
    const row = await inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<Row>(
        `UPDATE webhooks SET previous_until = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [tenantId, id, until]);
      if (!rows[0]) throw Errors.WEBHOOK_NOT_FOUND();
      const old = await this.secrets.source(tenantId, secretName(id));
      const oldPlain = old?.() ?? null;
      if (until && oldPlain !== null) await this.secrets.put(c, tenantId, previousName(id), oldPlain);
      else await this.secrets.remove(c, tenantId, previousName(id));
      await this.secrets.put(c, tenantId, secretName(id), secret);
      return rows[0];
    });
    return toWebhook(row, this.now());
  }

  /** Marks it inactive (the receiver answered 410) and stops routing events to it. */
  async disable(tenantId: string, id: string, reason: string): Promise<void> {
    await this.pool.query('UPDATE webhooks SET active = false, disabled_reason = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 AND active',
      [tenantId, id, reason]);
    await this.redis.removeWebhookV1(keys.webhookSubs(tenantId), keys.events(tenantId), id, WEBHOOK_GROUP);
  }

  /**
   * URL and signing secrets of an active subscription; null when it is gone or inactive; `secret_unavailable` when its
   * secret does not open (its key was dropped from SECRETS_KEY_OLD): what is owed to it is then dead-lettered, not lost.
   */
  async target(tenantId: string, id: string): Promise<WebhookTarget | null | 'secret_unavailable'> {
    const { rows } = await this.pool.query<{ url: string; active: boolean; previous_until: Date | null }>(
      'SELECT url, active, previous_until FROM webhooks WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    const r = rows[0];
    if (!r || !r.active) return null;
    const current = (await this.secrets.source(tenantId, secretName(id)))?.() ?? null;
    if (current === null) return 'secret_unavailable';
    const previous = r.previous_until && r.previous_until.getTime() > this.now()
      ? (await this.secrets.source(tenantId, previousName(id)))?.() ?? null
      : null;
    return { url: r.url, secrets: { current, previous } };
  }

  /** Tenants with an active subscription. */
  async activeTenants(): Promise<string[]> {
    const { rows } = await this.pool.query<{ tenant_id: string }>('SELECT DISTINCT tenant_id FROM webhooks WHERE active');
    return rows.map((r) => r.tenant_id);
  }

  /**
   * Repairs the Redis mirror of the active subscriptions from Postgres: adds
   * what is missing (a mirror write lost after its commit, a Redis that
   * restarted empty) and removes what Postgres no longer has active, but
   * only entries older than `graceMs`, so a subscription being created right
   * now (mirrored before this read saw its row) is not taken away.
   */
  async reconcile(graceMs = 30_000): Promise<void> {
    const { rows } = await this.pool.query<{ tenant_id: string; id: string; events: string[] }>('SELECT tenant_id, id, events FROM webhooks WHERE active');
    const want = new Map<string, Map<string, string[]>>();
    for (const r of rows) {
      let m = want.get(r.tenant_id);
      if (!m) want.set(r.tenant_id, (m = new Map()));
      m.set(r.id, r.events);
    }
    const tenants = new Set([...want.keys(), ...(await this.mirroredTenants())]);
    const cutoff = this.now() - graceMs;
    for (const tenantId of tenants) {
      const have = await this.redis.hgetall(keys.webhookSubs(tenantId));
      const m = want.get(tenantId) ?? new Map<string, string[]>();
      for (const [id, events] of m) {
        if (!(id in have)) await this.redis.addWebhookV1(keys.webhookSubs(tenantId), keys.events(tenantId), id, events.join(','), WEBHOOK_GROUP);
      }
      for (const [id, v] of Object.entries(have)) {
        if (!m.has(id) && Number(v.slice(0, v.indexOf(' '))) < cutoff) {
          await this.redis.removeWebhookV1(keys.webhookSubs(tenantId), keys.events(tenantId), id, WEBHOOK_GROUP);
        }
      }
    }
  }

  /** Tenants that had a subscription mirrored, from Postgres (deleted or disabled rows are gone from `active`). */
  private async mirroredTenants(): Promise<string[]> {
    const { rows } = await this.pool.query<{ tenant_id: string }>('SELECT DISTINCT tenant_id FROM webhooks WHERE NOT active');
    return rows.map((r) => r.tenant_id);
  }
}
