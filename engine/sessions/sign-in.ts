import type { Authorized, VerifyRequest, VoucherRedemption } from '../vouchers/voucher-redemption.js';
import type { SessionActors } from './actor-ports.js';

/**
 * Guest sign-in, whatever the surface (portal, RADIUS PAP): the redemption
 * starts the session atomically in Redis (with its start record queued).
 *
 * The hotspot's actor is not told about each session: it finds the session
 * in Redis when the NAS first asks about the device (Access-Request or
 * accounting), and its sweep of the hotspot's live set ends the session on
 * time even if the NAS never does. The actor is only woken, once per hotspot
 * per process. That keeps a sign-in to one Redis script and no thread hop,
 * which is what a stadium at kick-off needs. Only a replaced session (the
 * device signed in again with another code) is handed to the actor to end.
 */
export class SignInService {
  constructor(private readonly redemption: VoucherRedemption, private readonly actors: SessionActors) {}

  async voucher(req: VerifyRequest): Promise<Authorized> {
    const r = await this.redemption.verify(req);
    if (r.reused) return r.answer;
    this.actors.wake(r.tenantId, r.hotspotId, r.timezone);
    if (r.replaced) {
      this.actors.request({ t: 'started', tenant: r.tenantId, hs: r.hotspotId, tz: r.timezone, sid: r.answer.session_id, mac: r.mac, replaced: r.replaced })
        .catch(() => undefined);
    }
    return r.answer;
  }
}
