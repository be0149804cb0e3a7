import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Errors } from '../errors.js';

/**
 * Where the service may connect on a tenant's word. A tenant chooses URLs
 * (an SMS carrier's base URL, a messaging-app provider, its SMTP server,
 * later webhook targets); unchecked, each is a way to make the service
 * connect into its own network: the cloud metadata service, Redis on
 * loopback, an admin page on 10/8. Every such URL is checked when it is
 * saved and its host resolved and checked again at every connection, and
 * the connection goes to the very address checked (the `lookup` below hands
 * net.connect the checked answer), so a name that answers public at the
 * check and private a second later (DNS rebinding) reaches nothing.
 *
 * The ranges are ipaddr.js's (RFC 6890 and successors; the library
 * proxy-addr and express rely on), judged by allow-list: only what it calls
 * `unicast` is public, and for IPv6 only inside 2000::/3, so a range the
 * library learns later is refused until judged. An IPv4-mapped IPv6 address
 * (::ffff:127.0.0.1) is judged by the IPv4 address it carries. Numeric
 * tricks (`http://2130706433/`, `http://0x7f.1/`) need no parser of our own:
 * WHATWG URL normalises them to 127.0.0.1 for http(s), urlHost() applies the
 * same to smtp:// hosts, and whatever is left is a name the resolver answers.
 */

/** What an address is to this policy. */
export type AddressClass = 'public' | 'private' | 'reserved' | 'metadata';

/**
 * Cloud instance-metadata and host-agent addresses: a request there hands out
 * the machine's credentials. Refused always, ALLOW_PRIVATE_TARGETS or not.
 * (metadata.google.internal and friends resolve to these.)
 */
const METADATA = new Set([
  '169.254.169.254', // AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack
  '169.254.170.2', // AWS ECS task credentials
  '169.254.170.23', // AWS EKS pod identity
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure host agent (WireServer): public space, private purpose
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS pod identity over IPv6
]);
/** Names refused without asking DNS (outside their cloud they do not resolve; inside, to METADATA). */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** ipaddr.js ranges a private network uses; ALLOW_PRIVATE_TARGETS lets these through. */
const PRIVATE_V4 = new Set(['loopback', 'private', 'linkLocal', 'carrierGradeNat']);
const PRIVATE_V6 = new Set(['loopback', 'uniqueLocal', 'linkLocal']);
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/** The class of an IP address (a literal, as a resolver answers it). Not an IP address: reserved. */
export function classifyAddress(ip: string): AddressClass {
  const family = isIP(ip);
  if (family === 0) return 'reserved';
  // IPv6 text in WHATWG's canonical form first: ipaddr.js reads the deprecated
  // IPv4-compatible ::127.0.0.1 as IPv4-mapped, but a socket connects to ::7f00:1.
  const text = family === 6 ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip;
  if (!ipaddr.isValid(text)) return 'reserved';
  let addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  // Canonical text, so fd00:ec2:0::254 and fd00:ec2::254 are one entry of METADATA.
  const canonical = addr.kind() === 'ipv6' ? (addr as ipaddr.IPv6).toRFC5952String() : addr.toString();
  if (METADATA.has(canonical)) return 'metadata';
  const range = addr.range();
  if (addr.kind() === 'ipv4') {
    if (range === 'unicast') return 'public';
    return PRIVATE_V4.has(range) ? 'private' : 'reserved';
  }
  if (range === 'unicast' && addr.match(GLOBAL_UNICAST)) return 'public';
  return PRIVATE_V6.has(range) ? 'private' : 'reserved';
}

export interface ResolvedAddress { address: string; family: 4 | 6 }
/** Every address a name resolves to (as getaddrinfo answers: /etc/hosts, then DNS). Injectable for tests. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/**
 * A connection refused by the policy (at send time); providers report it as
 * the failure kind `target_not_allowed`. The message names the host and why,
 * for the operator's log; the guest never sees it.
 */
export class TargetNotAllowedError extends Error {
  readonly code = 'ETARGETNOTALLOWED';
  constructor(readonly host: string, readonly why: string) {
    super(`outbound target ${host} refused: ${why}`);
    this.name = 'TargetNotAllowedError';
  }
}

/**
 * The host of a URL as a connection would use it, without IPv6 brackets.
 * http(s) hosts are normalised by WHATWG URL; the hosts of other schemes
 * (smtp://) are opaque to it, so they are normalised the same way by reading
 * them as an http host. Throws on a URL without a host.
 */
export function urlHost(url: string): string {
  const u = new URL(url);
  const host = u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname : new URL(`http://${u.host}`).hostname;
  if (!host) throw new TypeError('URL without a host');
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

export interface OutboundPolicyOptions {
  /** ALLOW_PRIVATE_TARGETS: loopback, RFC 1918, CGNAT, link-local and ULA allowed (tests, on-premises). Metadata never. */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/**
 * The service's one outbound-target policy. Built once from the settings and
 * handed to whatever connects on a tenant's word.
 */
export class OutboundPolicy {
  readonly allowPrivate: boolean;
  private readonly resolver: Resolver;

  constructor(o: OutboundPolicyOptions) {
    this.allowPrivate = o.allowPrivate;
    this.resolver = o.resolve ?? systemResolver;
  }

  /** Why `ip` is refused, or null when a connection to it is allowed. */
  refusal(ip: string): string | null {
    const c = classifyAddress(ip);
    if (c === 'public' || (c === 'private' && this.allowPrivate)) return null;
    return c === 'metadata' ? 'a cloud metadata address' : c === 'private' ? 'a private or loopback address' : 'a reserved, multicast or special-purpose address';
  }

  /**
   * The addresses to connect to for `host` (a name or an IP literal), every
   * one checked; throws TargetNotAllowedError when any is refused (a name
   * with one private answer among public ones is refused: which one a
   * connection would take is not ours to choose) or the name does not resolve.
   */
  async resolve(host: string): Promise<ResolvedAddress[]> {
    const h = host.toLowerCase().replace(/\.$/, '');
    if (METADATA_NAMES.has(h)) throw new TargetNotAllowedError(host, 'a cloud metadata name');
    const family = isIP(h);
    let answers: ResolvedAddress[];
    if (family) answers = [{ address: h, family: family as 4 | 6 }];
    else {
      try {
        answers = await this.resolver(h);
      } catch (err) {
        throw new TargetNotAllowedError(host, `does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      if (answers.length === 0) throw new TargetNotAllowedError(host, 'does not resolve');
    }
    for (const a of answers) {
      const why = this.refusal(a.address);
      if (why) throw new TargetNotAllowedError(host, `${family ? 'it is' : 'it resolves to'} ${why}`);
    }
    return answers;
  }

  /**
   * Checks a URL a tenant saves: one of `protocols`, a host, and that host
   * allowed now. Throws 400 target_not_allowed naming `field`. The message
   * says the same whether the host is private or does not resolve, so the
   * check cannot be used to map names inside the service's network.
   */
  async checkUrl(field: string, url: string, protocols: readonly string[]): Promise<void> {
    let host: string;
    try {
      if (!protocols.includes(new URL(url).protocol)) throw new TypeError('protocol');
      host = urlHost(url);
    } catch {
      throw Errors.TARGET_NOT_ALLOWED(field, `must be a ${protocols.map((p) => p.replace(/:$/, '')).join(' or ')} URL with a host`);
    }
    try {
      await this.resolve(host);
    } catch (err) {
      if (!(err instanceof TargetNotAllowedError)) throw err;
      throw Errors.TARGET_NOT_ALLOWED(field, 'must name a host that resolves to public addresses only (not loopback, private, link-local, reserved or cloud metadata)');
    }
  }

  /**
   * A `lookup` for net.connect and tls.connect: resolves through resolve(), so
   * the socket connects to an address checked for this very connection.
   * Node calls it with `all: true` when it may try several (autoSelectFamily).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname).then((answers) => {
      const family = options.family === 4 || options.family === 6 ? options.family : 0;
      const usable = family ? answers.filter((a) => a.family === family) : answers;
      if (usable.length === 0) throw new TargetNotAllowedError(hostname, `no IPv${family} address`);
      if (options.all) callback(null, usable);
      else callback(null, usable[0]!.address, usable[0]!.family);
    }).catch((err: NodeJS.ErrnoException) => callback(err, '', 0));
  };

  /** The same resolver, private addresses allowed: for targets the service operator chose (SMTP_URL), not a tenant. Metadata stays refused. */
  operatorChosen(): OutboundPolicy {
    return this.allowPrivate ? this : new OutboundPolicy({ allowPrivate: true, resolve: this.resolver });
  }
}
