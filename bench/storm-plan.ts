/**
 * The stadium storm's schedule, fixed before the run starts and followed
 * whatever the answers' latency (open loop): guest i arrives at i / rate
 * seconds; its NAS's Interim-Updates are due every `interimSec` after the
 * arrival, and its Accounting-Stop `staySec` after it (0: it stays to the end).
 * Every due time depends on the guest's index alone, so each kind of event
 * comes due in index order and one cursor per kind (per round, for interims)
 * walks it: no timer per guest, no heap, O(1) memory per kind.
 */

export interface StormShape {
  guests: number;
  /** Arrivals per second. */
  rate: number;
  interimSec: number;
  /** How long a guest stays before its NAS sends a Stop; 0: to the end of the run. */
  staySec: number;
  /** Seconds the run goes on after the last arrival (interims and stops keep coming). */
  tailSec: number;
  /** Share of guests signing in by an SMS code (0..1), spread evenly over the arrivals. */
  otpShare: number;
}

export type StormEvent = { kind: 'arrive'; guest: number; dueMs: number }
  | { kind: 'interim'; guest: number; dueMs: number; round: number }
  | { kind: 'stop'; guest: number; dueMs: number };

export class StormPlan {
  /** When the last guest arrives, ms after the start. */
  readonly lastArrivalMs: number;
  /** When the run ends, ms after the start: nothing is due at or after it. */
  readonly endMs: number;
  private nextArrival = 0;
  private nextStop = 0;
  /** Per round k (1-based): the next guest whose k-th Interim-Update is due. */
  private readonly nextInterim: number[];

  constructor(readonly shape: StormShape) {
    if (!(shape.guests >= 1 && shape.rate > 0 && shape.interimSec > 0 && shape.staySec >= 0 && shape.tailSec >= 0)) {
      throw new Error('a storm needs guests >= 1, rate > 0, interim > 0, stay >= 0, tail >= 0');
    }
    this.lastArrivalMs = this.arrivalMs(shape.guests - 1);
    this.endMs = this.lastArrivalMs + shape.tailSec * 1000;
    const rounds = Math.max(0, Math.ceil(this.endMs / (shape.interimSec * 1000)));
    this.nextInterim = new Array<number>(rounds + 1).fill(0);
  }

  arrivalMs(guest: number): number {
    return (guest * 1000) / this.shape.rate;
  }

  /** The guest's Stop, ms after the start, or Infinity when it stays (or would leave after the end). */
  stopMs(guest: number): number {
    if (this.shape.staySec === 0) return Infinity;
    const at = this.arrivalMs(guest) + this.shape.staySec * 1000;
    return at < this.endMs ? at : Infinity;
  }

  /** Whether guest i signs in by SMS code: every (1 / share)-th guest, so any stretch of the run has its share. */
  isOtp(guest: number): boolean {
    const s = this.shape.otpShare;
    return Math.floor((guest + 1) * s) > Math.floor(guest * s);
  }

  /** Everything due at or before `nowMs` (ms after the start) and not yet taken, in order of kind then guest. */
  due(nowMs: number, into: StormEvent[]): StormEvent[] {
    const { guests, interimSec } = this.shape;
    const now = Math.min(nowMs, this.endMs - 1e-9);
    while (this.nextArrival < guests && this.arrivalMs(this.nextArrival) <= now) {
      into.push({ kind: 'arrive', guest: this.nextArrival, dueMs: this.arrivalMs(this.nextArrival) });
      this.nextArrival++;
    }
    for (let k = 1; k < this.nextInterim.length; k++) {
      let g = this.nextInterim[k]!;
      for (; g < guests; g++) {
        const at = this.arrivalMs(g) + k * interimSec * 1000;
        // The guest has left by then (its Stop is due first): no report after a Stop.
        if (at > now) break;
        if (at < this.stopMs(g)) into.push({ kind: 'interim', guest: g, dueMs: at, round: k });
      }
      this.nextInterim[k] = g;
    }
    if (this.shape.staySec > 0) {
      while (this.nextStop < guests && this.stopMs(this.nextStop) <= now) {
        into.push({ kind: 'stop', guest: this.nextStop, dueMs: this.stopMs(this.nextStop) });
        this.nextStop++;
      }
    }
    return into;
  }

  /** When the next event not yet taken is due, ms after the start (Infinity: none left), so the clock can sleep till then. */
  nextDueMs(): number {
    const { guests, interimSec } = this.shape;
    let next = this.nextArrival < guests ? this.arrivalMs(this.nextArrival) : Infinity;
    for (let k = 1; k < this.nextInterim.length; k++) {
      const g = this.nextInterim[k]!;
      if (g < guests) next = Math.min(next, this.arrivalMs(g) + k * interimSec * 1000);
    }
    if (this.shape.staySec > 0 && this.nextStop < guests) next = Math.min(next, this.stopMs(this.nextStop));
    return next < this.endMs ? next : Infinity;
  }

  /** True once every event of the run has been taken. */
  exhausted(nowMs: number): boolean {
    return nowMs >= this.endMs;
  }
}
