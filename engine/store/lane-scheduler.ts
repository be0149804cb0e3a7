import { STREAMS_PER_READ } from './outbox-reader.js';

/**
 * Independent drain loops per process. A lane takes a share of the tenants
 * no other lane is working on (take), drains them batch after batch for up
 * to HOLD_MS, keeps them through its wait after a small batch or none (the
 * linger, the idle poll; see OutboxSink) and lets them go: a tenant's records
 * go one batch at a time, in stream order (its chain's head lock would
 * serialise them anyway), while one lane's Postgres work overlaps the
 * others' reading and hashing.
 */
export const LANES = 4;

/** Shares the tenants out among the lanes, so that no two lanes read one tenant's stream at once. */
export class LaneScheduler {
  /** Tenants a lane is working on now: no other lane reads their streams meanwhile. */
  private readonly busy = new Set<string>();
  /** Where the next lane starts looking for tenants to take (round robin). */
  private cursor = 0;

  /**
   * The tenants a lane works on next, marked busy: free ones in round-robin
   * order, up to an even share and at most one read command's worth
   * (STREAMS_PER_READ), so that every tenant comes round however many there
   * are and however busy the others.
   */
  take(tenants: string[]): string[] {
    const share = Math.min(STREAMS_PER_READ, Math.max(1, Math.ceil(tenants.length / LANES)));
    const chosen: string[] = [];
    for (let i = 0; i < tenants.length && chosen.length < share; i++) {
      const t = tenants[(this.cursor + i) % tenants.length]!;
      if (!this.busy.has(t)) chosen.push(t);
    }
    this.cursor = tenants.length ? (this.cursor + share) % tenants.length : 0;
    for (const t of chosen) this.busy.add(t);
    return chosen;
  }

  /** The lane is done with these tenants: other lanes may take them. */
  release(tenants: string[]): void {
    for (const t of tenants) this.busy.delete(t);
  }
}
