import { createSocket, type Socket } from 'node:dgram';
import { lookup as dnsLookup, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;

/**
 * dgram resolves the address of every send through its `lookup`, and the
 * default (dns.lookup) answers even an IP literal on the next tick: a reply
 * went through the tick queue and dns.lookup's argument checks before its
 * `sendmsg`. RADIUS replies go to the address the request came from, and CoA
 * to a NAS's registered address: always literals, answered here at once.
 * Anything else still goes to dns.lookup.
 */
function literalLookup(address: string, options: LookupOneOptions | number, cb: LookupCallback): void {
  const f = isIP(address);
  if (f !== 0) cb(null, address, f);
  // dgram passes the socket's family as a number; the type names the options form.
  else if (typeof options === 'number') dnsLookup(address, options, cb);
  else dnsLookup(address, options, cb);
}

/** A UDP socket whose sends to an IP literal skip the resolver's tick (RADIUS server and CoA client). */
export function udpSocket(type: 'udp4' | 'udp6', reusePort = false): Socket {
  return createSocket({ type, reusePort, lookup: literalLookup });
}
