import { Errors } from '../errors.js';
import type { PoolClient } from '../store/postgres.js';

/** The shortest prefixes a NAS client's subnet may have: every overlapping pair of records then shares one such block. */
export const MIN_SUBNET_BITS = { 4: 16, 6: 48 } as const;

/** A NAS client's address as stored: one address, or a subnet with its mask; `block` names the lock its writers share. */
export interface NasClientAddress { ip: string; subnet: boolean; block: string }

interface AddressRow { ip: string; bits: number; fam: 4 | 6; aligned: boolean; mapped: boolean }

const bad = (why: string) => Errors.VALIDATION_FAILED(`ip: ${why}`, [{ field: 'ip', message: why }]);

/**
 * Reads a NAS client's `ip`: an IPv4 or IPv6 address, or a subnet in CIDR
 * notation (`10.20.0.0/24`, host bits zero, at least /16 or /48). An IPv4
 * address written as IPv4-mapped IPv6 (::ffff:10.1.1.1) is the IPv4 address:
 * packets from it arrive as IPv4 (or are read so), and one address must not
 * be registered twice under two spellings. A /32 or /128 is one address.
 *
 * Every record that can overlap another lies in one /16 (IPv4) or /48
 * (IPv6), since no subnet is wider: `block` is that block, and the cross-
 * tenant check and insert run under its lock (HotspotService.addNasClient).
 */
export async function nasClientAddress(c: PoolClient, raw: string): Promise<NasClientAddress> {
  let row: AddressRow | undefined;
  try {
    ({ rows: [row] } = await c.query<AddressRow>(
      `SELECT host(a) AS ip, masklen(a) AS bits, family(a) AS fam, host(network(a)) = host(a) AS aligned,
              family(a) = 6 AND a << '::ffff:0.0.0.0/96' AS mapped
       FROM (SELECT $1::inet AS a) x`, [raw]));
  } catch (err) {
    if ((err as { code?: string }).code === '22P02') throw bad(`${JSON.stringify(raw)} is not an IP address or CIDR subnet`);
    throw err;
  }
  const r = row!;
  const hostBits = r.fam === 4 ? 32 : 128;
  let ip = r.ip;
  let fam: 4 | 6 = r.fam;
  if (r.mapped) {
    if (r.bits !== hostBits) throw bad('write an IPv4 subnet as IPv4 (10.20.0.0/24), not IPv4-mapped IPv6');
    ip = ip.slice(ip.lastIndexOf(':') + 1);
    fam = 4;
  }
  const subnet = r.bits < hostBits;
  if (subnet) {
    if (!r.aligned) throw bad(`${raw} has host bits set: a subnet is written with its network address`);
    if (r.bits < MIN_SUBNET_BITS[fam]) throw bad(`a subnet may be /${MIN_SUBNET_BITS[fam]} at the widest`);
    ip = `${ip}/${r.bits}`;
  }
  const { rows: [b] } = await c.query<{ block: string }>('SELECT text(network(set_masklen($1::inet, $2))) AS block', [ip, MIN_SUBNET_BITS[fam]]);
  return { ip, subnet, block: b!.block };
}
