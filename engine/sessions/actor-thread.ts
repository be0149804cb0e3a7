import { parentPort, workerData } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { AppError, Errors } from '../errors.js';
import { createLogger } from '../logger.js';
import { keys } from '../redis/keys.js';
import { createRedis } from '../redis/scripts.js';
import { AuthMirrorWriter } from './auth-mirror.js';
import { HotspotActor, type TimedSession } from './hotspot-actor.js';
import { postBatch, type FromThread, type NasCommand, type ReplyValue, type Request, type SessionEvent, type ToThread } from './messages.js';
import type { NasCommandResult } from './ports.js';
import { SessionStore } from './session-store.js';
import { TimerWheel } from './timer-wheel.js';

/**
 * A worker thread hosting hotspot actors. One wheel and one clock for all of
 * its actors; one Redis connection; a supervisor per actor.
 */
export interface ThreadData {
  redisUrl: string;
  nodeId: string;
  logLevel: string;
  index: number;
}

/** Most messages in flight per actor; beyond it the thread answers busy (RADIUS then retransmits). */
const MAILBOX_LIMIT = 20_000;
const LEASE_TTL_MS = 30_000;
const LEASE_RENEW_MS = 10_000;
const TICK_MS = 250;
/** A supervisor stops reloading an actor that fails more often than this per minute. */
const MAX_RESTARTS_PER_MIN = 10;

interface Slot {
  actor: HotspotActor;
  ready: Promise<boolean>;
  owned: boolean;
  leaseCheckedAt: number;
  chains: Map<string, Promise<void>>;
  inflight: number;
  restarts: number[];
}

const data = workerData as ThreadData;
const port = parentPort!;
const log = createLogger(data.logLevel).child({ component: 'actor-thread', thread: data.index });
const redis = createRedis(data.redisUrl, log);
const store = new SessionStore(redis);
const wheel = new TimerWheel<TimedSession>(Date.now());
const slots = new Map<string, Slot>();
const packr = new Packr({ useRecords: false });
const outbox: FromThread[] = [];
const nasWaiters = new Map<number, (r: NasCommandResult) => void>();
let nasSeq = 0;
let flushQueued = false;

function post(msg: FromThread): void {
  outbox.push(msg);
  if (!flushQueued) {
    flushQueued = true;
    setImmediate(flush);
  }
}

function flush(): void {
  flushQueued = false;
  if (outbox.length === 0) return;
  postBatch(port, packr, outbox.splice(0, outbox.length));
}

// Handed over outside the msgpackr batches: a SharedArrayBuffer is shared, not copied.
const mirror = new AuthMirrorWriter((table) => port.postMessage({ t: 'mirror_table', table }));

const ctx = {
  store, wheel, log, mirror,
  now: () => Date.now(),
  nas: (cmd: Omit<NasCommand, 't' | 'id'>): Promise<NasCommandResult> => new Promise((resolve) => {
    const id = ++nasSeq;
    nasWaiters.set(id, resolve);
    post({ t: 'nas', id, ...cmd });
  }),
  emit: (ev: Omit<SessionEvent, 't'>) => post({ t: 'event', ...ev }),
};

function slotFor(tenant: string, hs: string, tz: string): Slot {
  const key = `${tenant}/${hs}`;
  let slot = slots.get(key);
  if (!slot) {
    const actor = new HotspotActor(tenant, hs, tz, ctx);
    slot = { actor, ready: Promise.resolve(false), owned: false, leaseCheckedAt: 0, chains: new Map(), inflight: 0, restarts: [] };
    slots.set(key, slot);
    slot.ready = acquire(slot);
  }
  return slot;
}

/** Takes the hotspot's lease and loads its sessions; false while another process owns it. */
async function acquire(slot: Slot): Promise<boolean> {
  slot.leaseCheckedAt = Date.now();
  const { tenant, hs } = slot.actor;
  slot.owned = (await redis.renewLeaseV1(keys.lease(tenant, hs), data.nodeId, LEASE_TTL_MS)) === 1;
  if (slot.owned) await slot.actor.load();
  return slot.owned;
}

function reply(id: number, value: ReplyValue): void {
  post({ t: 'reply', id, ok: true, value });
}

/** Sends a catalogue error across the thread boundary; the pool rebuilds it as the same AppError. */
function fail(id: number, e: AppError): void {
  post({ t: 'reply', id, ok: false, code: e.code, status: e.status, message: e.message });
}

async function run(slot: Slot, m: Request): Promise<void> {
  let owned = await slot.ready;
  if (!owned && Date.now() - slot.leaseCheckedAt > 5_000) {
    slot.ready = acquire(slot);
    owned = await slot.ready;
  }
  if (!owned) return fail(m.id, Errors.HOTSPOT_OWNED_ELSEWHERE());
  const a = slot.actor;
  switch (m.t) {
    case 'auth': return reply(m.id, await a.auth(m));
    case 'acct': await a.acct(m); return reply(m.id, { done: true });
    case 'started': await a.started(m.mac, m.replaced); return reply(m.id, { done: true });
    case 'disconnect': return reply(m.id, await a.disconnect(m));
    case 'extend': return reply(m.id, await a.extend(m));
    case 'live': return reply(m.id, await a.live(m.sid));
    case 'wake': return reply(m.id, { sessions: a.size });
  }
}

/** The supervisor: a throw is logged and answered, and the actor reloads from Redis (or stops after too many). */
function supervise(slot: Slot, m: Request, err: unknown): void {
  log.error({ err, hotspot: slot.actor.hs, message: m.t }, 'actor handler failed; reloading it from Redis');
  fail(m.id, Errors.INTERNAL());
  const now = Date.now();
  slot.restarts = slot.restarts.filter((t) => now - t < 60_000);
  slot.restarts.push(now);
  if (slot.restarts.length > MAX_RESTARTS_PER_MIN) {
    log.error({ hotspot: slot.actor.hs }, 'actor failing repeatedly; stopping it until its next message');
    slot.actor.release();
    slots.delete(`${slot.actor.tenant}/${slot.actor.hs}`);
    return;
  }
  if (!slot.owned) return; // released (its lease is another process's): nothing to reload
  slot.ready = slot.actor.load().then(() => slot.owned, (e: unknown) => {
    log.error({ err: e }, 'actor reload failed');
    return false;
  });
}

function chainKey(m: Request): string {
  if (m.t === 'wake') return '#wake';
  return m.t === 'auth' || m.t === 'acct' || m.t === 'started' ? m.mac : m.sid;
}

function enqueue(slot: Slot, key: string, work: () => Promise<void>, m: Request | null): void {
  slot.inflight++;
  const prev = slot.chains.get(key);
  const next = (prev ? prev.then(work) : work()).catch((err: unknown) => {
    if (m) supervise(slot, m, err);
    else log.error({ err }, 'timer handler failed');
  }).finally(() => {
    slot.inflight--;
    if (slot.chains.get(key) === next) slot.chains.delete(key);
  });
  slot.chains.set(key, next);
}

function onRequest(m: Request): void {
  const slot = slotFor(m.tenant, m.hs, m.tz);
  if (slot.inflight >= MAILBOX_LIMIT) return fail(m.id, Errors.HOTSPOT_BUSY());
  enqueue(slot, chainKey(m), () => run(slot, m), m);
}

port.on('message', (buf: Uint8Array) => {
  for (const m of packr.unpack(buf) as ToThread[]) {
    if (m.t === 'nas_result') {
      nasWaiters.get(m.id)?.(m.result);
      nasWaiters.delete(m.id);
    } else {
      onRequest(m);
    }
  }
});

// The thread's clock: due sessions go through their actor's per-device chain like any message.
let lastRenew = Date.now();
setInterval(() => {
  const now = Date.now();
  wheel.advance(now, (s) => {
    const slot = slots.get(`${s.actor.tenant}/${s.actor.hs}`);
    if (slot) enqueue(slot, s.mac, () => s.actor.due(s), null);
  });
  for (const slot of slots.values()) {
    if (slot.owned) enqueue(slot, '#sweep', () => slot.actor.sweep(), null);
  }
  if (now - lastRenew >= LEASE_RENEW_MS) {
    lastRenew = now;
    for (const slot of slots.values()) {
      if (!slot.owned) continue;
      void redis.renewLeaseV1(keys.lease(slot.actor.tenant, slot.actor.hs), data.nodeId, LEASE_TTL_MS).then((held) => {
        if (held === 1) return;
        log.warn({ hotspot: slot.actor.hs }, 'lease lost to another process; releasing the actor');
        slot.owned = false;
        // Requests now get 503 (hotspot_owned_elsewhere) and try the lease again after a while
        // (run), instead of reaching an actor that holds nothing.
        slot.ready = Promise.resolve(false);
        slot.leaseCheckedAt = Date.now();
        slot.actor.release();
      }, (err: unknown) => log.warn({ err }, 'lease renewal failed'));
    }
  }
}, TICK_MS);

// Tell the pool how many sessions and actors this thread holds (metrics, memory benchmark).
setInterval(() => {
  let sessions = 0;
  for (const s of slots.values()) sessions += s.actor.size;
  post({ t: 'stats', sessions, actors: slots.size });
}, 2_000).unref();
