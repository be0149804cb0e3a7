/**
 * One clock per worker thread: a calendar of one-second slots.
 *
 * An entry sits in the slot of the second it is due; a tick visits only the
 * slots whose second has passed, so its cost is the number of entries that
 * are due, never the number that are not. Moving an entry (a session whose
 * idle deadline moves with every interim update) is O(1): out of one Set,
 * into another. No setTimeout per session.
 */
export interface WheelEntry {
  /** The second this entry is filed under; 0 when not scheduled. Owned by the wheel. */
  slot: number;
}

export class TimerWheel<E extends WheelEntry> {
  private readonly slots = new Map<number, Set<E>>();
  private cursor: number;
  size = 0;

  constructor(nowMs: number) {
    this.cursor = Math.floor(nowMs / 1000);
  }

  /** Files `entry` to fire at `atMs` (rounded up to the second), replacing any earlier filing. */
  schedule(entry: E, atMs: number): void {
    // Never file into a slot the cursor has passed: it would not be visited.
    const second = Math.max(Math.ceil(atMs / 1000), this.cursor + 1);
    if (entry.slot === second) return;
    this.cancel(entry);
    let set = this.slots.get(second);
    if (!set) {
      set = new Set();
      this.slots.set(second, set);
    }
    set.add(entry);
    entry.slot = second;
    this.size++;
  }

  cancel(entry: E): void {
    if (entry.slot === 0) return;
    const set = this.slots.get(entry.slot);
    if (set?.delete(entry)) {
      this.size--;
      if (set.size === 0) this.slots.delete(entry.slot);
    }
    entry.slot = 0;
  }

  /** Fires every entry due at or before `nowMs`, oldest slot first. */
  advance(nowMs: number, fire: (entry: E) => void): void {
    const target = Math.floor(nowMs / 1000);
    while (this.cursor < target) {
      this.cursor++;
      const set = this.slots.get(this.cursor);
      if (!set) continue;
      this.slots.delete(this.cursor);
      for (const e of set) {
        e.slot = 0;
        this.size--;
        fire(e);
      }
    }
  }
}
