import { performance } from 'node:perf_hooks';
import { benchMac } from './bench-kit.js';
import { SecondCounters } from './json-lines.js';
import { HistogramSeries } from './latency-histogram.js';
import { accessRequest, accountingRequest, AcctStatusType, Code, type OpenLoopRadius, type Outcome } from './radius-client.js';
import type { StormLedger } from './storm-check.js';
import type { StormEvent, StormPlan } from './storm-plan.js';

/**
 * Plays the storm's schedule against a service: each guest's portal page and
 * sign-in over HTTP, then its NAS's packets over UDP, every request leaving when
 * due whatever is still outstanding. Latency counts from the due time: for the
 * sign-in, the guest's arrival; for the Access-Request and the Start, the moment
 * the step before them was answered (they follow it, as on a real NAS); for an
 * interim or a Stop, its place in the schedule.
 */

export interface StormSite {
  hotspot: string; codes: string[]; authPort: number; acctPort: number; secret: string;
}

/** What the driver needs of an HTTP client: JsonClient (node:http) or RawHttpClient. */
export interface GuestHttp {
  port: number;
  post(path: string, body: unknown): Promise<{ status: number; json: any }>;
  send(method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any }>;
  page(path: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }>;
  close(): void;
}

/**
 * What a phone's browser sends for the portal page (Chrome on Android, Safari on iOS, over
 * HTTPS; over HTTP they leave out `br`): the service answers it compressed, as it would a guest.
 */
export const PHONE_PAGE_HEADERS: Record<string, string> = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-encoding': 'gzip, deflate, br',
  'accept-language': 'tr-TR,tr;q=0.9,en-US;q=0.8,en;q=0.7',
};

/** One service process's share of the storm: its HTTP client, its NAS (a RADIUS client on its own address), its hotspot. */
export interface StormLane { http: GuestHttp; radius: OpenLoopRadius; site: StormSite }

/** An SMS code delivered to the fake carrier for a 10-digit local number. */
export type CodeFor = (local10: string) => Promise<string>;

const enum G { NONE, SIGNING, SIGNED, STARTED, STOPPED, FAILED }
/** Flag beside the state: the guest's Stop came due before its Start was answered; it follows the Start. */
const LEAVING = 0x80;

export class StormDriver {
  readonly series = {
    signin: new HistogramSeries(), page: new HistogramSeries(), access: new HistogramSeries(),
    acctStart: new HistogramSeries(), interim: new HistogramSeries(), stop: new HistogramSeries(),
  };
  /** Per second: arrivals, sign-ins done, packets answered, errors by kind (`error.<kind>`). */
  readonly counts = new SecondCounters();
  /** Errors by kind over the run; those of requests caught by the kill in `restartErrors`. */
  readonly errors = new Map<string, number>();
  readonly restartErrors = new Map<string, number>();
  readonly ledger: Required<StormLedger> = { authorized: new Set(), stopped: new Set(), verifyLost: new Set() };
  signedIn = 0;
  /** HTTP sign-ins in flight (a guest between arrival and its answer). */
  signing = 0;
  /** When the last sign-in was answered or given up, performance.now(). */
  lastSigninAt = 0;
  private readonly state: Uint8Array;
  private readonly t0: number;
  /** [kill, ready] of the service's restart, performance.now(); a request due in it and failing after the kill is the kill's. */
  outage: [number, number] | undefined;

  private readonly lanes: StormLane[];

  /**
   * `lanes`: one per service process (--processes): guest i signs in through lane i mod n, and its
   * NAS (the lane's hotspot, its own source address) talks to that lane's process.
   */
  constructor(private readonly plan: StormPlan, lanes: StormLane | StormLane[],
    private readonly codeFor: CodeFor | undefined, t0: number, private readonly runTag: number,
    private readonly signinTries: number) {
    this.lanes = Array.isArray(lanes) ? lanes : [lanes];
    if (this.lanes.length === 0) throw new Error('StormDriver needs a lane');
    this.state = new Uint8Array(plan.shape.guests);
    this.t0 = t0;
  }

  private lane(guest: number): StormLane {
    return this.lanes[guest % this.lanes.length]!;
  }

  /** The service killed and not back yet. */
  down(): boolean {
    return this.outage !== undefined && this.outage[1] === Infinity;
  }

  mac(guest: number): string {
    return benchMac(0x02, this.runTag, guest);
  }

  /** Starts what is due now; returns how many events were taken. */
  tick(): number {
    const events = this.plan.due(performance.now() - this.t0, []);
    for (const e of events) this.take(e);
    return events.length;
  }

  private take(e: StormEvent): void {
    const due = this.t0 + e.dueMs;
    if (e.kind === 'arrive') {
      this.counts.add('arrivals');
      this.state[e.guest] = G.SIGNING;
      this.signing++;
      void this.signIn(e.guest, due);
    } else if (e.kind === 'stop' && (this.state[e.guest] === G.SIGNING || this.state[e.guest] === G.SIGNED)) {
      // Still on its way in: the NAS sends the Stop once it has sent the Start (latency from then).
      this.state[e.guest]! |= LEAVING;
    } else if (this.state[e.guest] !== G.STARTED) {
      // Not signed in (failed, or still on its way): a NAS has no session to report.
      this.counts.add(`skipped_${e.kind}`);
    } else if (e.kind === 'interim') {
      this.acct(e.guest, due, AcctStatusType.INTERIM_UPDATE, e.round, 'interim');
    } else {
      this.acct(e.guest, due, AcctStatusType.STOP, Math.floor(this.plan.shape.staySec / this.plan.shape.interimSec), 'stop');
    }
  }

  private error(kind: string, dueAt: number): void {
    const killed = this.outage && dueAt <= this.outage[1] && performance.now() >= this.outage[0];
    const into = killed ? this.restartErrors : this.errors;
    into.set(kind, (into.get(kind) ?? 0) + 1);
    this.counts.add(killed ? `restart_error.${kind}` : `error.${kind}`);
  }

  /** The guest's page and sign-in, tried again 1 s later (at most signinTries) when the wire or a 5xx failed it. */
  private async signIn(guest: number, due: number): Promise<void> {
    const otp = this.codeFor !== undefined && this.plan.isOtp(guest);
    const mac = this.mac(guest);
    const { http, site } = this.lane(guest);
    let done = false;
    for (let attempt = 1; attempt <= this.signinTries && !done; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, 1000));
      const at = performance.now();
      try {
        const page = await http.page(`/portal?hotspot_id=${encodeURIComponent(site.hotspot)}&mac=${encodeURIComponent(mac)}`, PHONE_PAGE_HEADERS);
        if (page.status !== 200) throw new Failure(`page_${page.status}`, page.status >= 500);
        this.series.page.add(performance.now() - at);
        if (otp) await this.otpSignIn(guest, mac); else await this.voucherSignIn(guest, mac);
        done = true;
      } catch (err) {
        const f = err instanceof Failure ? err : new Failure(`http_${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, true);
        // While the killed service is being restarted the guest keeps pressing the button: that try is not counted.
        if (f.retry && this.down()) { this.counts.add('retried_while_down'); attempt--; continue; }
        if (!f.retry || attempt === this.signinTries) this.error(f.kind, due);
        if (!f.retry) break;
      }
    }
    this.signing--;
    this.lastSigninAt = performance.now();
    if (!done) { this.state[guest] = G.FAILED; return; }
    this.series.signin.add(performance.now() - due);
    this.signedIn++;
    this.counts.add('signins');
    this.ledger.authorized.add(mac);
    this.state[guest] = G.SIGNED | (this.state[guest]! & LEAVING);
    this.access(guest, mac);
  }

  private async voucherSignIn(guest: number, mac: string): Promise<void> {
    const { http, site } = this.lane(guest);
    const code = site.codes[Math.floor(guest / this.lanes.length) % site.codes.length]!;
    const r = await http.post('/api/v1/hotspot-portal/voucher/verify', { hotspot_id: site.hotspot, code, mac });
    if (r.status !== 200 || r.json?.status !== 'authorized') throw new Failure(`verify_${r.status}_${r.json?.error ?? r.json?.status ?? ''}`, r.status >= 500);
  }

  private async otpSignIn(guest: number, mac: string): Promise<void> {
    const local10 = `5${String(guest).padStart(9, '0')}`;
    const phone = `+90${local10}`;
    const { http, site } = this.lane(guest);
    const req = await http.post('/api/v1/hotspot-portal/sms/request', { hotspot_id: site.hotspot, phone, mac });
    if (req.status !== 200) throw new Failure(`sms_request_${req.status}_${req.json?.error ?? ''}`, req.status >= 500);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([this.codeFor!(local10), new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Failure('sms_not_delivered', false)), 10_000);
    })]).finally(() => clearTimeout(timer));
    // A verify whose answer is lost (the service killed under it) may have used the code and started the session:
    // the guest then asks for a new code, whose session replaces that one (a used code is otp_expired, by contract).
    let ok: { status: number; json: any };
    try {
      ok = await http.post('/api/v1/hotspot-portal/sms/verify', { hotspot_id: site.hotspot, phone, code, mac });
    } catch (err) {
      this.ledger.verifyLost.add(mac);
      throw err;
    }
    if (ok.status >= 500) this.ledger.verifyLost.add(mac);
    if (ok.status !== 200 || ok.json?.status !== 'authorized') throw new Failure(`sms_verify_${ok.status}_${ok.json?.error ?? ok.json?.status ?? ''}`, ok.status >= 500);
  }

  private access(guest: number, mac: string): void {
    const due = performance.now();
    const { radius, site } = this.lane(guest);
    radius.send(site.authPort, due, (id) => accessRequest(radius.writer, id, radius.authenticators.next(), mac, 'guest', site.secret), (o) => {
      if (!this.answered(o, due, 'access', this.series.access)) return;
      if ((o as { code: number }).code !== Code.ACCESS_ACCEPT) { this.error('access_reject', due); return; }
      this.acct(guest, performance.now(), AcctStatusType.START, 0, 'acctStart');
    });
  }

  private acct(guest: number, due: number, status: number, round: number, kind: 'acctStart' | 'interim' | 'stop'): void {
    const mac = this.mac(guest);
    const { radius, site } = this.lane(guest);
    radius.send(site.acctPort, due, (id) => accountingRequest(radius.writer, id, {
      status, mac, sessionId: `storm-${this.runTag}-${guest}`, inOctets: round * 1_000_000, outOctets: round * 7_000_000,
      sessionTime: Math.round(round * this.plan.shape.interimSec),
    }, site.secret), (o) => {
      if (!this.answered(o, due, kind, this.series[kind])) return;
      if ((o as { code: number }).code !== Code.ACCOUNTING_RESPONSE) { this.error(`${kind}_bad_code`, due); return; }
      if (kind === 'acctStart') {
        const leaving = (this.state[guest]! & LEAVING) !== 0;
        this.state[guest] = G.STARTED;
        if (leaving) this.acct(guest, performance.now(), AcctStatusType.STOP, 0, 'stop');
      }
      if (kind === 'stop') { this.state[guest] = G.STOPPED; this.ledger.stopped.add(mac); }
    });
  }

  /** Records an answer's latency; an unanswered request is an error of its kind. */
  private answered(o: Outcome, due: number, kind: string, series: HistogramSeries): boolean {
    if ('refused' in o) { this.error(`${kind}_window_full`, due); return false; }
    if ('lost' in o) { this.error(`${kind}_lost`, due); return false; }
    series.add(o.ms);
    this.counts.add(`answered_${kind}`);
    if (o.tries > 1) this.counts.add(`retransmitted_${kind}`);
    return true;
  }
}

/** A failed step: its kind, and whether a guest would try again (the wire, a 5xx). */
class Failure extends Error {
  constructor(readonly kind: string, readonly retry: boolean) { super(kind); }
}
