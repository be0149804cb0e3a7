import { Redis } from 'ioredis';
import { Errors } from '../errors.js';
import { newId, normalizeMac } from '../ids.js';
import { keys } from '../redis/keys.js';
import type { HotspotService } from '../hotspots/hotspot-service.js';
import type { Metrics } from '../metrics.js';
import type { VoucherService } from './voucher-service.js';

export interface VerifyRequest {
  hotspotId: string;
  code: string;
  mac: string;
  ip: string;
  ssid: string;
}

/** The portal's success answer, spec §4.3. */
export interface Authorized {
  status: 'authorized';
  session_id: string;
  expires_at: string;
  uses_left: number | null;
  redirect_url: string | null;
}

/** What the session engine needs to take a new session under watch. */
export interface SignIn {
  answer: Authorized;
  tenantId: string;
  hotspotId: string;
  timezone: string;
  mac: string;
  /** True when the device got its live session back (no new session). */
  reused: boolean;
  /** A live session of the same device at the same hotspot that the new one replaced, or ''. */
  replaced: string;
}

/**
 * Portal (and later RADIUS PAP) voucher verification. The decision and the
 * use are one Lua script (use-voucher-8.lua); this class only prepares its
 * arguments and maps its answer onto the spec's bodies.
 */
export class VoucherRedemption {
  private readonly loading = new Map<string, Promise<number>>();

  constructor(
    private readonly redis: Redis,
    private readonly hotspots: HotspotService,
    private readonly vouchers: VoucherService,
    private readonly metrics: Metrics,
    private readonly defaults: { sessionMinutes: number; idleSec: number },
    private readonly now: () => number,
  ) {}

  async verify(req: VerifyRequest): Promise<SignIn> {
    const mac = normalizeMac(req.mac);
    if (!mac) throw Errors.INVALID_MAC(req.mac);
    const hotspot = await this.hotspots.ref(req.hotspotId);
    if (!hotspot) throw Errors.HOTSPOT_NOT_FOUND();
    const t = hotspot.tenantId;

    const minutes = hotspot.sessionMinutes ?? this.defaults.sessionMinutes;
    let answer = await this.run(t, hotspot.id, mac, req, minutes);
    if (answer[0] === 'not_loaded') {
      await this.ensureLoaded(t, String(answer[1]));
      answer = await this.run(t, hotspot.id, mac, req, minutes);
    }
    const outcome = String(answer[0]);
    this.metrics.inc('voucher_verify_total', outcome);
    switch (outcome) {
      case 'ok': {
        const max = Number(answer[4]);
        return {
          answer: {
            status: 'authorized',
            session_id: String(answer[1]),
            expires_at: new Date(Number(answer[2])).toISOString(),
            uses_left: max < 0 ? null : max - Number(answer[3]),
            redirect_url: hotspot.redirectUrl,
          },
          tenantId: t, hotspotId: hotspot.id, timezone: hotspot.timezone, mac,
          reused: Number(answer[5]) === 1, replaced: answer[6] ? String(answer[6]) : '',
        };
      }
      case 'blocked': throw Errors.DEVICE_BLOCKED();
      case 'not_found': throw Errors.VOUCHER_NOT_FOUND();
      case 'expired': throw Errors.VOUCHER_EXPIRED(new Date(Number(answer[1])).toISOString());
      case 'exhausted': throw Errors.VOUCHER_EXHAUSTED(Number(answer[1]), Number(answer[2]));
      case 'ssid': throw Errors.VOUCHER_SSID_NOT_ALLOWED(req.ssid);
      // Redis restarted or failed over again during the load: nothing was used; the guest retries.
      case 'not_loaded': throw Errors.SERVICE_UNAVAILABLE('Voucher store');
      default: throw Errors.UNEXPECTED_SCRIPT_ANSWER('use-voucher', outcome);
    }
  }

  private async run(tenantId: string, hotspotId: string, mac: string, req: VerifyRequest, minutes: number): Promise<unknown[]> {
    try {
      const sid = newId('sess_');
      return await this.redis.useVoucherV4(
        keys.voucher(tenantId, req.code), keys.voucherDevices(tenantId, req.code),
        keys.grant(tenantId, hotspotId, mac), keys.outbox(tenantId), keys.loaded(tenantId),
        keys.live(tenantId, hotspotId), keys.sessionRef(tenantId, sid), keys.block(tenantId, mac),
        this.now(), mac, hotspotId, req.ip, req.ssid, sid, newId('vu_'), minutes, this.defaults.idleSec, 'voucher');
    } catch (err) {
      throw Errors.SERVICE_UNAVAILABLE('Voucher store').withCause(err);
    }
  }

  /**
   * One load per tenant and Redis server at a time, however many guests
   * arrive while it runs. A guest whose not_loaded came from another server
   * (one that restarted meanwhile) does not join a load that will mark the
   * tenant loaded into the old one: it starts its own.
   */
  private ensureLoaded(tenantId: string, runId: string): Promise<number> {
    const key = `${tenantId} ${runId}`;
    let p = this.loading.get(key);
    if (!p) {
      p = this.vouchers.loadIntoRedis(tenantId, runId).finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }
}
