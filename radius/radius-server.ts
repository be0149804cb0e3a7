import type { RemoteInfo, Socket } from 'node:dgram';
import { isIP } from 'node:net';
import type { AccessDecision, Logger, NasRecord, RadiusHandler } from '../engine/index.js';
import { readAccessRequest } from './access-request.js';
import { AccessReplyEncoder } from './access-reply-encoder.js';
import { encodeAccountingResponse, readAccountingRequest } from './accounting-request.js';
import { Attr, Code } from './attributes.js';
import { HEADER_LENGTH, checkFraming, findAttribute, readString } from './codec.js';
import { DuplicateCache } from './duplicate-cache.js';
import { DropReason } from './errors.js';
import { PacketWriter } from './packet-writer.js';
import { RadiusCrypto } from './radius-crypto.js';
import { MetricName, Timed, type RadiusMetrics } from './radius-metrics.js';
import { emptyStats, readServerOptions, RADSEC_SECRET, type Peer, type RadiusServerOptions, type RadiusServerStats } from './radius-server-options.js';
import { statusReply } from './status-server.js';
import { udpSocket } from './udp-socket.js';

type Port = 'auth' | 'acct';

/** The Authenticator field as seen by an Accounting-Request's Message-Authenticator (never written to). */
const ZERO_AUTHENTICATOR = Buffer.alloc(16);

/**
 * The RADIUS server (RFC 2865 authentication, RFC 2866 accounting) over two
 * UDP sockets. Per packet: check framing, find the NAS by source address,
 * check the authenticators, detect duplicates, translate, hand to the engine,
 * encode the reply (STYLE 8). Nothing a packet contains or an engine call
 * does can throw out of the socket handlers: every failure is a counted drop.
 */
export class RadiusServer {
  private readonly handler: RadiusHandler;
  private readonly log: Logger;
  private readonly metrics: RadiusMetrics | undefined;
  private readonly host: string;
  private readonly wantPorts: { auth: number; acct: number };
  private readonly maxInFlight: number;
  private readonly socketBufferBytes: number;
  private readonly reusePort: boolean;
  private readonly udp: boolean;
  private readonly encoder: AccessReplyEncoder;
  /** Hash state and prepared secrets; synchronous use only, like the writer. */
  private readonly crypto = new RadiusCrypto();
  /** Shared by all replies: encoding is synchronous, so one scratch buffer suffices. */
  private readonly writer = new PacketWriter(this.crypto);
  private readonly cache: DuplicateCache;
  /** 20 octets of code, Identifier, authenticator and port, then the address (at most 45 characters). */
  private readonly counts: RadiusServerStats;
  private auth: Socket | null = null;
  private acct: Socket | null = null;
  private bound = { auth: 0, acct: 0 };
  private running = false;
  /**
   * The NAS records as RadSec sees them, one copy per record: the secret `radsec` (RFC 6614 §2.3), and no
   * Message-Authenticator required, since TLS already protects every packet against the forgery it guards
   * against (Blast-RADIUS needs an attacker inside the stream).
   */
  private readonly overTls = new WeakMap<NasRecord, NasRecord>();
  /** RadSec connections (their Peer) already logged for a certificate that is not their NAS's. */
  private readonly certWarned = new WeakSet<Peer>();

  constructor(opts: RadiusServerOptions) {
    const s = readServerOptions(opts);
    this.handler = s.handler;
    this.log = s.log;
    this.metrics = s.metrics;
    this.host = s.host;
    this.wantPorts = s.ports;
    this.maxInFlight = s.maxInFlight;
    this.socketBufferBytes = s.socketBufferBytes;
    this.reusePort = s.reusePort;
    this.udp = s.udp;
    this.cache = new DuplicateCache(s.duplicateTtlMs, s.duplicateMaxEntries);
    this.encoder = new AccessReplyEncoder(s.dictionary);
    this.counts = emptyStats();
    if (this.metrics) {
      this.metrics.counter(MetricName.RECEIVED, 'RADIUS datagrams received, by port', 'port');
      this.metrics.counter(MetricName.REPLIES, 'RADIUS replies sent, by kind', 'kind');
      this.metrics.counter(MetricName.DROPPED, 'RADIUS packets silently discarded, by reason', 'reason');
      this.metrics.gauge?.(MetricName.IN_FLIGHT, 'RADIUS requests waiting for the engine', () => this.counts.inFlight);
      this.metrics.histogram?.(MetricName.DURATION, 'RADIUS request latency, from the packet read to its reply sent (or given up on an engine failure), by port and result', 'port,result');
    }
  }

  /** Binds both sockets; resolves with the bound ports. */
  async start(): Promise<{ auth: number; acct: number }> {
    if (this.running) return this.ports;
    if (!this.udp) {
      this.running = true;
      return this.ports;
    }
    try {
      this.auth = await this.bind('auth', this.wantPorts.auth);
      this.acct = await this.bind('acct', this.wantPorts.acct);
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.bound = { auth: this.auth.address().port, acct: this.acct.address().port };
    this.running = true;
    this.log.info({ host: this.host, ...this.bound }, 'RADIUS server listening');
    return this.ports;
  }

  /** Closes both sockets. Engine calls still running finish, but their replies are not sent. */
  async stop(): Promise<void> {
    this.running = false;
    const close = (s: Socket | null) => new Promise<void>((resolve) => {
      if (!s) return resolve();
      try { s.close(() => resolve()); } catch { resolve(); }
    });
    await Promise.all([close(this.auth), close(this.acct)]);
    this.auth = this.acct = null;
    this.cache.clear();
  }

  /** The bound ports (0 before start). */
  get ports(): { auth: number; acct: number } {
    return { ...this.bound };
  }

  stats(): RadiusServerStats {
    return { ...this.counts, received: { ...this.counts.received }, dropped: { ...this.counts.dropped } };
  }

  private bind(port: Port, want: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = udpSocket(isIP(this.host) === 6 ? 'udp6' : 'udp4', this.reusePort);
      const onMessage = port === 'auth'
        ? (msg: Buffer, rinfo: RemoteInfo) => this.receive(msg, rinfo, 'auth')
        : (msg: Buffer, rinfo: RemoteInfo) => this.receive(msg, rinfo, 'acct');
      s.once('error', reject);
      s.bind(want, this.host, () => {
        s.off('error', reject);
        s.on('error', (err) => this.log.error({ err, port }, 'RADIUS socket error'));
        try { s.setRecvBufferSize(this.socketBufferBytes); } catch { /* kernel limit: keep its default */ }
        s.on('message', onMessage);
        resolve(s);
      });
    });
  }

  /**
   * A packet from a RadSec connection (RFC 6614), framed by its listener: both
   * kinds share the connection, so the code says which port's rules apply.
   * Matched to a NAS exactly as a datagram from the peer's address. Must not throw.
   */
  receiveStream(msg: Buffer, peer: Peer): void {
    this.receive(msg, peer, msg[0] === Code.ACCOUNTING_REQUEST ? 'acct' : 'auth');
  }

  /** Entry point of every datagram. Must not throw. */
  private receive(msg: Buffer, rinfo: Peer, port: Port): void {
    this.counts.received[port]++;
    this.metrics?.inc(MetricName.RECEIVED, port);
    const len = checkFraming(msg);
    if (len < 0) return this.drop(DropReason.MALFORMED, rinfo);
    if (msg[0] !== (port === 'auth' ? Code.ACCESS_REQUEST : Code.ACCOUNTING_REQUEST) && msg[0] !== Code.STATUS_SERVER) {
      return this.drop(DropReason.UNKNOWN_CODE, rinfo);
    }
    let found: NasRecord | null | Promise<NasRecord | null>;
    try {
      found = this.handler.nasByIp(sourceIp(rinfo.address), () => nasIdentifier(msg, len));
    } catch (err) {
      return this.drop(DropReason.HANDLER_ERROR, rinfo, err);
    }
    // Most lookups are answered from memory: stay synchronous when they are.
    if (isPromiseLike(found)) {
      found.then(
        (nas) => this.withNas(msg, len, rinfo, port, nas),
        (err) => this.drop(DropReason.HANDLER_ERROR, rinfo, err),
      );
    } else {
      this.withNas(msg, len, rinfo, port, found);
    }
  }

  private withNas(msg: Buffer, len: number, rinfo: Peer, port: Port, found: NasRecord | null): void {
    if (!this.running) return;
    if (!found) return this.drop(DropReason.UNKNOWN_NAS, rinfo);
    // A NAS client pinned to a certificate name takes RadSec packets only from a connection presenting it (migration 029).
    if (rinfo.reply && found.radsecCertName !== undefined && !rinfo.certNames?.includes(found.radsecCertName)) return this.certRefused(rinfo, found);
    const nas = rinfo.reply ? this.radsecView(found) : found;
    try {
      if (msg[0] === Code.STATUS_SERVER) this.status(msg, len, rinfo, nas, port);
      else if (port === 'auth') this.access(msg, len, rinfo, nas);
      else this.accounting(msg, len, rinfo, nas);
    } catch (err) {
      // Only a bug of ours gets here; the packet is dropped, the server goes on.
      this.drop(DropReason.HANDLER_ERROR, rinfo, err);
    }
  }

  /**
   * Dropped and counted like any refused packet; logged at warn once per connection (a NAS retransmits,
   * and a flood of packets must not become a flood of lines): the names, never a secret.
   */
  private certRefused(rinfo: Peer, nas: NasRecord): void {
    this.drop(DropReason.RADSEC_CERT_MISMATCH, rinfo);
    if (this.certWarned.has(rinfo)) return;
    this.certWarned.add(rinfo);
    this.log.warn({ ip: rinfo.address, nas: nas.id, tenant: nas.tenantId, expected: nas.radsecCertName, presented: rinfo.certNames },
      'RadSec packet dropped: the client certificate does not carry the name its NAS client names');
  }

  private radsecView(nas: NasRecord): NasRecord {
    let view = this.overTls.get(nas);
    if (!view) this.overTls.set(nas, view = { ...nas, secret: RADSEC_SECRET, requireMessageAuthenticator: false });
    return view;
  }

  /** Status-Server (RFC 5997): answered at once, never cached nor handed to the engine (status-server.ts). */
  private status(msg: Buffer, len: number, rinfo: RemoteInfo, nas: NasRecord, port: Port): void {
    const reply = statusReply(this.crypto, this.writer, msg, len, nas.secret, port);
    if (!Buffer.isBuffer(reply)) return this.drop(reply, rinfo);
    this.counts.statusAnswered++;
    this.metrics?.inc(MetricName.REPLIES, 'status_server');
    this.send(port === 'auth' ? this.auth : this.acct, reply, rinfo);
  }

  private access(msg: Buffer, len: number, rinfo: RemoteInfo, nas: NasRecord): void {
    // Authenticate before decoding anything (RFC 3579 §3.2; Blast-RADIUS).
    const ma = findAttribute(msg, len, Attr.MESSAGE_AUTHENTICATOR);
    if (ma < 0) {
      if (nas.requireMessageAuthenticator) return this.drop(DropReason.MISSING_MESSAGE_AUTHENTICATOR, rinfo);
    } else if (!this.crypto.verifyMessageAuthenticator(msg, len, ma, nas.secret, null)) {
      return this.drop(DropReason.BAD_MESSAGE_AUTHENTICATOR, rinfo);
    }
    const seen = this.cache.seen(msg, rinfo.port, rinfo.address);
    if (seen >= 0) return this.answerDuplicate(seen, rinfo, this.auth);
    if (this.counts.inFlight >= this.maxInFlight) return this.drop(DropReason.OVERLOADED, rinfo);
    const req = readAccessRequest(msg, len, nas, this.crypto);
    if (!req) return this.drop(DropReason.INVALID_ATTRIBUTE, rinfo);

    const entry = this.cache.begin();
    this.counts.inFlight++;
    const startMs = performance.now();
    let decided: AccessDecision | PromiseLike<AccessDecision>;
    try {
      decided = this.handler.authorize(req);
    } catch (err) {
      decided = Promise.reject(err);
    }
    // An answer the engine knew at once is sent at once: no promise, no microtask.
    if (!isPromiseLike(decided)) return this.decidedAccess(msg, len, rinfo, nas, entry, decided, startMs);
    decided.then(
      (decision) => this.decidedAccess(msg, len, rinfo, nas, entry, decision, startMs),
      (err) => { this.failed(entry, rinfo, err); this.timed(Timed.AUTH_ERROR, startMs); },
    );
  }

  private decidedAccess(msg: Buffer, len: number, rinfo: RemoteInfo, nas: NasRecord, entry: number, decision: AccessDecision, startMs: number): void {
    this.replyAccess(msg, len, rinfo, nas, entry, decision);
    this.timed(decision.accept ? Timed.ACCEPT : Timed.REJECT, startMs);
  }

  private replyAccess(msg: Buffer, len: number, rinfo: RemoteInfo, nas: NasRecord, entry: number, decision: AccessDecision): void {
    this.counts.inFlight--;
    let reply: Buffer;
    try {
      reply = this.encoder.encode(this.writer, msg, len, decision, nas);
    } catch (err) {
      return this.forgetAndDrop(entry, rinfo, err);
    }
    this.cache.answered(entry, reply);
    if (decision.accept) {
      this.counts.accepts++;
      this.metrics?.inc(MetricName.REPLIES, 'access_accept');
    } else {
      this.counts.rejects++;
      this.metrics?.inc(MetricName.REPLIES, 'access_reject');
    }
    this.send(this.auth, reply, rinfo);
  }

  private accounting(msg: Buffer, len: number, rinfo: RemoteInfo, nas: NasRecord): void {
    // RFC 2866 §3: the Request Authenticator is an MD5 over the packet and the secret.
    if (!this.crypto.verifyRequestAuthenticator(msg, len, nas.secret)) return this.drop(DropReason.BAD_AUTHENTICATOR, rinfo);
    const ma = findAttribute(msg, len, Attr.MESSAGE_AUTHENTICATOR);
    if (ma >= 0 && !this.crypto.verifyMessageAuthenticator(msg, len, ma, nas.secret, ZERO_AUTHENTICATOR)) {
      return this.drop(DropReason.BAD_MESSAGE_AUTHENTICATOR, rinfo);
    }
    const seen = this.cache.seen(msg, rinfo.port, rinfo.address);
    if (seen >= 0) return this.answerDuplicate(seen, rinfo, this.acct);
    if (this.counts.inFlight >= this.maxInFlight) return this.drop(DropReason.OVERLOADED, rinfo);
    const req = readAccountingRequest(msg, len, nas);
    if (typeof req === 'string') return this.drop(req, rinfo);

    const entry = this.cache.begin();
    this.counts.inFlight++;
    const startMs = performance.now();
    let recorded: PromiseLike<void>;
    try {
      recorded = settle(this.handler.account(req));
    } catch (err) {
      recorded = Promise.reject(err);
    }
    // RFC 2866 §2: answer only once the record is stored; on failure stay
    // silent so the NAS retransmits.
    recorded.then(
      () => { this.replyAccounting(msg, len, rinfo, nas, entry); this.timed(Timed.RESPONSE, startMs); },
      (err) => { this.failed(entry, rinfo, err); this.timed(Timed.ACCT_ERROR, startMs); },
    );
  }

  private replyAccounting(msg: Buffer, len: number, rinfo: RemoteInfo, nas: NasRecord, entry: number): void {
    this.counts.inFlight--;
    let reply: Buffer;
    try {
      reply = encodeAccountingResponse(this.writer, msg, len, nas.secret);
    } catch (err) {
      return this.forgetAndDrop(entry, rinfo, err);
    }
    this.cache.answered(entry, reply);
    this.counts.accountingResponses++;
    this.metrics?.inc(MetricName.REPLIES, 'accounting_response');
    this.send(this.acct, reply, rinfo);
  }

  /** A request's latency in the histogram (MetricName.DURATION). */
  private timed(labelValue: string, startMs: number): void {
    this.metrics?.observe?.(MetricName.DURATION, labelValue, (performance.now() - startMs) / 1000);
  }

  /** The engine failed: forget the request so its retransmission is tried again, and send nothing. */
  private failed(entry: number, rinfo: RemoteInfo, err: unknown): void {
    this.counts.inFlight--;
    this.forgetAndDrop(entry, rinfo, err);
  }

  private forgetAndDrop(entry: number, rinfo: RemoteInfo, err: unknown): void {
    this.cache.forget(entry);
    this.drop(DropReason.HANDLER_ERROR, rinfo, err);
  }

  private answerDuplicate(entry: number, rinfo: RemoteInfo, socket: Socket | null): void {
    const reply = this.cache.reply(entry);
    if (reply === null) return this.drop(DropReason.DUPLICATE_IN_FLIGHT, rinfo);
    this.counts.duplicatesAnswered++;
    this.metrics?.inc(MetricName.REPLIES, 'duplicate');
    this.send(socket, reply, rinfo);
  }

  /**
   * No callback: with one, dgram queues a tick per datagram to report a send that finished at once. A reply
   * the kernel refused is lost either way, and the NAS sends its request again.
   */
  private send(socket: Socket | null, reply: Buffer, rinfo: Peer): void {
    if (!this.running) return;
    try {
      if (rinfo.reply) rinfo.reply(reply);
      else socket?.send(reply, rinfo.port, rinfo.address);
    } catch (err) {
      // Runs inside promise callbacks: a throw here would be an unhandled rejection.
      this.log.debug({ err }, 'RADIUS reply not sent');
    }
  }

  private drop(reason: DropReason, rinfo: RemoteInfo, err?: unknown): void {
    this.counts.dropped[reason]++;
    this.metrics?.inc(MetricName.DROPPED, reason);
    if (this.log.isLevelEnabled('debug')) this.log.debug({ reason, ip: rinfo.address, port: rinfo.port, err }, 'RADIUS packet dropped');
  }
}

/** The packet's NAS-Identifier (attribute 32), if it has one. */
function nasIdentifier(msg: Buffer, len: number): string | undefined {
  const at = findAttribute(msg, len, Attr.NAS_IDENTIFIER);
  return at < 0 ? undefined : readString(msg, at);
}

function isPromiseLike<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** The handler's answer as something with `then`, even if it broke its contract and returned a plain value. */
function settle<T>(v: T | PromiseLike<T>): PromiseLike<T> {
  return isPromiseLike(v) ? v : Promise.resolve(v);
}

/** An IPv4 client seen through a dual-stack socket arrives as ::ffff:a.b.c.d; NAS records hold a.b.c.d. */
function sourceIp(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
