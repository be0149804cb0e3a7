import type { Authorized, VerifyRequest, VoucherRedemption } from '../vouchers/voucher-redemption.js';
import type { ActorPool } from './actor-pool.js';

/**
 * Guest sign-in, whatever the surface (portal, RADIUS PAP): the redemption
 * starts the session atomically in Redis (with its start record queued), and
 * then the hotspot's actor is told so it watches the new session's clock.
 * The notice is not awaited: if it is lost (a thread restarting), the actor
 * finds the session in Redis when it reloads or when the NAS asks.
 */
export class SignInService {
  constructor(private readonly redemption: VoucherRedemption, private readonly actors: ActorPool) {}

  async voucher(req: VerifyRequest): Promise<Authorized> {
    const r = await this.redemption.verify(req);
    if (!r.reused) {
      this.actors.request({ t: 'started', tenant: r.tenantId, hs: r.hotspotId, tz: r.timezone, sid: r.answer.session_id, mac: r.mac, replaced: r.replaced })
        .catch(() => undefined);
    }
    return r.answer;
  }
}
