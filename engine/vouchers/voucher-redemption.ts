import { Redis } from 'ioredis';
import { AppError, Errors } from '../errors.js';
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

/**
 * Portal (and later RADIUS PAP) voucher verification. The decision and the
 * use are one Lua script (use-voucher-5.lua); this class only prepares its
 * arguments and maps its answer onto the spec's bodies.
 */
export class VoucherRedemption {
  private readonly loading = new Map<string, Promise<number>>();

  constructor(
    private readonly redis: Redis,
    private readonly hotspots: HotspotService,
    private readonly vouchers: VoucherService,
    private readonly metrics: Metrics,
    private readonly defaultSessionMinutes: number,
    private readonly now: () => number,
  ) {}

  async verify(req: VerifyRequest): Promise<Authorized> {
    const mac = normalizeMac(req.mac);
    if (!mac) throw Errors.INVALID_MAC(req.mac);
    const hotspot = await this.hotspots.ref(req.hotspotId);
    if (!hotspot) throw Errors.HOTSPOT_NOT_FOUND();
    const t = hotspot.tenantId;

    let answer = await this.run(t, hotspot.id, mac, req, hotspot.sessionMinutes ?? this.defaultSessionMinutes);
    if (answer[0] === 'not_loaded') {
      await this.ensureLoaded(t);
      answer = await this.run(t, hotspot.id, mac, req, hotspot.sessionMinutes ?? this.defaultSessionMinutes);
    }
    const outcome = String(answer[0]);
    this.metrics.inc('voucher_verify_total', outcome);
    switch (outcome) {
      case 'ok': {
        const max = Number(answer[4]);
        return {
          status: 'authorized',
          session_id: String(answer[1]),
          expires_at: new Date(Number(answer[2])).toISOString(),
          uses_left: max < 0 ? null : max - Number(answer[3]),
          redirect_url: hotspot.redirectUrl,
        };
      }
      case 'not_found': throw Errors.VOUCHER_NOT_FOUND();
      case 'expired': throw Errors.VOUCHER_EXPIRED(new Date(Number(answer[1])).toISOString());
      case 'exhausted': throw Errors.VOUCHER_EXHAUSTED(Number(answer[1]), Number(answer[2]));
      case 'ssid': throw Errors.VOUCHER_SSID_NOT_ALLOWED(req.ssid);
      default: throw new AppError('internal_error', 500, `unexpected script answer ${outcome}`);
    }
  }

  private async run(tenantId: string, hotspotId: string, mac: string, req: VerifyRequest, minutes: number): Promise<unknown[]> {
    try {
      return await this.redis.useVoucherV1(
        keys.voucher(tenantId, req.code), keys.voucherDevices(tenantId, req.code),
        keys.grant(tenantId, hotspotId, mac), keys.outbox(tenantId), keys.loaded(tenantId),
        this.now(), mac, hotspotId, req.ip, req.ssid, newId('sess_'), newId('vu_'), minutes);
    } catch (err) {
      throw Object.assign(Errors.SERVICE_UNAVAILABLE('Voucher store'), { cause: err });
    }
  }

  /** One load per tenant at a time, however many guests arrive while it runs. */
  private ensureLoaded(tenantId: string): Promise<number> {
    let p = this.loading.get(tenantId);
    if (!p) {
      p = this.vouchers.loadIntoRedis(tenantId).finally(() => this.loading.delete(tenantId));
      this.loading.set(tenantId, p);
    }
    return p;
  }
}
