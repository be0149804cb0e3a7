import { BlockList, isIP } from 'node:net';
import type { Cidr } from '../engine/index.js';

/**
 * The client's address as a fact, not a claim: the socket's peer, or, only
 * when that peer is one of the operator's reverse proxies (TRUSTED_PROXIES),
 * the right-most X-Forwarded-For hop that is not itself a trusted proxy.
 *
 * Right-most, because each proxy appends the address it received the request
 * from: the hops to the right were written by proxies we trust, everything to
 * the left of the first untrusted hop was written by the client and may be
 * anything (a guest rotating it would otherwise get a fresh limit per
 * request). A hop that is not an address ends the walk: the last address
 * vouched for by a trusted proxy is the answer.
 *
 * Every per-address limit keys on this (OTP sends, voucher guesses); the
 * `ip` a portal body carries is what the gateway reports for the guest and
 * is never a key. docs/security.md.
 */
export class ClientAddress {
  private readonly trusted: BlockList | null;

  constructor(trustedProxies: readonly Cidr[]) {
    if (trustedProxies.length === 0) {
      this.trusted = null;
      return;
    }
    this.trusted = new BlockList();
    for (const c of trustedProxies) this.trusted.addSubnet(c.address, c.prefix, c.family);
  }

  /** True when X-Forwarded-For is read at all for this peer (so the router copies it only then). */
  trusts(address: string): boolean {
    if (!this.trusted || address === '') return false;
    return this.trusted.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
  }

  /**
   * The source address: `peer` canonical (formatAddress), `forwardedFor`
   * every X-Forwarded-For header line joined with commas, in order ('' when
   * none or when the peer is not trusted).
   */
  resolve(peer: string, forwardedFor: string): string {
    if (!this.trusts(peer) || forwardedFor === '') return peer;
    const hops = forwardedFor.split(',');
    let address = peer;
    for (let i = hops.length - 1; i >= 0 && this.trusts(address); i--) {
      const hop = canonicalAddress(hops[i]!);
      if (hop === null) break;
      address = hop;
    }
    return address;
  }
}

/**
 * A socket address as uWS gives it (getRemoteAddress: 4 octets, or 16 for
 * IPv6 and for IPv4 on a dual-stack socket) as text: dotted IPv4 for IPv4 and
 * IPv4-mapped IPv6 (::ffff:a.b.c.d), else RFC 5952 IPv6 (lower case, the
 * longest run of zero groups as ::). One spelling per address, so a limit
 * cannot be dodged by writing an address another way. '' when neither.
 */
export function formatAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  if (bytes.length !== 16) return '';
  let mapped = bytes[10] === 0xff && bytes[11] === 0xff;
  for (let i = 0; i < 10 && mapped; i++) if (bytes[i] !== 0) mapped = false;
  if (mapped) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  return compressGroups(groups);
}

/**
 * An address as text (an X-Forwarded-For hop, a gateway's report) in the
 * spelling formatAddress gives; a port (`1.2.3.4:80`, `[::1]:80`) is dropped.
 * null when it is not an IPv4 or IPv6 address.
 */
export function canonicalAddress(text: string): string | null {
  let a = text.trim();
  if (a.startsWith('[')) {
    const end = a.indexOf(']');
    if (end < 0) return null;
    a = a.slice(1, end);
  } else if (a.indexOf(':') > 0 && a.indexOf(':') === a.lastIndexOf(':') && a.includes('.')) {
    a = a.slice(0, a.indexOf(':')); // IPv4 with a port
  }
  const family = isIP(a);
  if (family === 4) return a;
  if (family !== 6 || a.includes('%')) return null;
  const groups = ipv6Groups(a);
  if (!groups) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => { bytes[2 * i] = g >> 8; bytes[2 * i + 1] = g & 0xff; });
  return formatAddress(bytes);
}

/**
 * The guest's address to record: what the gateway reported (the body's
 * `ip`, schema-checked as an address: guestIp) in its canonical spelling,
 * else the source address. A record, never a limit's key.
 */
export function guestAddress(reported: string | undefined, source: string): string {
  return (reported && canonicalAddress(reported)) || source;
}

/** The eight groups of an IPv6 address that isIP accepted (with ::, and a dotted IPv4 tail). */
function ipv6Groups(a: string): number[] | null {
  const parse = (side: string): number[] => {
    if (side === '') return [];
    const out: number[] = [];
    for (const part of side.split(':')) {
      if (part.includes('.')) {
        const o = part.split('.').map(Number);
        out.push((o[0]! << 8) | o[1]!, (o[2]! << 8) | o[3]!);
      } else {
        out.push(parseInt(part, 16));
      }
    }
    return out;
  };
  const gap = a.indexOf('::');
  if (gap < 0) {
    const g = parse(a);
    return g.length === 8 ? g : null;
  }
  const head = parse(a.slice(0, gap));
  const tail = parse(a.slice(gap + 2));
  const fill = 8 - head.length - tail.length;
  return fill < 1 ? null : [...head, ...new Array<number>(fill).fill(0), ...tail];
}

/** RFC 5952 §4.2: the longest run (of two or more) of zero groups becomes ::, the first such run on a tie. */
function compressGroups(groups: number[]): string {
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = (from: number, to: number): string => groups.slice(from, to).map((g) => g.toString(16)).join(':');
  return best < 0 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLen, 8)}`;
}
