import { randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import type { GatewayCredential } from './handback.js';

/** What issue() makes: 'g' and 18 characters of lower-case base64url with - and _ as x. */
const ONE_TIME_NAME = /^g[a-z0-9x]{18}$/;

/** What a one-time gateway credential stands for. */
export interface UamCredentialRecord {
  password: string;
  sessionId: string;
  mac: string;
  hotspotId: string;
}

/** Long enough for the browser to reach the gateway and the gateway to ask RADIUS; short enough to be useless later. */
export const UAM_CREDENTIAL_TTL_SEC = 300;

/**
 * One-time username/password pairs for gateways that log the guest in over
 * RADIUS after our page (CoovaChilli UAM, MikroTik): the session already
 * exists; the pair only lets the gateway's Access-Request find it. Kept in
 * Redis (hash-tagged by tenant, so any engine process answers the RADIUS
 * request), bound to hotspot, MAC and session, gone after the TTL.
 */
export class UamCredentials {
  constructor(private readonly redis: Redis, private readonly ttlSec = UAM_CREDENTIAL_TTL_SEC) {}

  /** Creates a pair for a session that has just started. */
  async issue(tenantId: string, r: Omit<UamCredentialRecord, 'password'>): Promise<GatewayCredential> {
    // 'g' + 20 base32-ish chars: no character a NAS might mangle (no '@', no spaces), ~100 bits.
    const username = 'g' + randomBytes(13).toString('base64url').replace(/[-_]/g, 'x').toLowerCase();
    // Chilli limits the password to RADIUS_PWSIZE (128); 24 characters of base64url is 144 bits.
    const password = randomBytes(18).toString('base64url');
    const key = keys.uamCredential(tenantId, username);
    await this.redis.multi()
      .hset(key, 'password', password, 'sid', r.sessionId, 'mac', r.mac, 'hs', r.hotspotId)
      .expire(key, this.ttlSec)
      .exec();
    return { username, password };
  }

  /** Spends a credential: the gateway logged the guest in with it (a retransmission gets the cached reply). */
  async consume(tenantId: string, username: string): Promise<void> {
    await this.redis.del(keys.uamCredential(tenantId, username));
  }

  /**
   * The record behind a username the gateway presents, or null (unknown or expired). A name that
   * cannot be one of ours (a voucher code sent as PAP or CHAP) is answered without asking Redis:
   * RADIUS asks this before every code sign-in.
   */
  async lookup(tenantId: string, username: string): Promise<UamCredentialRecord | null> {
    if (!ONE_TIME_NAME.test(username)) return null;
    const h = await this.redis.hgetall(keys.uamCredential(tenantId, username));
    if (!h.password || !h.sid || !h.mac || !h.hs) return null;
    return { password: h.password, sessionId: h.sid, mac: h.mac, hotspotId: h.hs };
  }
}
