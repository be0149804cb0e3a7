import type { AccessDecision } from './ports.js';

/**
 * The Access-Accepts an actor thread has given, in memory the main thread can
 * read: the answer to the next Access-Request of the same device, through the
 * same NAS, without a hop to the actor's thread.
 *
 * The actor owns its sessions and stays the only writer. It publishes an
 * accept when it gives one (HotspotActor.auth) and takes it back whenever the
 * answer could change: the session ends or is reloaded, is extended, has new
 * accounting (bytes, daily usage), or the actor lets its hotspot go. Each
 * entry carries how long it may be used: no later than the session's end, and,
 * with a daily quota, no later than the usage it was computed from may be
 * trusted. Anything not found, stale or half-written is a miss, and the
 * request takes the actor's way as before: the mirror only ever answers what
 * the actor would have answered a moment earlier.
 *
 * One table per actor thread, a SharedArrayBuffer of Int32 words: a header,
 * then slots of SLOT_WORDS words, open addressing with linear probing. Every
 * slot has a sequence number (odd while the writer changes it; a seqlock),
 * and every word is read and written with Atomics. When the table fills, the
 * writer builds a bigger one, marks the old one retired (so the reader misses
 * until it switches) and hands the new one over (onTable).
 */

// Header words.
const H_CAPACITY = 0;
const H_RETIRED = 1;
const HEADER_WORDS = 4;

// Slot words.
const S_SEQ = 0;
const S_STATE = 1; // 0 empty, 1 live, 2 removed (a tombstone: probing goes on past it)
const S_HS_A = 2;
const S_HS_B = 3;
const S_MAC_HI = 4;
const S_MAC_LO = 5;
const S_NAS = 6;
const S_USER = 7;
const S_IDLE = 8;
const S_DOWN = 9;
const S_UP = 10;
const S_UNTIL_HI = 11; // session end, ms: two words
const S_UNTIL_LO = 12;
const S_VALID_HI = 13; // entry usable until, ms
const S_VALID_LO = 14;
const S_QUOTA_HI = 15; // bytes left, +1 (0: no quota)
const S_QUOTA_LO = 16;
const S_SID_LEN = 17;
const S_SSID = 18; // hash of the SSID the NAS named when the accept was given ('' none)
const S_SID = 19; // SID_WORDS words, four latin1 characters each
const SID_WORDS = 6;
const SLOT_WORDS = S_SID + SID_WORDS;

const EMPTY = 0;
const LIVE = 1;
const REMOVED = 2;
/**
 * Probes before a lookup gives up. The writer keeps the table at most 60%
 * full (live and removed slots), so a chain is rarely longer: an entry beyond
 * it is only a miss (the actor answers).
 */
const MAX_PROBES = 64;
const MIN_CAPACITY = 1024;
const TWO_32 = 4294967296;

/** What an accept says, as the actor publishes it. */
export interface MirroredAccept {
  sid: string;
  nasId: string;
  nasUser: string;
  untilMs: number;
  /** The entry is not used from this time on (≤ untilMs). */
  validUntilMs: number;
  idleSec: number;
  downKbps: number;
  upKbps: number;
  quotaBytes: number | null;
  /**
   * The SSID the Access-Request named ('' or absent: none): another SSID is
   * news for the actor (a voucher limited to some SSIDs, decide.ts).
   */
  ssid?: string;
}

/** The writer's side: one per actor thread. */
export class AuthMirrorWriter {
  private table: Int32Array;
  /** Slot of each live entry, by its key (hotspot key and MAC). */
  private readonly slots = new Map<string, number>();
  /** The MACs with a live entry, by hotspot key (removeHotspot). */
  private readonly byHotspot = new Map<string, Set<string>>();
  private used = 0; // live and removed slots

  constructor(private readonly onTable: (table: SharedArrayBuffer) => void, capacity = MIN_CAPACITY) {
    this.table = newTable(capacity);
    onTable(this.table.buffer as SharedArrayBuffer);
  }

  publish(hsKey: string, mac: string, a: MirroredAccept): void {
    const m = macWords(mac);
    if (!m || a.sid.length > SID_WORDS * 4 || !(a.validUntilMs > 0)) return this.remove(hsKey, mac);
    const key = `${hsKey} ${mac}`;
    let slot = this.slots.get(key);
    if (slot === undefined) {
      if ((this.used + 1) * 5 > capacityOf(this.table) * 3) this.grow();
      slot = this.freeSlot(hsKey, m);
      if (slot < 0) return;
      this.slots.set(key, slot);
      let macs = this.byHotspot.get(hsKey);
      if (!macs) this.byHotspot.set(hsKey, (macs = new Set()));
      macs.add(mac);
      if (Atomics.load(this.table, slot + S_STATE) === EMPTY) this.used++;
    }
    write(this.table, slot, hsKey, m, a);
  }

  remove(hsKey: string, mac: string): void {
    const key = `${hsKey} ${mac}`;
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    this.slots.delete(key);
    const macs = this.byHotspot.get(hsKey);
    macs?.delete(mac);
    if (macs?.size === 0) this.byHotspot.delete(hsKey);
    const t = this.table;
    Atomics.add(t, slot + S_SEQ, 1);
    Atomics.store(t, slot + S_STATE, REMOVED);
    Atomics.add(t, slot + S_SEQ, 1);
  }

  /** Takes back every entry of a hotspot (its actor let it go, or reloads). */
  removeHotspot(hsKey: string): void {
    for (const mac of [...(this.byHotspot.get(hsKey) ?? [])]) this.remove(hsKey, mac);
  }

  get size(): number {
    return this.slots.size;
  }

  /** The first slot of the key's probe sequence that holds nothing live. */
  private freeSlot(hsKey: string, m: [number, number]): number {
    const cap = capacityOf(this.table);
    const [a] = hotspotHashes(hsKey);
    let i = mix(a, m[0], m[1]) & (cap - 1);
    for (let n = 0; n < MAX_PROBES; n++, i = (i + 1) & (cap - 1)) {
      const slot = HEADER_WORDS + i * SLOT_WORDS;
      if (Atomics.load(this.table, slot + S_STATE) !== LIVE) return slot;
    }
    return -1;
  }

  /**
   * A table with room for twice the live entries (removed slots are dropped),
   * filled again; the old one is retired first, then the new one handed over.
   * Between 30% and 60% full, a slot of 100 bytes costs 167 to 333 bytes a
   * live entry (bench/RESULTS.md, session-memory).
   */
  private grow(): void {
    const old = this.table;
    const live = [...this.slots];
    let cap = MIN_CAPACITY;
    while (cap < (live.length + 1) * 2) cap *= 2;
    const next = newTable(cap);
    this.table = next;
    this.slots.clear();
    this.used = 0;
    for (const [key, from] of live) {
      const hsKey = key.slice(0, key.lastIndexOf(' '));
      const mac = key.slice(key.lastIndexOf(' ') + 1);
      const slot = this.freeSlot(hsKey, macWords(mac)!);
      if (slot < 0) {
        this.byHotspot.get(hsKey)?.delete(mac); // dropped (a miss from now on)
        continue;
      }
      next.set(old.subarray(from, from + SLOT_WORDS), slot);
      Atomics.store(next, slot + S_SEQ, 0);
      this.slots.set(key, slot);
      this.used++;
    }
    Atomics.store(old, H_RETIRED, 1);
    this.onTable(next.buffer as SharedArrayBuffer);
  }
}

/** The reader's side, on the main thread: the tables of all actor threads. */
export class AuthMirrorReader {
  private readonly tables: (Int32Array | null)[] = [];
  hits = 0;

  /** A thread handed over its (new) table. */
  setTable(thread: number, table: SharedArrayBuffer): void {
    this.tables[thread] = new Int32Array(table);
  }

  /** A thread died: nothing of its is used until its successor hands over a table. */
  dropTable(thread: number): void {
    this.tables[thread] = null;
  }

  /**
   * The accept for this device at this hotspot through this NAS (and, when
   * the request has one, this User-Name) on the same SSID (`ssid`: the one
   * the request names, '' none), if the thread published one that is still
   * good at `now`; null otherwise.
   */
  lookup(thread: number, hs: HotspotKey, mac: string, nasId: string, userName: string, now: number, ssid = ''): AccessDecision | null {
    const t = this.tables[thread];
    if (!t || Atomics.load(t, H_RETIRED) === 1) return null;
    const m = macWords(mac);
    if (!m) return null;
    const { a, b } = hs;
    const cap = capacityOf(t);
    let i = mix(a, m[0], m[1]) & (cap - 1);
    for (let n = 0; n < MAX_PROBES; n++, i = (i + 1) & (cap - 1)) {
      const slot = HEADER_WORDS + i * SLOT_WORDS;
      const seq = Atomics.load(t, slot + S_SEQ);
      const state = Atomics.load(t, slot + S_STATE);
      if (state === EMPTY) return null;
      if (state !== LIVE || Atomics.load(t, slot + S_HS_A) !== a || Atomics.load(t, slot + S_HS_B) !== b
        || Atomics.load(t, slot + S_MAC_HI) !== m[0] || Atomics.load(t, slot + S_MAC_LO) !== m[1]) continue;
      if (seq & 1) return null; // being written
      const decision = read(t, slot, nasId, userName, ssid, now);
      // Changed while we read it: a miss, not a retry (the actor's way answers).
      if (Atomics.load(t, slot + S_SEQ) !== seq) return null;
      if (decision) this.hits++;
      return decision;
    }
    return null;
  }
}

function newTable(capacity: number): Int32Array {
  const t = new Int32Array(new SharedArrayBuffer((HEADER_WORDS + capacity * SLOT_WORDS) * 4));
  t[H_CAPACITY] = capacity;
  return t;
}

function capacityOf(t: Int32Array): number {
  return t[H_CAPACITY]!;
}

function write(t: Int32Array, slot: number, hsKey: string, m: [number, number], a: MirroredAccept): void {
  const [ha, hb] = hotspotHashes(hsKey);
  Atomics.add(t, slot + S_SEQ, 1);
  Atomics.store(t, slot + S_STATE, LIVE);
  Atomics.store(t, slot + S_HS_A, ha);
  Atomics.store(t, slot + S_HS_B, hb);
  Atomics.store(t, slot + S_MAC_HI, m[0]);
  Atomics.store(t, slot + S_MAC_LO, m[1]);
  Atomics.store(t, slot + S_NAS, fnv1a(a.nasId, FNV_BASIS));
  Atomics.store(t, slot + S_USER, fnv1a(a.nasUser, FNV_BASIS));
  Atomics.store(t, slot + S_IDLE, a.idleSec);
  Atomics.store(t, slot + S_DOWN, a.downKbps);
  Atomics.store(t, slot + S_UP, a.upKbps);
  storeWide(t, slot + S_UNTIL_HI, a.untilMs);
  storeWide(t, slot + S_VALID_HI, Math.min(a.validUntilMs, a.untilMs));
  storeWide(t, slot + S_QUOTA_HI, a.quotaBytes === null ? 0 : Math.max(0, a.quotaBytes) + 1);
  Atomics.store(t, slot + S_SID_LEN, a.sid.length);
  Atomics.store(t, slot + S_SSID, fnv1a(a.ssid ?? '', FNV_BASIS));
  for (let w = 0; w < SID_WORDS; w++) {
    let v = 0;
    for (let k = 0; k < 4; k++) v |= (a.sid.charCodeAt(w * 4 + k) & 0xff) << (k * 8); // NaN past the end: 0
    Atomics.store(t, slot + S_SID + w, v);
  }
  Atomics.add(t, slot + S_SEQ, 1);
}

function read(t: Int32Array, slot: number, nasId: string, userName: string, ssid: string, now: number): AccessDecision | null {
  if (now >= loadWide(t, slot + S_VALID_HI)) return null;
  // Accepted on one SSID says nothing of another: the session's SSID list is the actor's to check.
  if (Atomics.load(t, slot + S_SSID) !== fnv1a(ssid, FNV_BASIS)) return null;
  // The NAS (and User-Name) the actor last saw for the session: a change is news for it.
  if (Atomics.load(t, slot + S_NAS) !== fnv1a(nasId, FNV_BASIS)) return null;
  if (userName && Atomics.load(t, slot + S_USER) !== fnv1a(userName, FNV_BASIS)) return null;
  const untilMs = loadWide(t, slot + S_UNTIL_HI);
  const quota = loadWide(t, slot + S_QUOTA_HI);
  const len = Math.min(Atomics.load(t, slot + S_SID_LEN), SID_WORDS * 4);
  // Read into a scratch and made one string: a string add per character was most of a hit's cost.
  for (let w = 0; w < SID_WORDS; w++) SID_SCRATCH.writeInt32LE(Atomics.load(t, slot + S_SID + w), w * 4);
  const sid = SID_SCRATCH.toString('latin1', 0, len);
  return {
    accept: true, sessionId: sid, sessionTimeout: Math.max(1, Math.ceil((untilMs - now) / 1000)),
    idleTimeout: Atomics.load(t, slot + S_IDLE), downKbps: Atomics.load(t, slot + S_DOWN), upKbps: Atomics.load(t, slot + S_UP),
    quotaBytes: quota === 0 ? null : quota - 1,
  };
}

function storeWide(t: Int32Array, at: number, v: number): void {
  const n = Math.max(0, Math.floor(v));
  Atomics.store(t, at, Math.floor(n / TWO_32));
  Atomics.store(t, at + 1, n >>> 0);
}

function loadWide(t: Int32Array, at: number): number {
  return Atomics.load(t, at) * TWO_32 + (Atomics.load(t, at + 1) >>> 0);
}

/** A canonical MAC (AA:BB:CC:DD:EE:FF) as its first two and last four octets; null when it is not one. */
function macWords(mac: string): [number, number] | null {
  if (mac.length !== 17) return null;
  let hi = 0, lo = 0;
  for (let i = 0; i < 17; i += 3) {
    const h = hexDigit(mac.charCodeAt(i)), l = hexDigit(mac.charCodeAt(i + 1));
    if (h < 0 || l < 0) return null;
    if (i < 6) hi = (hi << 8) | (h << 4) | l;
    else lo = (lo << 8) | (h << 4) | l;
  }
  return [hi, lo | 0];
}

/** 0-15 for a hexadecimal digit's character code, -1 otherwise. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const u = c | 0x20; // lower case
  return u >= 97 && u <= 102 ? u - 87 : -1;
}

const FNV_BASIS = 0x811c9dc5;
const FNV_BASIS_2 = 0x050c5d1f;

function fnv1a(s: string, basis: number): number {
  let h = basis;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Two independent 32-bit hashes of the hotspot key: together they tell one hotspot of a thread from another. */
function hotspotHashes(hsKey: string): [number, number] {
  return [fnv1a(hsKey, FNV_BASIS), fnv1a(hsKey, FNV_BASIS_2)];
}

/** A hotspot as the mirror's slots name it: `tenant/hotspot` and its two hashes, made once per hotspot by the reader's caller. */
export interface HotspotKey {
  readonly key: string;
  readonly a: number;
  readonly b: number;
}

export function hotspotKey(hsKey: string): HotspotKey {
  const [a, b] = hotspotHashes(hsKey);
  return { key: hsKey, a, b };
}

/** A device at a hotspot as one 32-bit hash (ChangingDevices); -1 when `mac` is no canonical MAC, which the mirror never holds. */
export function deviceHash(hs: HotspotKey, mac: string): number {
  const m = macWords(mac);
  return m ? mix(hs.a, m[0], m[1]) : -1;
}

const SID_SCRATCH = Buffer.alloc(SID_WORDS * 4);

/** The slot a key's probing starts at: the hotspot's hash and the MAC, mixed (murmur3's finaliser steps). */
function mix(a: number, hi: number, lo: number): number {
  let h = Math.imul(a ^ lo, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h ^ hi, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return (h ^ (h >>> 13)) >>> 0;
}
