/** Past this many tenants read within one window the cache starts over (each then costs one load again). */
const MAX_TENANTS = 10_000;

/**
 * A per-tenant answer kept for `ttlMs`: what the dashboard reads on every
 * request but changes rarely (a tenant's sites, its open incidents). Each
 * engine process keeps its own entries, so a change made by any process
 * shows in every process within `ttlMs`; nothing here assumes one process.
 * The promise is kept, so a burst of requests for one tenant makes one load;
 * a failed load is not kept (the next request loads again). Bounded by
 * MAX_TENANTS.
 */
export class TenantCache<T> {
  private readonly entries = new Map<string, { at: number; value: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly load: (tenantId: string) => Promise<T>,
    private readonly now: () => number = Date.now,
  ) {}

  get(tenantId: string): Promise<T> {
    const hit = this.entries.get(tenantId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.value;
    const value = this.load(tenantId);
    if (this.entries.size >= MAX_TENANTS) this.entries.clear();
    this.entries.set(tenantId, { at: this.now(), value });
    value.catch(() => { if (this.entries.get(tenantId)?.value === value) this.entries.delete(tenantId); });
    return value;
  }

  /** The next get() loads afresh (a change made in this process shows at once). */
  forget(tenantId: string): void {
    this.entries.delete(tenantId);
  }
}
