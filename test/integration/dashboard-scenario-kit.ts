import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import { AcctStatusType, Code, decodePacket } from '../../radius/index.js';
import { TestNas, accessRequest, accountingRequest, type AccessRequestSpec, type AccountingSpec } from '../radius/helpers.js';
import { dashed } from '../support/fixture.js';
import { addLoopbackNas } from '../support/loopback-nas.js';

/**
 * What dashboard-scenario.test.ts drives its scenario with and computes its
 * windowed expectations from: a NAS sending real datagrams, and the window
 * arithmetic of docs/dashboard-api.md ("How the numbers are kept") applied to
 * the times the scenario recorded.
 */

export const MIN = 60_000;

/** An accounting packet's byte delta (download + upload) and when it may have been counted: between send and reply. */
export interface Counted { bytes: number; from: number; to: number }

/** A row of GET decisions. */
export interface DecisionRow { id: string; at: string; outcome: string; method: string; reason: string; hotspot_id: string; source: string }

/** A NAS client of a hotspot, registered through the API, sending from its own loopback address. */
export class ScenarioNas {
  private ident = randomInt(0, 256);

  private constructor(
    readonly id: string, readonly ip: string, private readonly secret: string, private readonly radius: TestNas,
    private readonly ports: { auth: number; acct: number },
  ) {}

  /** Registers a NAS named `name` (none when not given) at the hotspot on a free loopback address (another file's NAS may hold one: 409). */
  static async add(base: string, ports: { auth: number; acct: number }, apiKey: string, hotspotId: string, name?: string): Promise<ScenarioNas> {
    const nas = await addLoopbackNas(base, { apiKey, hotspotId }, { name });
    return new ScenarioNas(nas.id, nas.ip, nas.secret, nas.radius, ports);
  }

  /** An Access-Request; resolves to the reply's code. */
  access(spec: Omit<AccessRequestSpec, 'secret' | 'id'>): Promise<number> {
    return this.ask(accessRequest({ secret: this.secret, id: this.next(), ...spec }), this.ports.auth);
  }

  /** MAC authentication: the device's bare MAC as User-Name and password. */
  macAuth(mac: string): Promise<number> {
    const bare = mac.replace(/:/g, '').toLowerCase();
    return this.access({ userName: bare, password: bare, callingStationId: dashed(mac) });
  }

  /**
   * Accounting-Start, then the running totals `[input, output]` as Interim-Updates (the last as a
   * Stop when `stop`), pushing each packet's byte delta and send/reply window onto `counted`.
   */
  async traffic(mac: string, at: Omit<AccountingSpec, 'secret'>, totals: [number, number][], stop: boolean, counted: Counted[]): Promise<void> {
    const send = async (status: number, inputOctets: number, outputOctets: number) => {
      const from = Date.now();
      expect(await this.ask(accountingRequest({
        secret: this.secret, id: this.next(), status, callingStationId: dashed(mac), acctSessionId: `acct-${mac}`,
        inputOctets, outputOctets, ...at, ...(status === AcctStatusType.STOP ? { terminateCause: 1 } : {}),
      }), this.ports.acct)).toBe(Code.ACCOUNTING_RESPONSE);
      return { from, to: Date.now() };
    };
    await send(AcctStatusType.START, 0, 0);
    let seen = 0;
    for (const [i, [inOctets, outOctets]] of totals.entries()) {
      const w = await send(i === totals.length - 1 && stop ? AcctStatusType.STOP : AcctStatusType.INTERIM_UPDATE, inOctets, outOctets);
      counted.push({ bytes: inOctets + outOctets - seen, ...w });
      seen = inOctets + outOctets;
    }
  }

  close(): Promise<void> {
    return this.radius.close();
  }

  private next(): number {
    return (this.ident = (this.ident + 1) & 255);
  }

  /** Sends a datagram and returns the code of the reply with the same Identifier. */
  private async ask(pkt: Buffer, port: number): Promise<number> {
    await this.radius.send(pkt, port);
    for (;;) {
      const got = await this.radius.next(5000);
      expect(got, 'a RADIUS reply').not.toBeNull();
      if (got!.msg[1] === pkt[1]) return decodePacket(got!.msg)!.code;
    }
  }
}

/** Decisions in the last six 10-second steps at `now` (the current one included). */
export function decisions1m(rows: DecisionRow[], now: number): number {
  const step = Math.floor(now / 10_000);
  return rows.filter((d) => Math.floor(Date.parse(d.at) / 10_000) > step - 6).length;
}

/** A site's decisions of one outcome in the minute before `now`'s (the last complete one). */
const NO_SIGN_IN = new Set(['mac_auth', 'uam_login']);

/** The minute (ms / MIN) of the scenario's last sign-in decision at any of `sites`, whatever its outcome. */
export function lastSignInMinute(rows: DecisionRow[], sites: readonly string[]): number {
  return Math.max(...rows.filter((d) => sites.includes(d.hotspot_id) && !NO_SIGN_IN.has(d.method)).map((d) => Math.floor(Date.parse(d.at) / MIN)));
}

export function lastCompleteMinute(rows: DecisionRow[], now: number, outcome: string, site: string): number {
  const minute = Math.floor(now / MIN) - 1;
  // Sign-ins only: a NAS asking again about a device (mac_auth, uam_login) is a decision but no sign-in.
  return rows.filter((d) => d.outcome === outcome && d.hotspot_id === site && !NO_SIGN_IN.has(d.method)
    && Math.floor(Date.parse(d.at) / MIN) === minute).length;
}

/** 60 consecutive minutes, oldest first, the current one (at `now`) last. */
export function checkMinutes(perMinute: { minute: string }[], now: number): void {
  expect(perMinute).toHaveLength(60);
  const last = Math.floor(now / MIN);
  expect(perMinute.map((m) => Date.parse(m.minute))).toEqual(Array.from({ length: 60 }, (_, i) => (last - 59 + i) * MIN));
}

/**
 * bandwidth_mbps is the bytes counted in the minute before `now`'s, as Mbit/s. A packet whose
 * send/reply window lies in one minute was counted there; one straddling a boundary may be in
 * either, which widens the expectation to a range.
 */
export function expectBandwidth(mbps: number, counted: Counted[], now: number, nonZero = false): void {
  const minute = Math.floor(now / MIN) - 1;
  let lo = 0, hi = 0;
  for (const c of counted) {
    const [a, b] = [Math.floor(c.from / MIN), Math.floor(c.to / MIN)];
    if (a === minute && b === minute) lo += c.bytes;
    if (a <= minute && minute <= b) hi += c.bytes;
  }
  const rate = (bytes: number) => Math.round((bytes * 8) / 60 / 1000) / 1000;
  // After the scenario's last minute, that minute holds at least its last packet: the check is not a trivial 0 <= 0.
  if (nonZero) expect(hi).toBeGreaterThan(0);
  expect(mbps).toBeGreaterThanOrEqual(rate(lo));
  expect(mbps).toBeLessThanOrEqual(rate(hi));
}

export const sum = <K extends string>(rows: Record<K, number>[], k: K): number => rows.reduce((a, r) => a + r[k], 0);

/** A percentage with two decimals, as the tiles give them. */
export const pct = (part: number, whole: number): number => Math.round((part / whole) * 10_000) / 100;

/** The read models' order of live counts: most first, then by hotspot and name. */
export function byCount<T extends { hotspot_id: string; active: number }>(rows: T[]): T[] {
  const name = (r: T) => String((r as Record<string, unknown>).ssid ?? (r as Record<string, unknown>).ap);
  return [...rows].sort((a, b) => b.active - a.active || a.hotspot_id.localeCompare(b.hotspot_id) || name(a).localeCompare(name(b)));
}
