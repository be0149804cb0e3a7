import { isMainThread, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { OutboundHttp } from '../engine/net/outbound-http.js';
import { OutboundPolicy } from '../engine/net/outbound-target.js';
import { deliveryBody } from '../engine/webhooks/webhook-attempt-parts.js';
import { signedHeaders } from '../engine/webhooks/webhook-signature.js';
import { OutboundWebhookTransport } from '../engine/webhooks/webhook-transport.js';

/**
 * The floor of a webhook delivery (bench/webhooks.ts), on a thread of
 * verify-floor.ts's process: the least code that delivers the session.start
 * events the floor's sign-ins write, durably and at least once, so the
 * service's verify ratio during a delivery burst can be read against the
 * floor's own in the same run. Honest both ways:
 *
 * - What it does, as the service does it: the event written in the sign-in's
 *   own script (verify-floor.ts, FLOOR_WEBHOOK_URL set); read through a
 *   consumer group, whose pending list is the durable list of what is owed
 *   (what it read and did not acknowledge is read first after a restart);
 *   64 deliveries in flight (WEBHOOK_TENANT_CONCURRENCY's default); the
 *   contract's body and both signatures (the service's deliveryBody and
 *   signedHeaders); a POST through the service's outbound client and
 *   transport (keep-alive, the policy's pinned address, 5 s deadline); on a
 *   2xx the attempt recorded on a capped stream (the deliveries API's recent
 *   attempts) and the entry acknowledged, a batch per turn.
 * - What it leaves out, each a promise of the service: retries with back-off
 *   and their schedule, dead letters, Retry-After, 410 disabling, several
 *   subscriptions and event types (routing), tenants' lanes and their
 *   fairness, leases and tokens for several processes (an answer after a
 *   lost lease), the redelivery API, metrics, and trimming the event stream
 *   (the service's trimmer runs apart, not per delivery). A failed attempt
 *   stays pending and is not tried again.
 *
 * Delivers only while the group exists: the bench creates it at `$` to
 * subscribe (events before that are not owed) and destroys it to stop.
 */

/** The thread's workerData; `role` tells it from verify-floor.ts's sink thread, which imports this module too. */
export interface WebhookFloorEnv { role: 'webhook-floor'; redisUrl: string; tenant: string; url: string; secret: string }

export const floorEvents = (tenant: string): string => `{t:${tenant}}:floor-ev`;
export const FLOOR_HOOK_GROUP = 'floor-hook';
const IN_FLIGHT = 64;
const ATTEMPTS_KEPT = 1000;
const DEADLINE_MS = 5000;

async function deliverAll(env: WebhookFloorEnv): Promise<void> {
  // The blocking read holds its connection: acknowledgements and attempts go on another.
  const reader = new Redis(env.redisUrl, { maxRetriesPerRequest: 2 });
  const writer = new Redis(env.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
  const transport = new OutboundWebhookTransport(new OutboundHttp({ outbound: new OutboundPolicy({ allowPrivate: true }), maxSocketsPerOrigin: 512 }));
  const key = floorEvents(env.tenant);
  const attempts = `{t:${env.tenant}}:floor-attempts`;
  const secrets = { current: env.secret, previous: null };
  let inFlight = 0;
  let room: (() => void) | null = null;
  let done: string[] = [];

  const settle = (): void => {
    const ids = done;
    done = [];
    void writer.xack(key, FLOOR_HOOK_GROUP, ...ids);
  };

  let failures = 0;
  // A failed attempt stays pending, not tried again here: the first few are said, as the bench counts it undelivered.
  const failed = (why: string): void => {
    if (failures++ < 5) process.stderr.write(`webhook floor: an attempt failed: ${why}\n`);
  };

  const deliver = async (id: string, fields: string[]): Promise<void> => {
    const f: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    const ts = Number(f.ts);
    const body = deliveryBody(env.tenant, { e: id, t: f.type!, ts }, f.data ?? '{}');
    const dlv = `dlv_${id}`;
    const started = performance.now();
    try {
      const a = await transport.post(env.url, signedHeaders(dlv, Math.floor(Date.now() / 1000), body, secrets), body, DEADLINE_MS);
      if (a.status < 200 || a.status >= 300) return failed(`answer ${a.status}`);
      void writer.xadd(attempts, 'MAXLEN', '~', ATTEMPTS_KEPT, '*', 'd', dlv, 'n', 1, 'code', a.status, 'ms', Math.round(performance.now() - started));
      if (done.push(id) === 1) setImmediate(settle);
    } catch (err) {
      failed((err as Error).message);
    }
  };

  // After a restart, what this consumer read and did not acknowledge comes first ('0'), then new entries ('>').
  let from = '0';
  for (;;) {
    if (inFlight >= IN_FLIGHT) {
      await new Promise<void>((resolve) => { room = resolve; });
      continue;
    }
    let reply: [string, [string, string[]][]][] | null;
    try {
      reply = (await reader.xreadgroup('GROUP', FLOOR_HOOK_GROUP, 'floor', 'COUNT', IN_FLIGHT - inFlight, 'BLOCK', 100, 'STREAMS', key, from)) as typeof reply;
      from = '>';
    } catch (err) {
      if (!/NOGROUP/.test((err as Error).message)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100)); // not subscribed
      continue;
    }
    for (const [id, fields] of reply?.[0]?.[1] ?? []) {
      inFlight++;
      void deliver(id, fields).finally(() => {
        inFlight--;
        const r = room;
        room = null;
        r?.();
      });
    }
  }
}

if (!isMainThread && (workerData as Partial<WebhookFloorEnv> | null)?.role === 'webhook-floor') {
  deliverAll(workerData as WebhookFloorEnv).catch((err: Error) => {
    process.stderr.write(`webhook floor failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}
