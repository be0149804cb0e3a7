import { randomBytes } from 'node:crypto';

/**
 * Duplicate detection for RFC 5080 §2.2.2: requests keyed by code,
 * Identifier, Request Authenticator, source port and source address. A
 * retransmission of an answered request gets the same reply octet for
 * octet; one of a request still in flight is dropped (answering it twice
 * would let a slow engine call do the work twice).
 *
 * Bounded in time and size. Every entry lives `ttlMs` from its arrival, so
 * arrival order is expiry order: entries sit in a fixed ring of `maxEntries`
 * slots in arrival order, swept from its head on each insert, and when full
 * its oldest entry makes room. Under a flood larger than maxEntries / ttlMs
 * per second the effective window shrinks rather than the memory growing.
 *
 * Why typed arrays and no Map: every packet is looked up and, unless it is a
 * retransmission, inserted while the oldest entry is evicted. With a Map of
 * string keys that was a string built, hashed and compared per packet and
 * four lookups in a Map of 100,000 entries: 5 % of the main thread's time at
 * 23,000 Access-Requests a second, and an object and a key per packet for
 * the garbage collector (bench/results/radius-vs-freeradius.md, 2026-11-30).
 * Here a key is its bytes in the slot, found through an open-addressing
 * table of slot numbers, probed linearly, and removed by backward shift, so
 * no tombstones accumulate. The hash is keyed with a random key of this
 * process (HalfSipHash's round function on 32-bit words): an Access-Request
 * without a Message-Authenticator reaches the cache unauthenticated, and a
 * sender who could choose colliding keys would turn every lookup into a walk
 * of the table.
 *
 * An entry is named by a handle, its slot and the slot's use count, so an
 * answer that arrives after its entry was evicted (a flood) changes nothing.
 */

/** Code, Identifier, Request Authenticator (16), source port (2), address length (1), address (an IPv6 text is at most 45 characters). */
const KEY_BYTES = 68;
const ADDRESS_AT = 21;
const MAX_ADDRESS = KEY_BYTES - ADDRESS_AT;
/** Use counts wrap here, so a handle (count * maxEntries + slot) stays an exact integer. */
const GENERATIONS = 0x100000;

const rotl = (x: number, b: number): number => (x << b) | (x >>> (32 - b));

export class DuplicateCache {
  private readonly keys: Uint8Array;
  private readonly expiresAt: Float64Array;
  private readonly generation: Uint32Array;
  private readonly replies: (Buffer | null)[];
  /** Each slot's key hash, so an entry moved or removed is not hashed again. */
  private readonly hashes: Uint32Array;
  /** 1 while the slot's entry is in the table: from begin() until it is forgotten, replaced or evicted. */
  private readonly inTable: Uint8Array;
  /** slot + 1 per table position, 0 when free. */
  private readonly table: Int32Array;
  private readonly mask: number;
  /** The key seen() read last, and its hash: begin() records it. */
  private readonly scratch = new Uint8Array(KEY_BYTES);
  private scratchHash = 0;
  private readonly k0: number;
  private readonly k1: number;
  private head = 0;
  private count = 0;
  /** Entries in the table (live, and expired ones not yet swept). */
  private indexed = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = new Uint8Array(maxEntries * KEY_BYTES);
    this.expiresAt = new Float64Array(maxEntries);
    this.generation = new Uint32Array(maxEntries);
    this.replies = new Array<Buffer | null>(maxEntries).fill(null);
    this.inTable = new Uint8Array(maxEntries);
    this.hashes = new Uint32Array(maxEntries);
    const key = randomBytes(8);
    this.k0 = key.readUInt32LE(0);
    this.k1 = key.readUInt32LE(4);
    let size = 8;
    while (size < maxEntries * 2) size *= 2;
    this.table = new Int32Array(size);
    this.mask = size - 1;
  }

  /**
   * The handle of the live entry for this request (its first 20 octets, the
   * RADIUS header, and where it came from), or -1. Leaves the request's key
   * for begin(), which must be the next call on this cache if it is made.
   */
  seen(msg: Uint8Array, port: number, address: string): number {
    const k = this.scratch;
    for (let i = 0; i < 2; i++) k[i] = msg[i]!;
    for (let i = 4; i < 20; i++) k[i - 2] = msg[i]!;
    k[18] = port >>> 8;
    k[19] = port & 255;
    const n = Math.min(address.length, MAX_ADDRESS);
    k[20] = n;
    for (let i = 0; i < n; i++) k[ADDRESS_AT + i] = address.charCodeAt(i);
    for (let i = ADDRESS_AT + n; i < ADDRESS_AT + n + 3 && i < KEY_BYTES; i++) k[i] = 0; // the last word's unused octets
    this.scratchHash = this.hashScratch();
    const slot = this.lookup();
    if (slot < 0 || this.expiresAt[slot]! <= this.now()) return -1;
    return this.handleOf(slot);
  }

  /** Records the request seen() looked up last as in flight (no reply yet); its handle. */
  begin(): number {
    const now = this.now();
    while (this.count > 0 && this.expiresAt[this.head]! <= now) this.evictOldest();
    if (this.count === this.maxEntries) this.evictOldest();
    // A dead entry of the same key (expired, not yet swept; or forgotten) leaves the table first.
    const old = this.lookup();
    if (old >= 0) this.unindex(old);
    const slot = (this.head + this.count) % this.maxEntries;
    this.keys.set(this.scratch, slot * KEY_BYTES);
    this.expiresAt[slot] = now + this.ttlMs;
    this.generation[slot] = (this.generation[slot]! + 1) % GENERATIONS;
    this.replies[slot] = null;
    this.count++;
    let p = this.scratchHash & this.mask;
    while (this.table[p] !== 0) p = (p + 1) & this.mask;
    this.table[p] = slot + 1;
    this.inTable[slot] = 1;
    this.hashes[slot] = this.scratchHash;
    this.indexed++;
    return this.handleOf(slot);
  }

  /** The entry's reply; null while it is in flight, or when the entry is gone. */
  reply(handle: number): Buffer | null {
    const slot = this.live(handle);
    return slot < 0 ? null : this.replies[slot]!;
  }

  /** Keeps the reply to answer retransmissions with; nothing when the entry was evicted meanwhile. */
  answered(handle: number, reply: Buffer): void {
    const slot = this.live(handle);
    if (slot >= 0) this.replies[slot] = reply;
  }

  /** Forgets a request that got no reply, so the NAS's retransmission is handled afresh. */
  forget(handle: number): void {
    const slot = this.live(handle);
    // Its ring slot stays until its turn; evictOldest then finds it out of the table.
    if (slot >= 0 && this.inTable[slot] === 1) this.unindex(slot);
  }

  /** Live entries and expired ones not yet swept. */
  get size(): number {
    return this.indexed;
  }

  clear(): void {
    this.table.fill(0);
    this.replies.fill(null);
    this.expiresAt.fill(0);
    this.inTable.fill(0);
    this.head = this.count = this.indexed = 0;
  }

  private handleOf(slot: number): number {
    return this.generation[slot]! * this.maxEntries + slot;
  }

  /** The slot a handle names, while the slot still holds that entry; else -1. */
  private live(handle: number): number {
    const slot = handle % this.maxEntries;
    return Math.floor(handle / this.maxEntries) === this.generation[slot] ? slot : -1;
  }

  /** The slot whose key is the scratch key and that is still indexed, or -1. */
  private lookup(): number {
    const k = this.scratch;
    const len = ADDRESS_AT + k[20]!;
    for (let p = this.scratchHash & this.mask; ; p = (p + 1) & this.mask) {
      const v = this.table[p]!;
      if (v === 0) return -1;
      const at = (v - 1) * KEY_BYTES;
      let i = 0;
      while (i < len && this.keys[at + i] === k[i]) i++;
      if (i === len) return v - 1;
    }
  }

  private evictOldest(): void {
    const slot = this.head;
    if (this.inTable[slot] === 1) this.unindex(slot); // a forgotten or replaced entry left the table already
    this.replies[slot] = null;
    this.head = (this.head + 1) % this.maxEntries;
    this.count--;
  }

  /**
   * Takes a slot out of the table (linear probing, backward-shift deletion):
   * every entry after it in its run that could sit in the gap moves back, so a
   * probe never stops early at a hole, and no tombstone is left.
   */
  private unindex(slot: number): void {
    const mask = this.mask;
    let p = this.hashes[slot]! & mask;
    while (this.table[p] !== slot + 1) p = (p + 1) & mask; // it is there: inTable says so
    for (let q = (p + 1) & mask; this.table[q] !== 0; q = (q + 1) & mask) {
      const home = this.hashes[this.table[q]! - 1]! & mask;
      // Move q's entry into the hole at p unless its home lies cyclically in (p, q].
      if (((q - home) & mask) >= ((q - p) & mask)) {
        this.table[p] = this.table[q]!;
        p = q;
      }
    }
    this.table[p] = 0;
    this.inTable[slot] = 0;
    this.indexed--;
  }

  /**
   * A key's hash: its 32-bit words (authenticator, then code, Identifier and
   * port, then the address, four characters a word) through HalfSipHash's
   * round with this process's key, one round a word and three to finish.
   */
  private hashScratch(): number {
    const k = this.scratch;
    v0 = this.k0; v1 = this.k1; v2 = 0x6c796765 ^ this.k0; v3 = 0x74656462 ^ this.k1;
    const end = ADDRESS_AT + k[20]!;
    for (let i = 2; i < 18; i += 4) absorb(word(k, i));
    absorb(k[0]! | (k[1]! << 8) | (k[18]! << 16) | (k[19]! << 24));
    for (let i = ADDRESS_AT; i < end; i += 4) absorb(word(k, i));
    absorb(end);
    v2 ^= 0xff;
    round();
    round();
    round();
    return (v1 ^ v3) >>> 0;
  }
}

/** The hash's state (one hash at a time: the thread runs one), module-wide so no closure is made per packet. */
let v0 = 0, v1 = 0, v2 = 0, v3 = 0;

function round(): void {
  v0 = (v0 + v1) | 0; v1 = rotl(v1, 5); v1 ^= v0; v0 = rotl(v0, 16);
  v2 = (v2 + v3) | 0; v3 = rotl(v3, 8); v3 ^= v2;
  v0 = (v0 + v3) | 0; v3 = rotl(v3, 7); v3 ^= v0;
  v2 = (v2 + v1) | 0; v1 = rotl(v1, 13); v1 ^= v2; v2 = rotl(v2, 16);
}

function absorb(m: number): void {
  v3 ^= m;
  round();
  v0 ^= m;
}

/** Four octets from `i`, little-endian; past the array's end they read as 0. */
function word(k: Uint8Array, i: number): number {
  return (k[i] ?? 0) | ((k[i + 1] ?? 0) << 8) | ((k[i + 2] ?? 0) << 16) | ((k[i + 3] ?? 0) << 24);
}
