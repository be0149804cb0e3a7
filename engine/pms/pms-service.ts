import { Errors } from '../errors.js';
import type { Started } from '../signin/identity-method.js';
import type { SignInRequest } from '../signin/method.js';
import { normalRoom } from './fias/fias-link.js';
import type { PmsGuestStore } from './pms-guest-store.js';
import type { PmsLinkConfig, PmsLinkInput, PmsLinkStore } from './pms-link-store.js';
import type { PmsLinks } from './pms-links.js';
import { listTrusted, type PmsMethod, type RoomClaim } from './pms-method.js';

/** A room sign-in as the portal presents it. */
export interface RoomVerifyRequest extends SignInRequest {
  room: string;
  surname: string;
}

/** The pipeline entry room sign-in runs through (SignInService.via). */
export interface RoomPipeline {
  via(method: PmsMethod, req: SignInRequest, input: RoomClaim): Promise<Started>;
}

/** A link as the API shows it: its settings and how it is doing. */
export interface PmsLinkView extends Omit<PmsLinkConfig, 'tenant_id'> {
  status: {
    /** up: connected and configured; down: not (reconnecting); the list may still be trusted for a while. */
    link: 'up' | 'down';
    /** Whether room sign-in answers from the list now (docs/pms.md). */
    accepting_sign_ins: boolean;
    last_heard_at: string | null;
    last_resync_at: string | null;
    resyncing: boolean;
    guests_in_house: number;
  };
}

/**
 * Room sign-in's face to the routes: the tenant's link settings, the link's
 * status, and the guest's verify (through the shared sign-in pipeline).
 */
export class PmsService {
  constructor(
    private readonly store: PmsLinkStore,
    private readonly guests: PmsGuestStore,
    readonly links: PmsLinks,
    private readonly method: PmsMethod,
    private readonly pipeline: RoomPipeline,
    private readonly staleAfterMs: number,
    private readonly now: () => number,
  ) {}

  /** Room number and surname against the hotel's in-house list; the session starts as for any method. */
  verify(req: RoomVerifyRequest): Promise<Started> {
    return this.pipeline.via(this.method, req, { room: normalRoom(req.room), surname: req.surname });
  }

  /** Whether the hotspot offers room sign-in (it has an enabled link). */
  hasLink(hotspotId: string): boolean {
    return this.links.hasLink(hotspotId);
  }

  async get(tenantId: string, hotspotId: string): Promise<PmsLinkView> {
    const c = await this.store.get(tenantId, hotspotId);
    if (!c) throw Errors.PMS_LINK_NOT_FOUND();
    return this.view(c);
  }

  async put(tenantId: string, hotspotId: string, input: PmsLinkInput): Promise<PmsLinkView> {
    const c = await this.store.put(tenantId, hotspotId, input);
    // This process starts it at once (answered once its scan knows the link: a room sign-in right after is
    // pms_unavailable until the link is up and synced, never method_not_allowed_here); the others leave a
    // freshly saved link to it for a lease period.
    await this.links.saved(hotspotId);
    return this.view(c);
  }

  /** Removes the link; the in-house list goes with it. Live sessions run to their own end. */
  async remove(tenantId: string, hotspotId: string): Promise<void> {
    if (!await this.store.remove(tenantId, hotspotId)) throw Errors.PMS_LINK_NOT_FOUND();
    await this.links.scan();
    await this.guests.drop(tenantId, hotspotId);
  }

  private async view(c: PmsLinkConfig): Promise<PmsLinkView> {
    const [s, n] = await Promise.all([this.guests.state(c.tenant_id, c.hotspot_id), this.guests.count(c.tenant_id, c.hotspot_id)]);
    const iso = (ms: number): string | null => (ms > 0 ? new Date(ms).toISOString() : null);
    const { tenant_id: _t, ...rest } = c;
    return {
      ...rest,
      status: {
        link: s.up && this.now() - s.aliveAt <= this.staleAfterMs ? 'up' : 'down', accepting_sign_ins: c.enabled && listTrusted(s, this.now(), this.staleAfterMs),
        last_heard_at: iso(s.aliveAt), last_resync_at: iso(s.syncedAt), resyncing: s.resyncing, guests_in_house: n,
      },
    };
  }
}
