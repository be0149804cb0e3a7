import { Errors, type Engine, type StreamSettings } from '../engine/index.js';

type Metrics = Engine['metrics'];

/**
 * The streams each credential, each tenant and the process hold open
 * (STREAM_MAX_PER_PRINCIPAL, _PER_TENANT, _PER_PROCESS): one viewer token
 * must not open thousands. A place is taken when a stream request joins,
 * before it waits for anything, and given back exactly once, whichever way
 * the stream ends (the client goes, is dropped for not reading, the
 * service stops, or the join fails).
 */
export class StreamPlaces {
  private readonly byPrincipal = new Map<string, number>();
  private readonly byTenant = new Map<string, number>();
  private total = 0;

  constructor(private readonly settings: StreamSettings, private readonly metrics: Metrics) {
    metrics.counter('stream_refused_total', 'Stream requests refused 429 too_many_streams, by the limit that bit: principal, tenant or process', 'limit');
  }

  /** Takes a place, or throws 429 too_many_streams; returns the function that gives it back (once). */
  take(tenantId: string, credential: string): () => void {
    const pk = `${tenantId}\n${credential}`;
    const p = this.byPrincipal.get(pk) ?? 0;
    const t = this.byTenant.get(tenantId) ?? 0;
    const { maxPerPrincipal, maxPerTenant, maxPerProcess } = this.settings;
    const refuse = (limit: 'principal' | 'tenant' | 'process', scope: string, max: number): never => {
      this.metrics.inc('stream_refused_total', limit);
      throw Errors.TOO_MANY_STREAMS(scope, max);
    };
    if (p >= maxPerPrincipal) refuse('principal', 'credential', maxPerPrincipal);
    if (t >= maxPerTenant) refuse('tenant', 'tenant', maxPerTenant);
    if (this.total >= maxPerProcess) refuse('process', 'server', maxPerProcess);
    this.byPrincipal.set(pk, p + 1);
    this.byTenant.set(tenantId, t + 1);
    this.total++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total--;
      dec(this.byPrincipal, pk);
      dec(this.byTenant, tenantId);
    };
  }
}

function dec(m: Map<string, number>, k: string): void {
  const n = (m.get(k) ?? 1) - 1;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}
