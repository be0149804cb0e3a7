import { createHmac, timingSafeEqual } from 'node:crypto';
import { Errors } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { MsgappType } from './msgapp-provider.js';
import type { MsgappProviderStore } from './msgapp-provider-store.js';
import type { ProviderRegistry } from './provider-registry.js';
import type { DeliveryReceiver } from './types.js';

/**
 * The delivery-callback path names, one per provider, and how each proves
 * it is the provider. The secret is the tenant record's
 * `callback_secret_ref` (env://NAME) or its inline `callback_secret`, configured at the provider too:
 *  - `netgsm` (type C): Netgsm does not sign its reports, so the callback URL
 *    registered there carries the secret as `?token=`; compared in constant time.
 *  - `msgapp-a`: `X-Signature-256: sha256=<hex HMAC-SHA256(raw body, secret)>`,
 *    the scheme our own webhook deliveries are signed with.
 *  - `msgapp-b`: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(raw body, app secret)>`,
 *    as the business-messaging cloud APIs sign their webhooks.
 * A callback without a configured secret is refused: unverifiable is unsigned.
 */
export const DELIVERY_PROVIDERS = { netgsm: 'C', 'msgapp-a': 'A', 'msgapp-b': 'B' } as const satisfies Record<string, MsgappType>;
export type DeliveryProvider = keyof typeof DELIVERY_PROVIDERS;

/** What the route read from the request, synchronously. */
export interface PresentedCallback {
  tenantId: string;
  /** `?token=` (netgsm). */
  token: string;
  /** `X-Signature-256` (msgapp-a) or `X-Hub-Signature-256` (msgapp-b). */
  signature: string;
  raw: Buffer | null;
  body: unknown;
}

/** True when the request proves knowledge of `secret` the way `provider` does. */
export function callbackAuthentic(provider: DeliveryProvider, secret: string, p: Pick<PresentedCallback, 'token' | 'signature' | 'raw'>): boolean {
  if (provider === 'netgsm') return sameBytes(p.token, secret);
  const expected = 'sha256=' + createHmac('sha256', secret).update(p.raw ?? Buffer.alloc(0)).digest('hex');
  return sameBytes(p.signature.toLowerCase(), expected);
}

function sameBytes(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // Lengths differ: unequal; timingSafeEqual needs equal lengths, and a length leaks nothing of an HMAC.
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/**
 * The provider message ids a callback reports as delivered. Shapes (documented
 * assumptions where no public contract fixes them):
 *  - netgsm: `{jobid, status}` or an array of them; status 1 (or "delivered") is delivered.
 *  - msgapp-a: `{message_id, status}` or `{events: [...]}` of them; status "delivered" or "read".
 *  - msgapp-b: `{entry: [{changes: [{value: {statuses: [{id, status}]}}]}]}`; status "delivered" or "read".
 */
export function deliveredRefs(provider: DeliveryProvider, body: unknown): string[] {
  const out: string[] = [];
  const each = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
  const str = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' ? v as Record<string, unknown> : {});
  if (provider === 'netgsm') {
    for (const r of each(body).map(obj)) if (str(r.jobid) && ['1', 'delivered'].includes(str(r.status))) out.push(str(r.jobid));
  } else if (provider === 'msgapp-a') {
    const b = obj(body);
    for (const r of each(b.events ?? body).map(obj)) if (str(r.message_id) && ['delivered', 'read'].includes(str(r.status))) out.push(str(r.message_id));
  } else {
    for (const e of each(obj(body).entry).map(obj)) {
      for (const c of each(e.changes).map(obj)) {
        for (const s of each(obj(c.value).statuses).map(obj)) if (str(s.id) && ['delivered', 'read'].includes(str(s.status))) out.push(str(s.id));
      }
    }
  }
  return out;
}

/**
 * Checks a delivery callback and reports each delivered message to the OTP
 * flows. Every refusal (unknown tenant, wrong provider type, no secret, bad
 * signature) is the same 401, so the endpoint tells a prober nothing.
 */
export class DeliveryCallbacks {
  /** `receiver` is the OTP service: a delivered code cancels its fallback. */
  constructor(
    private readonly store: MsgappProviderStore, private readonly registry: ProviderRegistry, private readonly log: Logger,
    private readonly receiver: DeliveryReceiver,
  ) {}

  /** Returns how many of the reported messages named a request of ours. */
  async handle(provider: DeliveryProvider, p: PresentedCallback): Promise<number> {
    const rec = p.tenantId ? await this.store.get(p.tenantId) : null;
    const secret = rec ? ((await this.store.secretOf(rec, 'callback_secret')) ?? (() => null))() : null;
    if (!rec || rec.type !== DELIVERY_PROVIDERS[provider] || !secret || !callbackAuthentic(provider, secret, p)) {
      this.log.warn({ provider, tenant_id: p.tenantId, configured: Boolean(rec), secret_set: Boolean(secret) }, 'delivery callback refused');
      throw Errors.CALLBACK_REFUSED();
    }
    let matched = 0;
    for (const ref of deliveredRefs(provider, p.body)) {
      const requestId = await this.registry.requestFor(p.tenantId, rec.provider, ref);
      if (!requestId) continue;
      await this.receiver.delivered(p.tenantId, requestId, 'msgapp');
      matched++;
    }
    return matched;
  }
}
