import { randomBytes } from 'node:crypto';
import { AppError, Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { isCluster, nodeFor, type RedisClient } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import type { ActorRequest } from './actor-ports.js';
import type { ReplyValue } from './messages.js';

/**
 * Hands the actor messages a process cannot deliver (the hotspot's lease is
 * another process's) to the owner, over Redis pub/sub: each process listens
 * on its own channel, `actor-inbox:<NODE_ID>` (a channel, not a key: it
 * belongs to no tenant and no slot; on a cluster a PUBLISH reaches every
 * node's subscribers). The owner is whoever `keys.lease` names; it hands the
 * message to its own actor exactly as a local request (ActorPool.request,
 * never forwarded again), and publishes the answer back on the asker's
 * channel. Delivery is at most once: a message published while the owner's
 * subscriber reconnects, or to an owner that just died, is lost, and the
 * asker's wait ends in session_engine_timeout. docs/scale.md, "Forwarding".
 */

/**
 * Which messages are forwarded: what the API and the portal ask of an actor, and a NAS's Access-Requests and
 * accounting (answered by the process the NAS sent them to, from the owner's answer). Not a wake: the owner runs its actor.
 */
export const FORWARDED = new Set<ActorRequest['t']>(['started', 'disconnect', 'extend', 'live', 'auth', 'acct']);

/** How long the asker waits for the owner's answer; then session_engine_timeout (the owner's own wait for its actor is 10 s). */
const ANSWER_TIMEOUT_MS = 12_000;
/**
 * On a cluster, how long the asker waits to hear from the owner at all (its ack, sent as the ask arrives,
 * or its answer); then session_engine_timeout: the lease names a process that died (kill -9) and has
 * not run out yet. On one Redis PUBLISH says whether the owner listens, so the asker needs no ack.
 */
const HEARD_TIMEOUT_MS = 3_000;
/** How often a failed subscription to this process's channel is tried again. */
const SUBSCRIBE_RETRY_MS = 1_000;

type Envelope =
  | { k: 'ask'; id: string; from: string; msg: ActorRequest }
  | { k: 'ack'; id: string }
  | { k: 'answer'; id: string; ok: true; value: ReplyValue | null }
  | { k: 'answer'; id: string; ok: false; code: string; status: number; message: string };

interface Waiting { resolve(v: ReplyValue | undefined): void; reject(e: Error): void; timer: NodeJS.Timeout; answerBy: number }

export interface ActorForwarderOptions {
  /** Reads the lease, publishes. */
  redis: RedisClient;
  /** A connection of its own in subscriber mode (a subscribed connection runs no other command). */
  subscriber: RedisClient;
  nodeId: string;
  log: Logger;
  metrics?: Metrics;
  /** Hands a message to this process's actor, never forwarding it again. */
  local(msg: ActorRequest): Promise<ReplyValue | undefined>;
}

export function inboxChannel(nodeId: string): string {
  return `actor-inbox:${nodeId}`;
}

export class ActorForwarder {
  private readonly waiting = new Map<string, Waiting>();
  private readonly prefix = randomBytes(6).toString('hex');
  private seq = 0;
  private closed = false;
  /** Resolves once this process listens on its channel. */
  readonly ready: Promise<void>;

  constructor(private readonly opts: ActorForwarderOptions) {
    opts.metrics?.counter('actor_messages_forwarded_total', 'Actor messages this process could not deliver and forwarded to the hotspot\'s owner, by outcome', 'outcome');
    opts.metrics?.counter('actor_messages_received_total', 'Actor messages another process forwarded to this one, by type', 'type');
    opts.subscriber.on('message', (channel: string, text: string) => {
      if (channel === inboxChannel(opts.nodeId)) this.heard(text);
    });
    this.ready = this.listen();
  }

  /** Subscribes to this process's channel, again every second until it works (or the forwarder closes). */
  private async listen(): Promise<void> {
    for (let failed = 0; !this.closed; failed++) {
      try {
        await this.opts.subscriber.subscribe(inboxChannel(this.opts.nodeId));
        return;
      } catch (err) {
        if (failed === 0) this.opts.log.error({ err }, 'listening for forwarded actor messages failed; trying again every second');
        await new Promise((r) => setTimeout(r, SUBSCRIBE_RETRY_MS).unref());
      }
    }
  }

  /**
   * Sends a message this process's actor refused (hotspot_owned_elsewhere) to the lease holder and
   * resolves with its actor's answer. No holder, or this process named (the lease just moved): the
   * refusal stands.
   */
  async forward<V extends ReplyValue>(msg: ActorRequest, refusal: AppError): Promise<V> {
    let owner: string | null;
    try {
      owner = await this.opts.redis.get(keys.lease(msg.tenant, msg.hs));
    } catch (err) {
      this.count('failed');
      throw Errors.SERVICE_UNAVAILABLE('Session store').withCause(err);
    }
    if (!owner || owner === this.opts.nodeId || this.closed) {
      this.count('refused');
      throw refusal;
    }
    const id = `${this.prefix}-${++this.seq}`;
    const answer = new Promise<V>((resolve, reject) => {
      const w: Waiting = { resolve: resolve as (v: ReplyValue | undefined) => void, reject, timer: setTimeout(() => this.expire(id), HEARD_TIMEOUT_MS),
        answerBy: Date.now() + ANSWER_TIMEOUT_MS };
      w.timer.unref();
      this.waiting.set(id, w);
    });
    const ask: Envelope = { k: 'ask', id, from: this.opts.nodeId, msg };
    let receivers: number;
    try {
      // Through the connection to the tenant's master (the lease's): one device's messages reach the owner in order also on a cluster.
      receivers = await (await nodeFor(this.opts.redis, keys.lease(msg.tenant, msg.hs))).publish(inboxChannel(owner), JSON.stringify(ask));
    } catch (err) {
      // Per message (a NAS's packet among them): debug only; Redis being away is reported elsewhere (readyz, its own logs).
      this.count('failed');
      this.settle(id)?.reject(Errors.SERVICE_UNAVAILABLE('Session store'));
      this.opts.log.debug({ err, hotspot: msg.hs }, 'forwarding an actor message failed');
      return answer;
    }
    // On one Redis PUBLISH counts the listeners: none, the holder is gone (its lease not run out yet) and the refusal stands
    // at once; one, the holder is alive and the asker waits for its answer (a stalled holder answers late, not twice).
    // On a cluster it counts only those of the node it went to, so the asker waits to hear (HEARD_TIMEOUT_MS).
    if (!isCluster(this.opts.redis)) {
      if (receivers === 0) {
        this.count('refused');
        this.settle(id)?.reject(refusal);
      } else {
        this.heardFrom(id);
      }
    }
    return answer;
  }

  /** No word from the owner in time, or no answer by its deadline: the asker's wait ends. */
  private expire(id: string): void {
    const w = this.settle(id);
    if (!w) return;
    this.count('timeout');
    w.reject(Errors.SESSION_ENGINE_TIMEOUT());
  }

  /** Stops listening; answers still awaited fail as a restart's would. */
  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.waiting.keys()]) this.settle(id)?.reject(Errors.SESSION_ENGINE_RESTARTING());
    this.opts.subscriber.disconnect();
  }

  private heard(text: string): void {
    let env: Envelope;
    try {
      env = JSON.parse(text) as Envelope;
    } catch {
      return;
    }
    if (env.k === 'ack') {
      this.heardFrom(env.id);
      return;
    }
    if (env.k === 'answer') {
      const w = this.settle(env.id);
      if (!w) return; // timed out meanwhile
      this.count(env.ok ? 'answered' : 'refused');
      if (env.ok) w.resolve(env.value ?? undefined);
      else w.reject(AppError.fromWire(env.code, env.status, env.message));
      return;
    }
    if (env.k !== 'ask' || !FORWARDED.has(env.msg?.t)) return;
    this.opts.metrics?.inc('actor_messages_received_total', env.msg.t);
    const publish = (a: Envelope): void => {
      this.opts.redis.publish(inboxChannel(env.from), JSON.stringify(a))
        .catch((err: unknown) => this.opts.log.debug({ err }, 'answering a forwarded actor message failed'));
    };
    // On a cluster the asker cannot tell from its PUBLISH that this process listens: it hears so at once.
    if (isCluster(this.opts.redis)) publish({ k: 'ack', id: env.id });
    const reply = publish;
    // A NAS's packet handled here because another process received it: the hotspot follows its NASes, not this hop.
    const msg = env.msg.t === 'auth' || env.msg.t === 'acct' ? { ...env.msg, forwarded: true } : env.msg;
    this.opts.local(msg).then(
      (value) => reply({ k: 'answer', id: env.id, ok: true, value: value ?? null }),
      (err: unknown) => {
        const e = err instanceof AppError ? err : Errors.INTERNAL();
        reply({ k: 'answer', id: env.id, ok: false, code: e.code, status: e.status, message: e.message });
      });
  }

  /** The owner is alive and has the message: from now on the asker waits for the answer's own deadline. */
  private heardFrom(id: string): void {
    const w = this.waiting.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    w.timer = setTimeout(() => this.expire(id), Math.max(0, w.answerBy - Date.now()));
    w.timer.unref();
  }

  private settle(id: string): Waiting | undefined {
    const w = this.waiting.get(id);
    if (!w) return undefined;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    return w;
  }

  private count(outcome: 'answered' | 'refused' | 'timeout' | 'failed'): void {
    this.opts.metrics?.inc('actor_messages_forwarded_total', outcome);
  }
}
