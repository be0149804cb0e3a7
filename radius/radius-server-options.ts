import { isIP } from 'node:net';
import type { RemoteInfo } from 'node:dgram';
import type { Logger, RadiusHandler } from '../engine/index.js';
import { DropReason, RadiusErrors } from './errors.js';
import { RadiusDictionary } from './radius-dictionary.js';
import type { RadiusMetrics } from './radius-metrics.js';

/**
 * What a RadiusServer is built with and what it reports: its options, checked
 * once at construction (a bad option fails there with RADIUS_BAD_OPTIONS, as
 * piscina's do), its counters, and the peer a packet came from.
 */

export interface RadiusServerOptions {
  /** The engine side: NAS lookup, authorization, accounting. */
  handler: RadiusHandler;
  /** Access-Request port (1812); 0 picks a free one. */
  authPort: number;
  /** Accounting-Request port (1813); 0 picks a free one. */
  acctPort: number;
  /** IP address to bind, e.g. '0.0.0.0', '::' or '127.0.0.1'. */
  host: string;
  logger: Logger;
  metrics?: RadiusMetrics;
  /** Vendor dictionaries; default: radius/dictionaries, loaded in the constructor. */
  dictionary?: RadiusDictionary;
  /** How long a request is remembered for duplicate detection (RFC 5080 §2.2.2). Default 30 s. */
  duplicateTtlMs?: number;
  /** At most this many remembered requests. Default 100,000. */
  duplicateMaxEntries?: number;
  /** Requests waiting for the engine beyond this are dropped (the NAS retransmits). Default 10,000. */
  maxInFlight?: number;
  /** SO_RCVBUF per socket, to absorb bursts while the event loop is busy. Default 4 MiB (the kernel may cap it). */
  socketBufferBytes?: number;
  /**
   * SO_REUSEPORT on both sockets: several RADIUS threads bind the same ports and the kernel hashes each
   * datagram by its source and destination to one of them (radius-threads.ts). Default false.
   */
  reusePort?: boolean;
  /**
   * false: no UDP socket at all; the server only answers what receiveStream() hands it (RadSec on the main
   * thread while RADIUS threads own the UDP ports). Default true.
   */
  udp?: boolean;
}

/** Counters since start, for tests and diagnostics; the same figures go to `metrics`. */
export interface RadiusServerStats {
  received: { auth: number; acct: number };
  accepts: number;
  rejects: number;
  accountingResponses: number;
  /** Retransmissions answered from the duplicate cache. */
  duplicatesAnswered: number;
  /** Status-Server packets answered (RFC 5997). */
  statusAnswered: number;
  dropped: Record<DropReason, number>;
  inFlight: number;
}

/**
 * Where a packet came from and its reply goes: a UDP sender (Node's
 * RemoteInfo, answered from the socket it reached), or a RadSec connection
 * (radsec-listener.ts), which answers on its own TLS stream with `reply`.
 */
export interface Peer extends RemoteInfo {
  reply?: (packet: Buffer) => void;
  /** A RadSec connection's client certificate names, lower case (radsec-listener.ts): what a NAS record's radsecCertName must be one of. */
  certNames?: readonly string[];
}

/** RFC 6614 §2.3: over TLS the RADIUS shared secret is this fixed string; TLS carries the protection. */
export const RADSEC_SECRET = 'radsec';

/** The options checked, with their defaults. */
export interface ServerSettings {
  handler: RadiusHandler;
  log: Logger;
  metrics: RadiusMetrics | undefined;
  host: string;
  ports: { auth: number; acct: number };
  maxInFlight: number;
  socketBufferBytes: number;
  reusePort: boolean;
  udp: boolean;
  duplicateTtlMs: number;
  duplicateMaxEntries: number;
  dictionary: RadiusDictionary;
}

/** Checks the options (throws RADIUS_BAD_OPTIONS naming the first bad one) and fills the defaults. */
export function readServerOptions(opts: RadiusServerOptions): ServerSettings {
  const bad = (why: string) => RadiusErrors.RADIUS_BAD_OPTIONS(`RadiusServer: ${why}`);
  const h = opts?.handler;
  if (!h || typeof h.nasByIp !== 'function' || typeof h.authorize !== 'function' || typeof h.account !== 'function') {
    throw bad('handler must implement nasByIp, authorize and account');
  }
  for (const [k, v] of [['authPort', opts.authPort], ['acctPort', opts.acctPort]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 65535) throw bad(`${k} must be an integer 0..65535, got ${String(v)}`);
  }
  if (opts.authPort !== 0 && opts.authPort === opts.acctPort) throw bad('authPort and acctPort must differ');
  if (typeof opts.host !== 'string' || isIP(opts.host) === 0) throw bad(`host must be an IP address, got ${JSON.stringify(opts.host)}`);
  if (!opts.logger) throw bad('logger is required');
  const positive = (name: string, v: number | undefined, dflt: number): number => {
    if (v === undefined) return dflt;
    if (!Number.isInteger(v) || v <= 0) throw bad(`${name} must be a positive integer, got ${String(v)}`);
    return v;
  };
  return {
    handler: h,
    log: opts.logger,
    metrics: opts.metrics,
    host: opts.host,
    ports: { auth: opts.authPort, acct: opts.acctPort },
    maxInFlight: positive('maxInFlight', opts.maxInFlight, 10_000),
    socketBufferBytes: positive('socketBufferBytes', opts.socketBufferBytes, 4 * 1024 * 1024),
    reusePort: opts.reusePort === true,
    udp: opts.udp !== false,
    duplicateTtlMs: positive('duplicateTtlMs', opts.duplicateTtlMs, 30_000),
    duplicateMaxEntries: positive('duplicateMaxEntries', opts.duplicateMaxEntries, 100_000),
    dictionary: opts.dictionary ?? RadiusDictionary.load(),
  };
}

/** Every counter at zero, every drop reason present. */
export function emptyStats(): RadiusServerStats {
  const dropped = {} as Record<DropReason, number>;
  for (const r of Object.values(DropReason)) dropped[r] = 0;
  return { received: { auth: 0, acct: 0 }, accepts: 0, rejects: 0, accountingResponses: 0, duplicatesAnswered: 0, statusAnswered: 0, dropped, inFlight: 0 };
}
