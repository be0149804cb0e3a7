import { randomInt } from 'node:crypto';

/**
 * The one MAC generator of the test tree. Every MAC is locally administered
 * (first octet 02), upper case with colons, as the engine normalises them:
 * `02:<family>:<n as four octets>`. A family keeps one file's or one storm's
 * devices apart from another's on the shared servers.
 */
export function mac(n: number, family = 0): string {
  return [2, family, n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
    .map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

/** A source of fresh MACs: each call the next device of a family (random unless given). */
export function macs(family = randomInt(256)): () => string {
  let n = 0;
  return () => mac(++n, family);
}

/** RFC 3580 §3.21 form (dashes), as NASes send Calling-Station-Id. */
export const dashed = (m: string): string => m.replace(/:/g, '-');
