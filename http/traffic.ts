/**
 * Requests a listener group is serving, so a shutdown can let them finish
 * (HttpServer.close then drain): once `closing`, a request that still
 * arrives on an open keep-alive connection is answered 503 and the
 * connection closed, rather than run against an engine going away.
 */
export class Traffic {
  inFlight = 0;
  closing = false;
  private idle: (() => void)[] = [];
  /**
   * Requests each peer address holds open now, streams and downloads
   * included. uWS tells HTTP handlers nothing of connections themselves; an
   * idle keep-alive connection costs a socket only and uWS closes it after
   * 10 s, while what a slow or hostile client can hold for long (a stream,
   * an upload, a download) is always a request in here.
   */
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly maxPerAddress = Number.MAX_SAFE_INTEGER) {}

  /** Takes a place for `addr`; false (nothing taken) when it holds maxPerAddress already. */
  enter(addr: string): boolean {
    const n = this.byAddress.get(addr) ?? 0;
    if (n >= this.maxPerAddress) return false;
    this.byAddress.set(addr, n + 1);
    return true;
  }

  leave(addr: string): void {
    const n = (this.byAddress.get(addr) ?? 1) - 1;
    if (n <= 0) this.byAddress.delete(addr);
    else this.byAddress.set(addr, n);
  }

  begin(): void {
    this.inFlight++;
  }

  end(): void {
    if (--this.inFlight === 0) for (const wake of this.idle.splice(0)) wake();
  }

  /** Resolves when no request is in flight, or after `ms` at the latest. */
  drained(ms: number): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      this.idle.push(() => { clearTimeout(t); resolve(); });
    });
  }
}
