import { AuthMirrorReader, deviceHash, hotspotKey, type HotspotKey } from './auth-mirror.js';
import type { AccessDecision } from './ports.js';

/** The counter of Access-Requests answered from the mirror; every thread that reads it counts under this name. */
export const MIRROR_HITS_METRIC = 'radius_auth_mirror_hits_total';
export const MIRROR_HITS_HELP = 'Access-Requests answered from an actor\'s published accept, without the hop to the actor';

/**
 * The shared memory the auth mirror is read through: each actor thread's
 * table (null while the thread is down) and the devices being changed. Posted
 * to a RADIUS thread (shared, not copied), which reads it as the main thread does.
 */
export interface MirrorShare {
  tables: readonly (SharedArrayBuffer | null)[];
  changing: SharedArrayBuffer;
}

/** Counters in the changing table: a power of two. 256 KiB, shared by every thread that reads the mirror. */
const CHANGING_SLOTS = 1 << 16;
/** The word after them: the marks outstanding over all counters, so a lookup with none skips the hash. */
const TOTAL = CHANGING_SLOTS;

/**
 * Devices with a sign-in or an accounting report on its way to their actor,
 * in shared memory: until the actor has taken it in, the device's mirrored
 * accept may be out of date, and the request goes to the actor, behind it.
 * A counting filter: one Int32 counter per hash of hotspot and MAC, raised
 * when the message leaves for the actor and lowered when it is answered (or
 * fails). Two devices on one counter only send each other's requests the
 * actor's way while one of them changes; a device is never missed.
 */
export class ChangingDevices {
  private readonly counts: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer((CHANGING_SLOTS + 1) * 4)) {
    this.counts = new Int32Array(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.counts.buffer as SharedArrayBuffer;
  }

  /** The device's message left for its actor; returns what unmark() takes, -1 for a device the mirror cannot hold. */
  mark(hs: HotspotKey, mac: string): number {
    const h = deviceHash(hs, mac);
    if (h < 0) return -1;
    const at = h & (CHANGING_SLOTS - 1);
    Atomics.add(this.counts, TOTAL, 1);
    Atomics.add(this.counts, at, 1);
    return at;
  }

  /** The actor answered the message mark() counted (or it failed). */
  unmark(at: number): void {
    if (at < 0) return;
    Atomics.sub(this.counts, at, 1);
    Atomics.sub(this.counts, TOTAL, 1);
  }

  has(hs: HotspotKey, mac: string): boolean {
    if (Atomics.load(this.counts, TOTAL) === 0) return false;
    const h = deviceHash(hs, mac);
    return h >= 0 && Atomics.load(this.counts, h & (CHANGING_SLOTS - 1)) > 0;
  }
}

/**
 * The auth mirror as a reader sees it: the main thread (ActorPool) or a
 * RADIUS thread (radius/radius-thread.ts). The answer an actor gave a
 * device through a NAS, while it still holds and no message of the device
 * is on its way to the actor; null: the request goes to the actor.
 */
export class MirrorView {
  private readonly reader = new AuthMirrorReader();
  /**
   * Each hotspot's mirror key and thread, by tenant and hotspot id: made once, not per
   * Access-Request (the key's concatenation and three hashes of it were a visible part of a hit).
   * Bounded by the hotspots that send RADIUS; a tenant's entry goes when it holds too many.
   */
  private readonly hotspotKeys = new Map<string, Map<string, { key: HotspotKey; thread: number }>>();

  /** `threads`: how many actor threads the hotspots are spread over (threadIndex). */
  constructor(private readonly threads: number, readonly changing: ChangingDevices) {}

  /** A reader of the shared memory another thread posted. */
  static over(share: MirrorShare): MirrorView {
    const view = new MirrorView(share.tables.length, new ChangingDevices(share.changing));
    view.share(share);
    return view;
  }

  /** Takes the tables of a MirrorShare (a table handed over or dropped since). */
  share(share: MirrorShare): void {
    share.tables.forEach((t, i) => (t ? this.reader.setTable(i, t) : this.reader.dropTable(i)));
  }

  setTable(thread: number, table: SharedArrayBuffer): void {
    this.reader.setTable(thread, table);
  }

  dropTable(thread: number): void {
    this.reader.dropTable(thread);
  }

  /** Accepts answered through this view since it was made. */
  get hits(): number {
    return this.reader.hits;
  }

  lookup(tenant: string, hs: string, mac: string, nasId: string, userName: string, ssid: string): AccessDecision | null {
    const ref = this.ref(tenant, hs);
    if (this.changing.has(ref.key, mac)) return null;
    return this.reader.lookup(ref.thread, ref.key, mac, nasId, userName, Date.now(), ssid);
  }

  /** The hotspot's mirror key and actor thread. */
  ref(tenant: string, hs: string): { key: HotspotKey; thread: number } {
    let byHs = this.hotspotKeys.get(tenant);
    if (!byHs || byHs.size > 100_000) this.hotspotKeys.set(tenant, (byHs = new Map()));
    let ref = byHs.get(hs);
    if (!ref) byHs.set(hs, (ref = { key: hotspotKey(`${tenant}/${hs}`), thread: threadIndex(tenant, hs, this.threads) }));
    return ref;
  }
}

/** The thread a hotspot lives on: FNV-1a of its key, stable across restarts and processes. */
export function threadIndex(tenant: string, hs: string, n: number): number {
  let h = 0x811c9dc5;
  const key = `${tenant}/${hs}`;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % n;
}
