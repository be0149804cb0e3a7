import type { RemoteInfo, Socket } from 'node:dgram';
import { isIP, isIPv4 } from 'node:net';
import type { Logger, NasCommandResult, NasControl, NasRecord, NasSessionRef } from '../engine/index.js';
import { Attr, Code } from './attributes.js';
import { HEADER_LENGTH, checkFraming, findAttribute, readUint32 } from './codec.js';
import { RadiusErrors } from './errors.js';
import { PacketWriter } from './packet-writer.js';
import { RadiusCrypto } from './radius-crypto.js';
import { MetricName, type RadiusMetrics } from './radius-metrics.js';
import { udpSocket } from './udp-socket.js';

export interface CoaClientOptions {
  logger: Logger;
  metrics?: RadiusMetrics;
  /**
   * Gaps between transmissions in ms: the first retransmission this long after
   * the first send, the next this long after that, and so on. Default
   * [2000, 4000, 8000] (sends at 0, 2, 6 and 14 s).
   */
  retransmitDelaysMs?: readonly number[];
  /** Give up this long after the first send with {outcome: 'timeout'}. Default 30,000. */
  timeoutMs?: number;
  /** Source address (the NAS checks it against its list of dynamic-authorization clients). Default: any. */
  bindHost?: string;
  /** Requests queued per NAS for a free Identifier (256 may be outstanding); beyond this they time out at once. Default 1,024. */
  maxQueuedPerNas?: number;
  /** Calling-Station-Id from a canonical MAC; default the RFC 3580 §3.21 form "AA-BB-CC-DD-EE-FF". */
  formatMac?: (mac: string) => string;
}

/** Counters since construction, for tests and diagnostics. */
export interface CoaClientStats {
  sent: number;
  retransmitted: number;
  ack: number;
  nak: number;
  timeout: number;
  /** Responses discarded: malformed, unknown source or Identifier, wrong code, bad authenticator. */
  droppedResponses: number;
}

interface Pending {
  readonly packet: Buffer;
  readonly requestAuthenticator: Buffer;
  readonly secret: string;
  readonly ackCode: number;
  readonly nakCode: number;
  readonly resolve: (r: NasCommandResult) => void;
  retransmits: number;
  timer: NodeJS.Timeout | null;
  deadline: NodeJS.Timeout | null;
}

/**
 * One NAS (address and port): its 256 Identifiers and the requests waiting
 * for one. `used` counts Identifiers handed out, whether their packet is in
 * `slots` yet or only reserved; a destination with none in use and nobody
 * waiting is forgotten.
 */
class Destination {
  readonly slots: (Pending | undefined)[] = new Array(256);
  /** Identifiers handed out whose packet is not yet in `slots`. */
  readonly reserved = new Set<number>();
  readonly waiting: ((id: number) => void)[] = [];
  used = 0;
  private next = Math.floor(Math.random() * 256);

  constructor(readonly ip: string, readonly port: number, readonly socket: Socket) {}

  /** A free Identifier now, or a promise of one; -1 when the queue is full. */
  acquire(maxQueued: number): number | Promise<number> {
    if (this.used < 256) {
      while (this.slots[this.next] !== undefined || this.reserved.has(this.next)) this.next = (this.next + 1) & 255;
      const id = this.next;
      this.next = (this.next + 1) & 255;
      this.reserved.add(id);
      this.used++;
      return id;
    }
    if (this.waiting.length >= maxQueued) return -1;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Frees `id`, or hands it straight to the first waiting request. */
  release(id: number): void {
    this.slots[id] = undefined;
    this.reserved.delete(id);
    const next = this.waiting.shift();
    if (next) {
      this.reserved.add(id);
      next(id);
    } else {
      this.used--;
    }
  }

  get idle(): boolean {
    return this.used === 0 && this.waiting.length === 0;
  }
}

/**
 * The RFC 5176 Dynamic Authorization client: Disconnect-Request and
 * CoA-Request to the NAS, implementing the engine's NasControl port.
 *
 * Each request is encoded once; retransmissions send the same octets (same
 * Identifier, same Request Authenticator, same Event-Timestamp) so the NAS
 * can recognise them as duplicates (RFC 5080 §2.2.2). A reply is accepted only
 * from the NAS's address and port, for an outstanding Identifier, with the
 * matching ACK/NAK code and a correct Response Authenticator (and
 * Message-Authenticator when present); anything else is discarded and the
 * request keeps waiting.
 */
export class CoaClient implements NasControl {
  private readonly log: Logger;
  private readonly metrics: RadiusMetrics | undefined;
  private readonly delays: readonly number[];
  private readonly timeoutMs: number;
  private readonly bindHost: string | undefined;
  private readonly maxQueued: number;
  private readonly formatMac: (mac: string) => string;
  private readonly crypto = new RadiusCrypto();
  private readonly writer = new PacketWriter(this.crypto);
  private readonly sockets = new Map<'udp4' | 'udp6', Promise<Socket>>();
  private readonly destinations = new Map<string, Destination>();
  private readonly counts: CoaClientStats = { sent: 0, retransmitted: 0, ack: 0, nak: 0, timeout: 0, droppedResponses: 0 };
  private closed = false;

  constructor(opts: CoaClientOptions) {
    const bad = (why: string) => RadiusErrors.RADIUS_BAD_OPTIONS(`CoaClient: ${why}`);
    if (!opts?.logger) throw bad('logger is required');
    const delays = opts.retransmitDelaysMs ?? [2000, 4000, 8000];
    if (!Array.isArray(delays) || delays.some((d) => !Number.isFinite(d) || d <= 0)) throw bad('retransmitDelaysMs must be positive numbers');
    const timeoutMs = opts.timeoutMs ?? 30_000;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw bad('timeoutMs must be a positive number');
    if (opts.bindHost !== undefined && isIP(opts.bindHost) === 0) throw bad(`bindHost must be an IP address, got ${JSON.stringify(opts.bindHost)}`);
    const maxQueued = opts.maxQueuedPerNas ?? 1024;
    if (!Number.isInteger(maxQueued) || maxQueued < 0) throw bad('maxQueuedPerNas must be a non-negative integer');
    this.log = opts.logger;
    this.metrics = opts.metrics;
    this.delays = [...delays];
    this.timeoutMs = timeoutMs;
    this.bindHost = opts.bindHost;
    this.maxQueued = maxQueued;
    this.formatMac = opts.formatMac ?? ((mac) => mac.replace(/:/g, '-'));
    if (this.metrics) {
      this.metrics.counter(MetricName.COA_REQUESTS, 'RFC 5176 requests sent to NASes (first transmissions), by kind', 'kind');
      this.metrics.counter(MetricName.COA_RESULTS, 'RFC 5176 request outcomes', 'outcome');
      this.metrics.counter(MetricName.COA_DROPPED, 'RFC 5176 responses discarded');
    }
  }

  /** Disconnect-Request (code 40): ends the session on the NAS. */
  disconnect(ref: NasSessionRef): Promise<NasCommandResult> {
    return this.request(Code.DISCONNECT_REQUEST, Code.DISCONNECT_ACK, Code.DISCONNECT_NAK, ref, null);
  }

  /**
   * CoA-Request (code 43) carrying the new Session-Timeout (seconds
   * remaining, at least 1: several NASes read 0 as "no limit", so a session
   * with no time left should be disconnected instead). Rejects otherwise.
   */
  async changeAuthorization(ref: NasSessionRef, change: { sessionTimeout: number }): Promise<NasCommandResult> {
    const t = change.sessionTimeout;
    if (!Number.isInteger(t) || t < 1) throw RadiusErrors.RADIUS_BAD_VALUE(`Session-Timeout must be a positive integer, got ${t}; use disconnect()`);
    return this.request(Code.COA_REQUEST, Code.COA_ACK, Code.COA_NAK, ref, t);
  }

  stats(): CoaClientStats {
    return { ...this.counts };
  }

  /** Ends every outstanding request as a timeout and closes the sockets. */
  async close(): Promise<void> {
    this.closed = true;
    for (const dest of this.destinations.values()) {
      for (let id = 0; id < 256; id++) {
        const p = dest.slots[id];
        if (p) this.finish(dest, id, p, { outcome: 'timeout' });
      }
      for (const w of dest.waiting.splice(0)) w(-1);
    }
    this.destinations.clear();
    const sockets = await Promise.allSettled([...this.sockets.values()]);
    this.sockets.clear();
    await Promise.all(sockets.map((s) => new Promise<void>((resolve) => {
      if (s.status !== 'fulfilled') return resolve();
      try { s.value.close(() => resolve()); } catch { resolve(); }
    })));
  }

  private async request(code: number, ackCode: number, nakCode: number, ref: NasSessionRef, sessionTimeout: number | null): Promise<NasCommandResult> {
    const nas: NasRecord = ref.nas;
    if (this.closed) return this.outcome({ outcome: 'timeout' });
    if (isIP(nas.ip) === 0 || !Number.isInteger(nas.coaPort) || nas.coaPort <= 0 || nas.coaPort > 65535) {
      throw RadiusErrors.RADIUS_BAD_VALUE(`NAS ${nas.id}: cannot send to ${nas.ip}:${nas.coaPort}`);
    }
    const socket = await this.socket(isIP(nas.ip) === 6 ? 'udp6' : 'udp4');
    if (this.closed) return this.outcome({ outcome: 'timeout' });
    // Find the destination and take an Identifier in the same tick: from here
    // on `dest` is not idle, so finish() cannot forget it under us.
    const dest = this.destination(nas, socket);
    const got = dest.acquire(this.maxQueued);
    const id = typeof got === 'number' ? got : await got;
    if (id < 0) {
      this.log.debug({ nas: nas.id }, 'CoA queue full: request not sent');
      return this.outcome({ outcome: 'timeout' });
    }
    let packet: Buffer;
    try {
      packet = this.encode(code, id, ref, sessionTimeout);
    } catch (err) {
      dest.release(id);
      if (dest.idle) this.destinations.delete(key(dest.ip, dest.port));
      throw err;
    }
    this.metrics?.inc(MetricName.COA_REQUESTS, code === Code.DISCONNECT_REQUEST ? 'disconnect' : 'coa');
    return new Promise<NasCommandResult>((resolve) => {
      const p: Pending = {
        packet, requestAuthenticator: packet.subarray(4, HEADER_LENGTH), secret: nas.secret,
        ackCode, nakCode, resolve, retransmits: 0, timer: null, deadline: null,
      };
      dest.reserved.delete(id);
      dest.slots[id] = p;
      p.deadline = setTimeout(() => this.finish(dest, id, p, { outcome: 'timeout' }), this.timeoutMs);
      this.transmit(dest, p);
      this.counts.sent++;
      this.scheduleRetransmit(dest, p);
    });
  }

  /** The request's octets: Message-Authenticator first, then who the session is, then the change. */
  private encode(code: number, id: number, ref: NasSessionRef, sessionTimeout: number | null): Buffer {
    const w = this.writer.begin(code, id).messageAuthenticator();
    if (ref.userName) w.string(Attr.USER_NAME, ref.userName);
    if (ref.mac) w.string(Attr.CALLING_STATION_ID, this.formatMac(ref.mac));
    if (ref.acctSessionId) w.string(Attr.ACCT_SESSION_ID, ref.acctSessionId);
    if (ref.framedIp && isIPv4(ref.framedIp)) w.ipv4(Attr.FRAMED_IP_ADDRESS, ref.framedIp);
    // Event-Timestamp lets the NAS refuse replays (RFC 5176 §6.4, RFC 2869 §5.3);
    // set once here, so retransmissions stay identical.
    w.uint32(Attr.EVENT_TIMESTAMP, Math.floor(Date.now() / 1000));
    if (sessionTimeout !== null) w.uint32(Attr.SESSION_TIMEOUT, sessionTimeout);
    return w.finishSignedRequest(ref.nas.secret);
  }

  private scheduleRetransmit(dest: Destination, p: Pending): void {
    const delay = this.delays[p.retransmits];
    if (delay === undefined) return;
    p.timer = setTimeout(() => {
      p.timer = null;
      p.retransmits++;
      this.counts.retransmitted++;
      this.transmit(dest, p);
      this.scheduleRetransmit(dest, p);
    }, delay);
  }

  private transmit(dest: Destination, p: Pending): void {
    try {
      dest.socket.send(p.packet, dest.port, dest.ip, this.onSent);
    } catch (err) {
      this.onSent(err as Error);
    }
  }

  private readonly onSent = (err: Error | null): void => {
    // A lost send is a lost packet: the retransmission schedule covers it.
    if (err) this.log.debug({ err }, 'CoA packet not sent');
  };

  private finish(dest: Destination, id: number, p: Pending, result: NasCommandResult): void {
    if (dest.slots[id] !== p) return;
    if (p.timer) clearTimeout(p.timer);
    if (p.deadline) clearTimeout(p.deadline);
    p.timer = p.deadline = null;
    dest.release(id);
    if (dest.idle) this.destinations.delete(key(dest.ip, dest.port));
    p.resolve(this.outcome(result));
  }

  private outcome(result: NasCommandResult): NasCommandResult {
    this.counts[result.outcome]++;
    this.metrics?.inc(MetricName.COA_RESULTS, result.outcome);
    return result;
  }

  private destination(nas: NasRecord, socket: Socket): Destination {
    const k = key(nas.ip, nas.coaPort);
    let dest = this.destinations.get(k);
    if (!dest) this.destinations.set(k, (dest = new Destination(nas.ip, nas.coaPort, socket)));
    return dest;
  }

  private socket(type: 'udp4' | 'udp6'): Promise<Socket> {
    let s = this.sockets.get(type);
    if (!s) {
      s = new Promise<Socket>((resolve, reject) => {
        const sock = udpSocket(type);
        sock.once('error', reject);
        const host = this.bindHost && (isIP(this.bindHost) === 6) === (type === 'udp6') ? this.bindHost : undefined;
        sock.bind(0, host, () => {
          sock.off('error', reject);
          sock.on('error', (err) => this.log.error({ err }, 'CoA socket error'));
          sock.on('message', (msg: Buffer, rinfo: RemoteInfo) => this.receive(msg, rinfo));
          // Pending requests keep their timers referenced; an idle client
          // should not hold the process open on its own.
          sock.unref();
          resolve(sock);
        });
      });
      s.catch(() => this.sockets.delete(type));
      this.sockets.set(type, s);
    }
    return s;
  }

  /** A datagram from a NAS. Must not throw. */
  private receive(msg: Buffer, rinfo: RemoteInfo): void {
    const len = checkFraming(msg);
    const dest = this.destinations.get(key(sourceIp(rinfo.address), rinfo.port));
    const id = msg.length > 1 ? msg[1]! : -1;
    const p = dest && id >= 0 ? dest.slots[id] : undefined;
    if (len < 0 || !dest || !p || (msg[0] !== p.ackCode && msg[0] !== p.nakCode)
      || !this.crypto.verifyResponseAuthenticator(msg, len, p.requestAuthenticator, p.secret)) {
      return this.dropResponse(rinfo);
    }
    const ma = findAttribute(msg, len, Attr.MESSAGE_AUTHENTICATOR);
    if (ma >= 0 && !this.crypto.verifyMessageAuthenticator(msg, len, ma, p.secret, p.requestAuthenticator)) return this.dropResponse(rinfo);
    if (msg[0] === p.ackCode) return this.finish(dest, id, p, { outcome: 'ack' });
    const ec = findAttribute(msg, len, Attr.ERROR_CAUSE);
    const cause = ec >= 0 ? readUint32(msg, ec) : -1;
    this.finish(dest, id, p, { outcome: 'nak', errorCause: cause >= 0 ? cause : null });
  }

  private dropResponse(rinfo: RemoteInfo): void {
    this.counts.droppedResponses++;
    this.metrics?.inc(MetricName.COA_DROPPED);
    if (this.log.isLevelEnabled('debug')) this.log.debug({ ip: rinfo.address, port: rinfo.port }, 'CoA response discarded');
  }
}

/** Destination key; IPv6 hex digits compared case-insensitively (the socket reports lower case). */
function key(ip: string, port: number): string {
  return ip.toLowerCase() + '|' + port;
}

function sourceIp(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
