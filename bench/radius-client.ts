import { randomFillSync } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { AcctStatusType, Attr, Code, HEADER_LENGTH, PacketWriter, RadiusCrypto, checkFraming } from '../radius/index.js';

/**
 * What the RADIUS benches share: the packets a NAS sends for a guest (built the
 * same way everywhere), the loopback rule of `--target`, and an open-loop
 * client that retransmits as a NAS does (RFC 2865 §2.5, RFC 5080 §2.2.1: the
 * same packet again, so the server's duplicate detection sees a duplicate).
 */

/** The Called-Station-Id every bench NAS sends: its BSSID and SSID. */
export const BENCH_CALLED_STATION = '00-11-22-33-44-55:Bench';

/** True for 127.0.0.0/8 and ::1: the only targets the benches aim at unless told otherwise. */
export function isLoopback(host: string): boolean {
  return (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
}

/**
 * `--target`'s rule for every bench: loopback unless `allowRemote` (an explicit
 * flag) says the user means to load a deployment elsewhere. Returns the refusal, or null.
 */
export function refuseTarget(host: string, allowRemote: boolean): string | null {
  if (isLoopback(host)) return null;
  if (!allowRemote) return `--target ${host} is not a loopback address (127.0.0.0/8 or ::1); add --allow-remote to load a deployment elsewhere`;
  return null;
}

/** Fresh random Request Authenticators, 4,096 at a time. */
export class Authenticators {
  private readonly pool = Buffer.allocUnsafe(16 * 4096);
  private at = this.pool.length;

  next(): Buffer {
    if (this.at === this.pool.length) { randomFillSync(this.pool); this.at = 0; }
    const a = this.pool.subarray(this.at, this.at + 16);
    this.at += 16;
    return a;
  }
}

/**
 * An Access-Request for `mac` (PAP, Message-Authenticator), as a captive-portal NAS sends it;
 * `nasPortId` names the AP (the port of the NAS) the guest is behind.
 */
export function accessRequest(w: PacketWriter, id: number, authenticator: Buffer, mac: string, password: string, secret: string, nasPortId = 'bench0'): Buffer {
  return w.begin(Code.ACCESS_REQUEST, id, authenticator).messageAuthenticator()
    .string(Attr.USER_NAME, mac).userPassword(password, secret)
    .string(Attr.CALLING_STATION_ID, mac).string(Attr.CALLED_STATION_ID, BENCH_CALLED_STATION)
    .string(Attr.NAS_PORT_ID, nasPortId)
    .finishAccessRequest(secret);
}

export interface AcctFields { status: number; mac: string; sessionId: string; inOctets: number; outOctets: number; sessionTime: number; cause?: number; nasPortId?: string; nasIp?: string }

/** An Accounting-Request (Start, Interim-Update or Stop) for one guest's session. */
export function accountingRequest(w: PacketWriter, id: number, f: AcctFields, secret: string): Buffer {
  w.begin(Code.ACCOUNTING_REQUEST, id)
    .uint32(Attr.ACCT_STATUS_TYPE, f.status)
    .string(Attr.USER_NAME, f.mac).string(Attr.CALLING_STATION_ID, f.mac)
    .string(Attr.CALLED_STATION_ID, BENCH_CALLED_STATION);
  if (f.nasPortId !== undefined) w.string(Attr.NAS_PORT_ID, f.nasPortId);
  // A NAS names itself in accounting (RFC 2866 §5: NAS-IP-Address or NAS-Identifier); the SQL stack's radacct row needs it.
  if (f.nasIp !== undefined) w.ipv4(Attr.NAS_IP_ADDRESS, f.nasIp);
  w.string(Attr.ACCT_SESSION_ID, f.sessionId)
    .uint32(Attr.ACCT_INPUT_OCTETS, f.inOctets & 0xffffffff).uint32(Attr.ACCT_OUTPUT_OCTETS, f.outOctets & 0xffffffff)
    .uint32(Attr.ACCT_SESSION_TIME, f.sessionTime).uint32(Attr.ACCT_DELAY_TIME, 0);
  if (f.status === AcctStatusType.STOP) w.uint32(Attr.ACCT_TERMINATE_CAUSE, f.cause ?? 1);
  return w.finishSignedRequest(secret);
}

/** How a request ended: its reply's code and the time from `dueAt`, or why none came. */
export type Outcome = { code: number; ms: number; tries: number } | { lost: true; tries: number } | { refused: 'window' };

const RESERVE = 64;

interface Pending { packet: Buffer; port: number; dueAt: number; sentAt: number; tries: number; done: (o: Outcome) => void }

/**
 * One UDP socket and its 256 Identifiers, reused oldest-freed first: the server may
 * still answer a retransmission of the request that last held an Identifier.
 */
class Lane {
  readonly slots: (Pending | undefined)[] = new Array(256);
  /** The Request Authenticator of the request each Identifier last carried, to tell a late duplicate answer from a bad one. */
  readonly last: (Buffer | undefined)[] = new Array(256);
  readonly free: number[] = Array.from({ length: 256 }, (_, i) => i);
  constructor(readonly socket: Socket) {}
}

export interface OpenLoopOptions {
  host: string; secret: string;
  /** The sockets' own address (the NAS's); unset: the wildcard, so a remote --target is reachable. */
  localAddress?: string;
  /** Wait for a reply before sending the same packet again, ms. */
  timeoutMs: number;
  /** Sends of one packet at most (1: no retransmission). */
  tries: number;
  /** Sockets at most (256 requests outstanding each): beyond, a request is refused, not queued. */
  maxLanes: number;
}

/**
 * An open-loop RADIUS client: a request leaves when the caller sends it, however
 * many are outstanding (a new socket opens when every Identifier of the others is
 * in use), and its latency counts from the time it was due, through every
 * retransmission. Replies are matched by socket and Identifier and their Response
 * Authenticator checked; a bad one counts in `bad` and the request keeps waiting.
 */
export class OpenLoopRadius {
  readonly crypto = new RadiusCrypto();
  readonly writer = new PacketWriter(this.crypto);
  readonly authenticators = new Authenticators();
  private readonly lanes: Lane[] = [];
  private timer: NodeJS.Timeout | undefined;
  outstanding = 0;
  /** Answers that matched no request (nor the last one of their Identifier), or failed their Response Authenticator. */
  bad = 0;
  /** Answers to a request already answered: the server answering a retransmission too (RFC 5080 §2.2.2). */
  lateDuplicates = 0;
  retransmitted = 0;
  private closed = false;

  constructor(private readonly o: OpenLoopOptions) {}

  start(): void {
    // A NAS's retry clock: coarse on purpose (a tenth of the time-out), as a NAS's is.
    this.timer = setInterval(() => this.expire(), Math.max(10, Math.floor(this.o.timeoutMs / 10)));
  }

  /**
   * Builds (with the Identifier it gets) and sends one packet to `port`; `done` runs once.
   * `build` gets the Identifier; the packet's Request Authenticator is bytes 4..20 of what it returns.
   */
  send(port: number, dueAt: number, build: (id: number) => Buffer, done: (o: Outcome) => void): void {
    // A lane keeps a reserve of Identifiers (a new socket opens first), so an Identifier is reused only
    // after RESERVE others freed since: a late answer to a retransmission is then told from a bad one.
    let lane = this.lanes.find((l) => l.free.length > RESERVE);
    if (!lane && this.lanes.length < this.o.maxLanes) lane = this.openLane();
    lane ??= this.lanes.find((l) => l.free.length > 0);
    if (!lane) { done({ refused: 'window' }); return; }
    const id = lane.free.shift()!;
    const packet = build(id);
    const p: Pending = { packet, port, dueAt, sentAt: performance.now(), tries: 1, done };
    lane.slots[id] = p;
    this.outstanding++;
    lane.socket.send(packet, port, this.o.host);
  }

  /** Sends of lost requests still waiting are given up; sockets closed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const lane of this.lanes) {
      for (let id = 0; id < 256; id++) this.finish(lane, id, (p) => ({ lost: true, tries: p.tries }));
      lane.socket.close();
    }
  }

  private openLane(): Lane {
    const v6 = isIP(this.o.host) === 6;
    const s = createSocket(v6 ? 'udp6' : 'udp4');
    // Bound lazily by the first send, on the wildcard address unless the NAS has one of its own: a remote --target must be reachable.
    try { s.bind(0, this.o.localAddress); } catch { /* bound by send */ }
    const lane = new Lane(s);
    s.on('listening', () => {
      try { s.setRecvBufferSize(4 * 1024 * 1024); s.setSendBufferSize(4 * 1024 * 1024); } catch { /* kernel cap */ }
    });
    s.on('message', (msg) => {
      const len = checkFraming(msg);
      const id = msg.length > 1 ? msg[1]! : -1;
      if (len < 0 || id < 0) { this.bad++; return; }
      const p = lane.slots[id];
      if (!p || !this.crypto.verifyResponseAuthenticator(msg, len, p.packet.subarray(4, HEADER_LENGTH), this.o.secret)) {
        const last = lane.last[id];
        if (last && this.crypto.verifyResponseAuthenticator(msg, len, last, this.o.secret)) this.lateDuplicates++; else this.bad++;
        return;
      }
      this.finish(lane, id, (q) => ({ code: msg[0]!, ms: performance.now() - q.dueAt, tries: q.tries }));
    });
    this.lanes.push(lane);
    return lane;
  }

  private finish(lane: Lane, id: number, outcome: (p: Pending) => Outcome): void {
    const p = lane.slots[id];
    if (!p) return;
    lane.slots[id] = undefined;
    lane.last[id] = p.packet.subarray(4, HEADER_LENGTH);
    lane.free.push(id);
    this.outstanding--;
    p.done(outcome(p));
  }

  private expire(): void {
    const now = performance.now();
    for (const lane of this.lanes) {
      for (let id = 0; id < 256; id++) {
        const p = lane.slots[id];
        if (!p || now - p.sentAt < this.o.timeoutMs) continue;
        if (p.tries >= this.o.tries) { this.finish(lane, id, (q) => ({ lost: true, tries: q.tries })); continue; }
        p.tries++;
        p.sentAt = now;
        this.retransmitted++;
        lane.socket.send(p.packet, p.port, this.o.host);
      }
    }
  }
}

export { AcctStatusType, Code };
