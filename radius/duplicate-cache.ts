/** A request seen recently: `reply` null while the engine is still working on it. */
export interface DuplicateEntry {
  reply: Buffer | null;
  readonly expiresAt: number;
}

/**
 * Duplicate detection for RFC 5080 §2.2.2: requests keyed by source address,
 * source port, code, Identifier and Request Authenticator. A retransmission
 * of an answered request gets the same reply octet for octet; one of a
 * request still in flight is dropped (answering it twice would let a slow
 * engine call do the work twice).
 *
 * Bounded in time and size. Every entry lives `ttlMs` from its arrival, so
 * arrival order is expiry order: a fixed ring of (key, entry) in arrival
 * order, preallocated at `maxEntries`, is swept from its head on each insert,
 * and when full its oldest entry makes room. Under a flood larger than
 * maxEntries / ttlMs per second the effective window shrinks rather than the
 * memory growing.
 *
 * Why a ring beside the Map rather than the Map's own insertion order: V8
 * leaves deleted Map entries as holes until it rehashes, so walking a Map
 * from its front on every insert (to find the oldest) skips ever more holes;
 * under load that made each insert cost O(entries).
 *
 * Keys are flat strings (see RadiusServer's duplicateKey): a concatenated
 * key would be flattened and copied by every Map lookup.
 */
export class DuplicateCache {
  private readonly entries = new Map<string, DuplicateEntry>();
  private readonly ringKeys: (string | undefined)[];
  private readonly ringEntries: (DuplicateEntry | undefined)[];
  private head = 0;
  private count = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {
    this.ringKeys = new Array<string | undefined>(maxEntries).fill(undefined);
    this.ringEntries = new Array<DuplicateEntry | undefined>(maxEntries).fill(undefined);
  }

  /** The live entry for `key`, if any. */
  get(key: string): DuplicateEntry | undefined {
    const e = this.entries.get(key);
    if (e === undefined || e.expiresAt <= this.now()) return undefined;
    return e;
  }

  /** Records a request now in flight. */
  begin(key: string): DuplicateEntry {
    const now = this.now();
    while (this.count > 0 && this.ringEntries[this.head]!.expiresAt <= now) this.evictOldest();
    if (this.count === this.maxEntries) this.evictOldest();
    const e: DuplicateEntry = { reply: null, expiresAt: now + this.ttlMs };
    this.entries.set(key, e);
    const tail = (this.head + this.count) % this.maxEntries;
    this.ringKeys[tail] = key;
    this.ringEntries[tail] = e;
    this.count++;
    return e;
  }

  /** Forgets a request that got no reply, so the NAS's retransmission is handled afresh. */
  forget(key: string, entry: DuplicateEntry): void {
    // Its ring slot stays until its turn; evictOldest then finds the Map no longer points at it.
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }

  /** Live and expired-but-not-yet-swept entries. */
  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.ringKeys.fill(undefined);
    this.ringEntries.fill(undefined);
    this.head = this.count = 0;
  }

  private evictOldest(): void {
    const k = this.ringKeys[this.head]!;
    if (this.entries.get(k) === this.ringEntries[this.head]) this.entries.delete(k);
    this.ringKeys[this.head] = undefined;
    this.ringEntries[this.head] = undefined;
    this.head = (this.head + 1) % this.maxEntries;
    this.count--;
  }
}
