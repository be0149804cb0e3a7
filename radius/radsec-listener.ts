import { isIP } from 'node:net';
import { createServer, type PeerCertificate, type Server, type TLSSocket } from 'node:tls';
import type { Logger } from '../engine/index.js';
import { HEADER_LENGTH, MAX_PACKET_LENGTH } from './codec.js';
import type { Peer } from './radius-server-options.js';
import type { RadiusServer } from './radius-server.js';

export interface RadsecListenerOptions {
  /** The RADIUS server whose rules, NAS lookup and duplicate detection the packets go through. */
  server: RadiusServer;
  host: string;
  /** TCP port; 2083 in production (RFC 6614 §2.1), 0 picks a free one. */
  port: number;
  /** PEM: this server's certificate (chain) and key, and the CA the NASes' client certificates must chain to. */
  cert: string | Buffer;
  key: string | Buffer;
  ca: string | Buffer;
  logger: Logger;
  /** A connection with no packet for this long is closed (the NAS reconnects when it has one). Default 10 minutes. */
  idleMs?: number;
  /** A TLS handshake must finish within this. Default 10 s. */
  handshakeMs?: number;
  /** At most this many connections at once. Default 1,000. */
  maxConnections?: number;
}

/**
 * RADIUS over TLS (RFC 6614, "RadSec"): NASes and cloud controllers connect
 * over TCP with a client certificate that must chain to the configured CA
 * (mutual TLS, 1.2 or later); each connection carries Access-, Accounting-
 * and Status-Server requests, framed by the RADIUS Length field. Every
 * packet goes through the UDP server's own path (`receiveStream`): the NAS is
 * found by the peer's address (and NAS-Identifier) as for a datagram, the
 * authenticators use the secret `radsec`, duplicates are detected, and the
 * reply goes back on the same connection. A length that cannot be a RADIUS
 * packet leaves the stream unframeable, so the connection is closed (§2.6).
 */
export class RadsecListener {
  private readonly tls: Server;
  private readonly log: Logger;
  private readonly connections = new Set<TLSSocket>();
  private boundPort = 0;

  constructor(private readonly opts: RadsecListenerOptions) {
    this.log = opts.logger;
    this.tls = createServer({
      cert: opts.cert, key: opts.key, ca: opts.ca,
      requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2',
      handshakeTimeout: opts.handshakeMs ?? 10_000,
    });
    this.tls.maxConnections = opts.maxConnections ?? 1_000;
    this.tls.on('secureConnection', (socket) => this.serve(socket));
    this.tls.on('tlsClientError', (err, socket) => {
      this.log.debug({ err: err.message, ip: socket.remoteAddress }, 'RadSec handshake refused');
    });
    this.tls.on('error', (err) => this.log.error({ err }, 'RadSec listener error'));
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.tls.once('error', reject);
      this.tls.listen(this.opts.port, this.opts.host, () => {
        this.tls.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (this.tls.address() as { port: number }).port;
    this.log.info({ host: this.opts.host, port: this.boundPort }, 'RadSec (RADIUS over TLS) listening');
    return this.boundPort;
  }

  get port(): number {
    return this.boundPort;
  }

  /** Stops listening and closes every connection; packets being answered are not. */
  async stop(): Promise<void> {
    for (const c of this.connections) c.destroy();
    await new Promise<void>((resolve) => this.tls.close(() => resolve()));
  }

  private serve(socket: TLSSocket): void {
    this.connections.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(this.opts.idleMs ?? 600_000, () => socket.destroy());
    socket.on('close', () => this.connections.delete(socket));
    socket.on('error', (err) => this.log.debug({ err: err.message }, 'RadSec connection error'));
    const address = socket.remoteAddress ?? '';
    const peer: Peer = {
      address: address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address,
      family: isIP(address) === 6 ? 'IPv6' : 'IPv4',
      port: socket.remotePort ?? 0,
      size: 0,
      reply: (packet) => { if (!socket.destroyed) socket.write(packet); },
      certNames: certificateNames(socket.getPeerCertificate()),
    };
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let at = 0;
      while (pending.length - at >= HEADER_LENGTH) {
        const len = pending.readUInt16BE(at + 2);
        if (len < HEADER_LENGTH || len > MAX_PACKET_LENGTH) {
          this.log.info({ ip: peer.address, length: len }, 'RadSec stream unframeable; closing the connection');
          socket.destroy();
          return;
        }
        if (pending.length - at < len) break;
        // A copy: the packet may be kept (duplicate detection, the engine) after this chunk is gone.
        const packet = Buffer.from(pending.subarray(at, at + len));
        at += len;
        this.opts.server.receiveStream(packet, peer);
      }
      pending = at === pending.length ? Buffer.alloc(0) : pending.subarray(at);
    });
  }
}

/**
 * The names a client certificate identifies its NAS by, lower case: its
 * subjectAltName DNS names, or, when it has none, its subject CN(s). That is
 * how radsecproxy names a TLS client (its client block's name against "CN or
 * SubjectAltName:DNS") and what FreeRADIUS checks (check_cert_cn), and
 * RFC 6125 §6.4.4's rule: a CN counts only where no DNS name is given, so a
 * CN cannot add a name the certificate's DNS names do not list.
 */
export function certificateNames(cert: PeerCertificate | undefined): string[] {
  const dns: string[] = [];
  // Node writes `DNS:a, DNS:b, IP Address:…`; a value with a comma or quote is written as a JSON string.
  for (const entry of (cert?.subjectaltname ?? '').split(', ')) {
    if (!entry.startsWith('DNS:')) continue;
    const v = entry.slice(4);
    try {
      dns.push((v.startsWith('"') ? String(JSON.parse(v)) : v).toLowerCase());
    } catch {
      // A value Node quoted that does not parse names nothing.
    }
  }
  if (dns.length > 0) return dns;
  const cn: unknown = cert?.subject?.CN;
  return (Array.isArray(cn) ? cn : [cn]).filter((v): v is string => typeof v === 'string').map((v) => v.toLowerCase());
}
