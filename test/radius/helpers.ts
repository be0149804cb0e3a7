import { createHash, randomBytes } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createRequire } from 'node:module';
import { pino } from 'pino';
import type {
  AccessDecision, AccessRequestMsg, AccountingMsg, NasRecord, RadiusHandler,
} from '../../engine/index.js';
import { AcctStatusType, Attr, Code, DEFAULT_DICTIONARY, PacketWriter } from '../../radius/index.js';
import { arrivalsRead } from '../support/poll.js';

export const silentLogger = pino({ level: 'silent' });

/**
 * A fresh instance of the `radius` npm package (an independent oracle) with our vendor dictionaries added. The
 * package keeps its dictionaries as module state, loaded once: an instance another test file in this worker has
 * already used would never read ours. The shared instance is put back for the others.
 */
export function radiusPackage<T>(): T & { add_dictionary(p: string): void } {
  const require = createRequire(import.meta.url);
  const id = require.resolve('radius');
  const shared = require.cache[id];
  delete require.cache[id];
  try {
    const pkg = require('radius') as T & { add_dictionary(p: string): void };
    pkg.add_dictionary(DEFAULT_DICTIONARY());
    return pkg;
  } finally {
    if (shared) require.cache[id] = shared;
    else delete require.cache[id];
  }
}

export const ACCEPT: AccessDecision = {
  accept: true, sessionId: 'ses_test0000000001', sessionTimeout: 3600, idleTimeout: 600,
  downKbps: 10_000, upKbps: 2_000, quotaBytes: 5 * 2 ** 32 + 1234,
};

export function nasRecord(over: Partial<NasRecord> = {}): NasRecord {
  return {
    id: 'nas_test', tenantId: 'tn_test', hotspotId: 'hs_test', ip: '127.0.0.1',
    secret: 'testing123-' + Math.random().toString(36).slice(2, 8), coaPort: 3799,
    requireMessageAuthenticator: true, ...over,
  };
}

/**
 * The engine's test double: answers from a map of NAS records, records every
 * message, and decides through replaceable functions.
 */
export class TestHandler implements RadiusHandler {
  readonly nases = new Map<string, NasRecord>();
  readonly accessMsgs: AccessRequestMsg[] = [];
  readonly accountingMsgs: AccountingMsg[] = [];
  decide: (m: AccessRequestMsg) => Promise<AccessDecision> = async () => ACCEPT;
  record: (m: AccountingMsg) => Promise<void> = async () => {};
  lookup: ((ip: string) => NasRecord | null | Promise<NasRecord | null>) | null = null;

  constructor(...nases: NasRecord[]) {
    for (const n of nases) this.nases.set(n.ip, n);
  }

  /** Lookups by address and the NAS-Identifier read for each (only when `named` has the address). */
  readonly identifiersRead: (string | undefined)[] = [];
  /** NAS records told apart by NAS-Identifier: `${ip}/${identifier}`. */
  readonly named = new Map<string, NasRecord>();

  nasByIp(ip: string, identifier: () => string | undefined): NasRecord | null | Promise<NasRecord | null> {
    if (this.lookup) return this.lookup(ip);
    if ([...this.named.keys()].some((k) => k.startsWith(`${ip}/`))) {
      const id = identifier();
      this.identifiersRead.push(id);
      const hit = id === undefined ? undefined : this.named.get(`${ip}/${id}`);
      if (hit) return hit;
    }
    return this.nases.get(ip) ?? null;
  }

  authorize(m: AccessRequestMsg): AccessDecision | Promise<AccessDecision> {
    this.accessMsgs.push(m);
    return this.decide(m);
  }

  account(m: AccountingMsg): Promise<void> {
    this.accountingMsgs.push(m);
    return this.record(m);
  }
}

/** A NAS on loopback: one UDP socket, replies queued in arrival order. */
export class TestNas {
  private readonly queue: { msg: Buffer; rinfo: RemoteInfo }[] = [];
  private waiter: (() => void) | null = null;

  private constructor(readonly socket: Socket) {
    socket.on('message', (msg, rinfo) => {
      this.queue.push({ msg, rinfo });
      this.waiter?.();
    });
  }

  static async open(host = '127.0.0.1', port = 0): Promise<TestNas> {
    const s = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.bind(port, host, () => resolve());
    });
    return new TestNas(s);
  }

  get port(): number {
    return this.socket.address().port;
  }

  send(packet: Buffer, port: number, host = '127.0.0.1'): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(packet, port, host, (err) => (err ? reject(err) : resolve())));
  }

  /**
   * The next datagram received, or null after `ms`; before null, the loop reads what has arrived (arrivalsRead), so
   * callers that read the counters of a server in this process after a null see every datagram they sent.
   */
  async next(ms = 1000): Promise<{ msg: Buffer; rinfo: RemoteInfo } | null> {
    const until = Date.now() + ms;
    while (this.queue.length === 0) {
      const left = until - Date.now();
      if (left <= 0) {
        await arrivalsRead();
        return this.queue.shift() ?? null;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => { this.waiter = null; resolve(); }, left);
        this.waiter = () => { clearTimeout(t); this.waiter = null; resolve(); };
      });
    }
    return this.queue.shift()!;
  }

  /** Sends and returns the next reply's octets, or null if none comes within `ms`. */
  async exchange(packet: Buffer, port: number, ms = 1000): Promise<Buffer | null> {
    await this.send(packet, port);
    return (await this.next(ms))?.msg ?? null;
  }

  pending(): number {
    return this.queue.length;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

export interface AccessRequestSpec {
  id?: number;
  secret: string;
  userName?: string;
  password?: string;
  /** CHAP instead of PAP: the response to `challenge` (CHAP-Challenge; absent: the Request Authenticator) for `secret`. */
  chap?: { secret: string; challenge?: Buffer; ident?: number };
  /** CHAP-Password (ident || 16-octet response) and CHAP-Challenge octets as given: a response computed elsewhere, as chilli relays the portal's. */
  chapRaw?: { password: Buffer; challenge?: Buffer };
  callingStationId?: string;
  calledStationId?: string;
  /** NAS-Identifier (attribute 32): which NAS behind a shared address sent it. */
  nasIdentifier?: string;
  framedIp?: string;
  nasPortId?: string;
  nasPort?: number;
  /** 'good' (default), 'bad' (one bit flipped) or 'none'. */
  messageAuthenticator?: 'good' | 'bad' | 'none';
  authenticator?: Buffer;
  proxyStates?: Buffer[];
}

const writer = new PacketWriter();

/** An Access-Request as a NAS would send it. */
export function accessRequest(spec: AccessRequestSpec): Buffer {
  const authenticator = spec.authenticator ?? randomBytes(16);
  const w = writer.begin(Code.ACCESS_REQUEST, spec.id ?? 1, authenticator);
  const ma = spec.messageAuthenticator ?? 'good';
  if (ma !== 'none') w.messageAuthenticator();
  if (spec.userName !== undefined) w.string(Attr.USER_NAME, spec.userName);
  if (spec.password !== undefined) w.userPassword(spec.password, spec.secret);
  if (spec.chap) {
    // RFC 2865 §5.3: ident || MD5(ident || secret || challenge), as CoovaChilli sends a UAM login.
    const ident = spec.chap.ident ?? 0;
    const challenge = spec.chap.challenge ?? authenticator;
    const response = createHash('md5').update(Buffer.of(ident)).update(spec.chap.secret).update(challenge).digest();
    w.bytes(Attr.CHAP_PASSWORD, Buffer.concat([Buffer.of(ident), response]));
    if (spec.chap.challenge) w.bytes(Attr.CHAP_CHALLENGE, spec.chap.challenge);
  }
  if (spec.chapRaw) {
    w.bytes(Attr.CHAP_PASSWORD, spec.chapRaw.password);
    if (spec.chapRaw.challenge) w.bytes(Attr.CHAP_CHALLENGE, spec.chapRaw.challenge);
  }
  if (spec.callingStationId !== undefined) w.string(Attr.CALLING_STATION_ID, spec.callingStationId);
  if (spec.calledStationId !== undefined) w.string(Attr.CALLED_STATION_ID, spec.calledStationId);
  if (spec.nasIdentifier !== undefined) w.string(Attr.NAS_IDENTIFIER, spec.nasIdentifier);
  if (spec.framedIp !== undefined) w.ipv4(Attr.FRAMED_IP_ADDRESS, spec.framedIp);
  if (spec.nasPortId !== undefined) w.string(Attr.NAS_PORT_ID, spec.nasPortId);
  if (spec.nasPort !== undefined) w.uint32(Attr.NAS_PORT, spec.nasPort);
  for (const ps of spec.proxyStates ?? []) w.bytes(Attr.PROXY_STATE, ps);
  const pkt = w.finishAccessRequest(spec.secret);
  if (ma === 'bad') pkt[22]! ^= 0x01; // first octet of the Message-Authenticator value
  return pkt;
}

export interface AccountingSpec {
  id?: number;
  secret: string;
  status?: number;
  userName?: string;
  callingStationId?: string;
  calledStationId?: string;
  acctSessionId?: string;
  inputOctets?: number;
  outputOctets?: number;
  inputGigawords?: number;
  outputGigawords?: number;
  sessionTime?: number;
  terminateCause?: number;
  delayTime?: number;
  nasIdentifier?: string;
  nasPort?: number;
  nasPortId?: string;
  messageAuthenticator?: boolean;
  proxyStates?: Buffer[];
}

/** An Accounting-Request with a correct Request Authenticator (RFC 2866 §3). */
export function accountingRequest(spec: AccountingSpec): Buffer {
  const w = writer.begin(Code.ACCOUNTING_REQUEST, spec.id ?? 1);
  if (spec.messageAuthenticator) w.messageAuthenticator();
  w.uint32(Attr.ACCT_STATUS_TYPE, spec.status ?? AcctStatusType.INTERIM_UPDATE);
  if (spec.userName !== undefined) w.string(Attr.USER_NAME, spec.userName);
  if (spec.callingStationId !== undefined) w.string(Attr.CALLING_STATION_ID, spec.callingStationId);
  if (spec.calledStationId !== undefined) w.string(Attr.CALLED_STATION_ID, spec.calledStationId);
  if (spec.nasIdentifier !== undefined) w.string(Attr.NAS_IDENTIFIER, spec.nasIdentifier);
  if (spec.nasPort !== undefined) w.uint32(Attr.NAS_PORT, spec.nasPort);
  if (spec.nasPortId !== undefined) w.string(Attr.NAS_PORT_ID, spec.nasPortId);
  w.string(Attr.ACCT_SESSION_ID, spec.acctSessionId ?? 'acct-1');
  if (spec.inputOctets !== undefined) w.uint32(Attr.ACCT_INPUT_OCTETS, spec.inputOctets);
  if (spec.outputOctets !== undefined) w.uint32(Attr.ACCT_OUTPUT_OCTETS, spec.outputOctets);
  if (spec.inputGigawords !== undefined) w.uint32(Attr.ACCT_INPUT_GIGAWORDS, spec.inputGigawords);
  if (spec.outputGigawords !== undefined) w.uint32(Attr.ACCT_OUTPUT_GIGAWORDS, spec.outputGigawords);
  if (spec.sessionTime !== undefined) w.uint32(Attr.ACCT_SESSION_TIME, spec.sessionTime);
  if (spec.terminateCause !== undefined) w.uint32(Attr.ACCT_TERMINATE_CAUSE, spec.terminateCause);
  w.uint32(Attr.ACCT_DELAY_TIME, spec.delayTime ?? 0);
  for (const ps of spec.proxyStates ?? []) w.bytes(Attr.PROXY_STATE, ps);
  return w.finishSignedRequest(spec.secret);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A promise with its resolve/reject exposed, for handlers the test releases by hand. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => { resolve = a; reject = b; });
  return { promise, resolve, reject };
}
