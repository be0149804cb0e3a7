import type { RedisClient as Redis } from '../redis/redis-client.js';
import { AppError, Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import { keys } from '../redis/keys.js';
import { AuthMirrorWriter } from './auth-mirror.js';
import { HotspotActor, type ActorContext, type TimedSession } from './hotspot-actor.js';
import type { FromThread, NasCommand, ReplyValue, Request, ToThread } from './messages.js';
import type { NasCommandResult } from './ports.js';
import { SessionStore } from './session-store.js';
import { TimerWheel } from './timer-wheel.js';

/** Most messages in flight per actor; beyond it the host answers busy (RADIUS then retransmits). */
const MAILBOX_LIMIT = 20_000;
/** A hotspot lease's default time to live (HOTSPOT_LEASE_MS), renewed every third of it. */
const LEASE_TTL_MS = 30_000;
/**
 * A hotspot another process holds is asked for again on the clock when the
 * holder's lease runs out (the script says when), and, while its requests
 * reach this process, on a request at most this often (the holder may have
 * let it go early).
 */
const LEASE_RETRY_MS = 1_000;
/**
 * How long this process keeps its place next in line past the lease it waits
 * for (renew-lease-2.lua): its clock asks at the lease's end, late by a tick
 * or a busy machine's stall at most.
 */
const LEASE_QUEUE_GRACE_MS = 10_000;
const TICK_MS = 250;
const STATS_MS = 2_000;
/** The supervisor stops reloading an actor that fails more often than this per minute. */
const MAX_RESTARTS_PER_MIN = 10;

/** What the host asks of an actor: HotspotActor's lifecycle and handlers (a test may host a stand-in). */
export type HostedActor = Pick<HotspotActor,
  'tenant' | 'hs' | 'size' | 'load' | 'release' | 'sweep' | 'auth' | 'acct' | 'started' | 'disconnect' | 'extend' | 'live'>;

export interface ActorHostOptions {
  /** Registered scripts (createRedis): the host takes and renews hotspot leases with renewLeaseV2. */
  redis: Redis;
  /** This process's name on the leases. */
  nodeId: string;
  /** How long a lease outlives the last renewal (HOTSPOT_LEASE_MS; default 30 s), renewed every third of it. */
  leaseMs?: number;
  log: Logger;
  /** Carries one batch of messages to the main thread (one per event loop turn at most). */
  send(batch: FromThread[]): void;
  /** Hands the auth mirror's table to the main thread; shared, so outside the batches. Absent: no mirror. */
  publishMirror?(table: SharedArrayBuffer): void;
  store?: SessionStore;
  now?: () => number;
  mailboxLimit?: number;
  /** Builds the actor of a hotspot; HotspotActor unless a test hosts something else. */
  createActor?(tenant: string, hs: string, tz: string, ctx: ActorContext): HostedActor;
}

interface Slot {
  actor: HostedActor;
  ready: Promise<boolean>;
  owned: boolean;
  leaseCheckedAt: number;
  /** While not owned: when the clock asks for the lease again (Infinity while an ask is in flight). */
  leaseRetryAt: number;
  /** When this process last gave the lease up to the process next in line (renew-lease-2.lua ARGV[5]); 0: it did not. */
  yieldedAt: number;
  /**
   * When a NAS's request (Access-Request, accounting) for the hotspot last arrived: this process
   * serves it, so it queues for the lease; a holder it has not reached for a lease's time yields.
   */
  servedAt: number;
  /**
   * When the current run of the NAS's requests began (no gap longer than a third of a lease): only
   * a process its NASes have kept talking to for that long queues for the lease (`serves`), so one
   * stray retransmission to a secondary does not pull a quiet hotspot away from its holder.
   */
  streakFrom: number;
  /** The tail of each device's (or sweep's) chain of work: one device's messages run in order. */
  chains: Map<string, Promise<void>>;
  inflight: number;
  restarts: number[];
}

/**
 * Hotspot actors hosted on one thread: a slot per hotspot with its lease,
 * a bounded mailbox chained per device, a supervisor that reloads a failing
 * actor from Redis, one wheel and one clock for all of them, and replies
 * batched per event loop turn. Holds nothing of the thread itself (the
 * thread entry, actor-thread.ts, wires it to its port), so a test drives it
 * directly.
 */
export class ActorHost {
  private readonly slots = new Map<string, Slot>();
  private readonly wheel: TimerWheel<TimedSession>;
  private readonly ctx: ActorContext;
  private readonly now: () => number;
  private readonly mailboxLimit: number;
  private readonly leaseMs: number;
  private readonly outbox: FromThread[] = [];
  private flushQueued = false;
  private readonly nasWaiters = new Map<number, (r: NasCommandResult) => void>();
  private nasSeq = 0;
  /** Set by releaseLeases: no lease is taken any more (a request still arriving gets 503). */
  private stopping = false;
  private lastRenew: number;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly opts: ActorHostOptions) {
    this.now = opts.now ?? Date.now;
    this.mailboxLimit = opts.mailboxLimit ?? MAILBOX_LIMIT;
    this.leaseMs = opts.leaseMs ?? LEASE_TTL_MS;
    this.lastRenew = this.now();
    this.wheel = new TimerWheel<TimedSession>(this.now());
    const publish = opts.publishMirror;
    this.ctx = {
      store: opts.store ?? new SessionStore(opts.redis),
      wheel: this.wheel,
      log: opts.log,
      mirror: publish ? new AuthMirrorWriter((table) => publish(table)) : undefined,
      now: this.now,
      nas: (cmd: Omit<NasCommand, 't' | 'id'>): Promise<NasCommandResult> => new Promise((resolve) => {
        const id = ++this.nasSeq;
        this.nasWaiters.set(id, resolve);
        this.post({ t: 'nas', id, ...cmd });
      }),
    };
  }

  /** Starts the clock (due sessions, sweeps, lease renewal) and the stats report. */
  start(): void {
    if (this.timers.length) return;
    this.timers.push(setInterval(() => this.tick(), TICK_MS));
    const stats = setInterval(() => this.post({ t: 'stats', ...this.stats() }), STATS_MS);
    stats.unref();
    this.timers.push(stats);
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /**
   * A graceful stop (SIGTERM): the clock stops, no lease is taken from now on, the asks in flight and
   * the work each owned actor has in flight end, then every lease this host holds is given up, with its
   * place in line for others (release-lease-2.lua), so the process the hotspots' NASes reach now takes
   * them at once rather than a lease time later. Resolves to how many were given up; a lease Redis did
   * not answer for simply runs out.
   */
  async releaseLeases(): Promise<number> {
    this.stop();
    this.stopping = true;
    const slots = [...this.slots.values()];
    await Promise.allSettled(slots.map((s) => s.ready));
    const given = await Promise.all(slots.map(async (slot) => {
      const held = slot.owned;
      await Promise.allSettled(slot.chains.values());
      slot.owned = false;
      slot.ready = Promise.resolve(false);
      if (held) slot.actor.release();
      const { tenant, hs } = slot.actor;
      try {
        return await this.opts.redis.releaseLeaseV1(keys.lease(tenant, hs), keys.leaseNext(tenant, hs), this.opts.nodeId);
      } catch (err) {
        this.opts.log.warn({ err, hotspot: hs }, 'giving a hotspot\'s lease up at stop failed; it runs out instead');
        return 0;
      }
    }));
    return given.reduce((n, x) => n + x, 0);
  }

  /** Sessions and actors this host holds (metrics, memory benchmark). */
  stats(): { sessions: number; actors: number } {
    let sessions = 0;
    for (const s of this.slots.values()) sessions += s.actor.size;
    return { sessions, actors: this.slots.size };
  }

  /** One decoded batch from the main thread. */
  receive(batch: readonly ToThread[]): void {
    for (const m of batch) {
      if (m.t === 'nas_result') {
        this.nasWaiters.get(m.id)?.(m.result);
        this.nasWaiters.delete(m.id);
      } else {
        this.onRequest(m);
      }
    }
  }

  /** The clock: due sessions go through their actor's per-device chain like any message; leases are renewed. */
  tick(): void {
    const now = this.now();
    this.wheel.advance(now, (s) => {
      const slot = this.slots.get(`${s.actor.tenant}/${s.actor.hs}`);
      if (slot) this.enqueue(slot, s.mac, () => s.actor.due(s), null);
    });
    for (const slot of this.slots.values()) {
      if (slot.owned) this.enqueue(slot, '#sweep', () => slot.actor.sweep(), null);
      else if (now >= slot.leaseRetryAt) this.retake(slot, now);
    }
    if (now - this.lastRenew >= this.leaseMs / 3) {
      this.lastRenew = now;
      for (const slot of this.slots.values()) if (slot.owned) this.renew(slot);
    }
  }

  private renew(slot: Slot): void {
    // Asked as one that serves the hotspot: if another process took it, this one is next in line.
    // None of its requests reached this process for a lease's time: if another process is next in
    // line (they reach that one: its NAS failed over there and stayed), the hotspot goes to it.
    const idle = this.now() - slot.servedAt >= this.leaseMs;
    this.lease(slot, true, idle).then((held) => {
      if (held) return;
      if (this.yielded(slot)) this.opts.log.info({ hotspot: slot.actor.hs }, 'hotspot handed to the process its requests reach; releasing the actor');
      else this.opts.log.warn({ hotspot: slot.actor.hs }, 'lease lost to another process; releasing the actor');
      slot.owned = false;
      // Requests now get 503 (hotspot_owned_elsewhere), instead of reaching an actor that holds
      // nothing, until the lease is taken back (retake, run).
      slot.ready = Promise.resolve(false);
      slot.actor.release();
    }, (err: unknown) => this.opts.log.warn({ err }, 'lease renewal failed'));
  }

  /**
   * Takes or keeps the hotspot's lease (renew-lease-2.lua). Refused, it notes
   * when to ask again: when the holder's lease (or the place in line of the
   * process next) runs out, or after a lease's time at most.
   */
  private async lease(slot: Slot, serving: boolean, yieldToNext = false): Promise<boolean> {
    const { tenant, hs } = slot.actor;
    slot.leaseCheckedAt = this.now();
    slot.leaseRetryAt = Infinity;
    slot.yieldedAt = 0;
    let answer: number;
    try {
      answer = await this.opts.redis.renewLeaseV2(keys.lease(tenant, hs), keys.leaseNext(tenant, hs), this.opts.nodeId,
        this.leaseMs, serving ? 1 : 0, LEASE_QUEUE_GRACE_MS, yieldToNext ? 1 : 0);
    } catch (err) {
      slot.leaseRetryAt = this.now() + LEASE_RETRY_MS; // Redis away: the clock asks again soon
      throw err;
    }
    if (answer === 1) return true;
    if (answer === 0) {
      // Given up to the process next in line (yieldToNext): its place is kept for it, so the clock asks after a lease's time.
      slot.yieldedAt = this.now();
      slot.leaseRetryAt = this.now() + this.leaseMs;
      return false;
    }
    slot.leaseRetryAt = this.now() + Math.min(Math.max(-answer, 1), this.leaseMs);
    return false;
  }

  /** Whether the last ask for the slot's lease gave it up to the process next in line. */
  private yielded(slot: Slot): boolean {
    return slot.yieldedAt > 0;
  }

  /** The clock's ask for the lease of a hotspot held elsewhere: taken back at once when its holder's lease is gone. */
  private retake(slot: Slot, now: number): void {
    slot.ready = this.acquire(slot, this.serves(slot, now)).catch((err: unknown) => {
      this.opts.log.warn({ err, hotspot: slot.actor.hs }, 'taking a hotspot\'s lease back failed');
      return false;
    });
  }

  private post(msg: FromThread): void {
    this.outbox.push(msg);
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      if (this.outbox.length) this.opts.send(this.outbox.splice(0, this.outbox.length));
    });
  }

  private reply(id: number, value: ReplyValue): void {
    this.post({ t: 'reply', id, ok: true, value });
  }

  /** Sends a catalogue error across the thread boundary; the pool rebuilds it as the same AppError. */
  private fail(id: number, e: AppError): void {
    this.post({ t: 'reply', id, ok: false, code: e.code, status: e.status, message: e.message });
  }

  private slotFor(m: Request): Slot {
    const { tenant, hs, tz } = m;
    const key = `${tenant}/${hs}`;
    let slot = this.slots.get(key);
    if (!slot) {
      const actor = this.opts.createActor?.(tenant, hs, tz, this.ctx) ?? new HotspotActor(tenant, hs, tz, this.ctx);
      slot = {
        actor, ready: Promise.resolve(false), owned: false, leaseCheckedAt: 0, leaseRetryAt: Infinity, yieldedAt: 0, servedAt: 0, streakFrom: 0,
        chains: new Map(), inflight: 0, restarts: [],
      };
      this.slots.set(key, slot);
      // Refused, it is not next in line yet: that takes a run of its NASes' requests (serves).
      slot.ready = this.acquire(slot, false);
    }
    return slot;
  }

  /**
   * Whether this process serves the hotspot, so that, refused, it is next in line for the lease: its
   * NASes' requests have reached it without a long gap for a third of a lease, up to now.
   */
  private serves(slot: Slot, now: number): boolean {
    return now - slot.servedAt <= this.leaseMs / 3 && now - slot.streakFrom >= this.leaseMs / 3;
  }

  /** Takes the hotspot's lease and loads its sessions; false while another process owns it. */
  private async acquire(slot: Slot, serving: boolean): Promise<boolean> {
    if (this.stopping) return false;
    slot.owned = await this.lease(slot, serving);
    if (slot.owned) await slot.actor.load();
    return slot.owned;
  }

  private onRequest(m: Request): void {
    const slot = this.slotFor(m);
    // The hotspot's traffic is its NASes' packets. A wake is this process's own doing (its start, a restarted
    // thread); a sign-in's news, an operator's disconnect or a dashboard's read come through whichever process
    // the browser reached: they must not pull the hotspot away from the process its NASes talk to.
    if (fromNas(m)) {
      const now = this.now();
      if (now - slot.servedAt > this.leaseMs / 3) slot.streakFrom = now;
      slot.servedAt = now;
    }
    if (slot.inflight >= this.mailboxLimit) return this.fail(m.id, Errors.HOTSPOT_BUSY());
    this.enqueue(slot, chainKey(m), () => this.run(slot, m), m);
  }

  private async run(slot: Slot, m: Request): Promise<void> {
    let owned = await slot.ready;
    const now = this.now();
    if (!owned && (now >= slot.leaseRetryAt || now - slot.leaseCheckedAt >= LEASE_RETRY_MS)) {
      slot.ready = this.acquire(slot, fromNas(m) && this.serves(slot, now));
      owned = await slot.ready;
    }
    if (!owned) return this.fail(m.id, Errors.HOTSPOT_OWNED_ELSEWHERE());
    const a = slot.actor;
    switch (m.t) {
      case 'auth': return this.reply(m.id, await a.auth(m));
      case 'acct': await a.acct(m); return this.reply(m.id, { done: true });
      case 'started': await a.started(m.mac, m.replaced, m.coa === true); return this.reply(m.id, { done: true });
      case 'disconnect': return this.reply(m.id, await a.disconnect(m));
      case 'extend': return this.reply(m.id, await a.extend(m));
      case 'live': return this.reply(m.id, await a.live(m.sid));
      case 'wake': return this.reply(m.id, { sessions: a.size });
    }
  }

  private enqueue(slot: Slot, key: string, work: () => Promise<void>, m: Request | null): void {
    slot.inflight++;
    const prev = slot.chains.get(key);
    const next = (prev ? prev.then(work) : work()).catch((err: unknown) => {
      if (m) this.supervise(slot, m, err);
      else this.opts.log.error({ err }, 'timer handler failed');
    }).finally(() => {
      slot.inflight--;
      if (slot.chains.get(key) === next) slot.chains.delete(key);
    });
    slot.chains.set(key, next);
  }

  /** The supervisor: a throw is logged and answered, and the actor reloads from Redis (or stops after too many). */
  private supervise(slot: Slot, m: Request, err: unknown): void {
    const { tenant, hs } = slot.actor;
    this.opts.log.error({ err, hotspot: hs, message: m.t }, 'actor handler failed; reloading it from Redis');
    this.fail(m.id, Errors.INTERNAL());
    const now = this.now();
    slot.restarts = slot.restarts.filter((t) => now - t < 60_000);
    slot.restarts.push(now);
    if (slot.restarts.length > MAX_RESTARTS_PER_MIN) {
      this.opts.log.error({ hotspot: hs }, 'actor failing repeatedly; stopping it until its next message');
      slot.actor.release();
      this.slots.delete(`${tenant}/${hs}`);
      return;
    }
    if (!slot.owned) return; // released (its lease is another process's): nothing to reload
    slot.ready = slot.actor.load().then(() => slot.owned, (e: unknown) => {
      this.opts.log.error({ err: e }, 'actor reload failed');
      return false;
    });
  }
}

/**
 * A NAS's packet that reached this process's RADIUS server, as opposed to this process's wake, a request of the API
 * or portal, or a NAS's packet another process forwarded (its NAS talks to that process: the hotspot should follow it).
 */
function fromNas(m: Request): boolean {
  return (m.t === 'auth' || m.t === 'acct') && m.forwarded !== true;
}

/** Which chain a message joins: one device's messages (by MAC or session) run one after another. */
function chainKey(m: Request): string {
  if (m.t === 'wake') return '#wake';
  return m.t === 'auth' || m.t === 'acct' || m.t === 'started' ? m.mac : m.sid;
}
