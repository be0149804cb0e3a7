import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { deliveryList, deliveryQuery, redelivered, webhook, webhookCreate, webhookList, webhookRotate } from './webhooks.schemas.js';

/** Webhook subscriptions (docs/webhooks.md): the public API, API key or operator JWT. */
export function webhookRoutes(engine: Engine): Route[] {
  const store = engine.webhooks;
  const deliveries = engine.webhookDeliveries;
  return [
    route({
      method: 'post', path: '/v1/webhooks', surface: 'public', auth: true, module: 'webhooks', bodySchema: webhookCreate, responseSchema: webhook, status: 201,
      summary: 'Subscribe a URL to event types; deliveries are signed with the secret (never returned)',
      errors: { 400: 'target_not_allowed, validation_failed', 503: 'secrets_unavailable' },
      handler: async ({ principal, body }) => {
        const w = await store.create(principal.tenant.id, body);
        engine.webhooksChanged();
        return { status: 201, body: w };
      },
      audit: (_ctx, out) => ({ event: 'webhook_created', details: { webhook_id: out.id, url: out.url, events: out.events } }),
    }),
    route({
      method: 'get', path: '/v1/webhooks', surface: 'public', auth: true, module: 'webhooks', responseSchema: webhookList,
      summary: "List the tenant's webhook subscriptions",
      handler: async ({ principal }) => ({ status: 200, body: { data: await store.list(principal.tenant.id) } }),
    }),
    route({
      method: 'get', path: '/v1/webhooks/:id', surface: 'public', auth: true, module: 'webhooks', responseSchema: webhook,
      summary: 'Read a webhook subscription', errors: { 404: 'webhook_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await store.get(principal.tenant.id, params[0]!) }),
    }),
    route({
      method: 'del', path: '/v1/webhooks/:id', surface: 'public', auth: true, module: 'webhooks', responseSchema: webhook,
      summary: 'Delete a webhook subscription; deliveries still owed to it are not sent', errors: { 404: 'webhook_not_found' },
      handler: async ({ principal, params }) => {
        const w = await store.delete(principal.tenant.id, params[0]!);
        engine.webhooksChanged();
        return { status: 200, body: w };
      },
      audit: (_ctx, out) => ({ event: 'webhook_deleted', details: { webhook_id: out.id, url: out.url } }),
    }),
    route({
      method: 'post', path: '/v1/webhooks/:id/rotate-secret', surface: 'public', auth: true, module: 'webhooks', bodySchema: webhookRotate,
      responseSchema: webhook,
      summary: 'Replace the signing secret; during overlap_sec both signatures are sent (space-separated in each signature header)',
      errors: { 404: 'webhook_not_found', 503: 'secrets_unavailable' },
      handler: async ({ principal, params, body }) => {
        const w = await store.rotateSecret(principal.tenant.id, params[0]!, body.secret, body.overlap_sec);
        engine.webhooksChanged();
        return { status: 200, body: w };
      },
      audit: ({ body }, out) => ({ event: 'webhook_secret_rotated', details: { webhook_id: out.id, overlap_sec: body.overlap_sec } }),
    }),
    route({
      method: 'get', path: '/v1/webhooks/:id/deliveries', surface: 'public', auth: true, module: 'webhooks', querySchema: deliveryQuery,
      responseSchema: deliveryList,
      summary: 'Recent delivery attempts, newest first (status, answer code, duration, error); status=dead lists the dead letters',
      errors: { 404: 'webhook_not_found' },
      handler: async ({ principal, params, q }) => ({
        status: 200, body: { data: await deliveries.list(principal.tenant.id, params[0]!, q.status, q.limit) },
      }),
    }),
    route({
      method: 'post', path: '/v1/webhooks/:id/deliveries/:delivery/redeliver', surface: 'public', auth: true, module: 'webhooks',
      responseSchema: redelivered, status: 202,
      summary: 'Send a kept delivery (dead, delivered within a day, or owed) again now: same delivery id, a fresh budget of 3 attempts',
      errors: { 404: 'webhook_not_found, webhook_delivery_not_found', 409: 'webhook_inactive: the subscription is disabled (its receiver answered 410)' },
      handler: async ({ principal, params }) => ({ status: 202, body: await deliveries.redeliver(principal.tenant.id, params[0]!, params[1]!) }),
      audit: ({ params }) => ({ event: 'webhook_redelivered', details: { webhook_id: params[0], delivery_id: params[1] } }),
    }),
  ];
}
