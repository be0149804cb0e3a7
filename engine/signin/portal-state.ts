import { randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { HotspotRef, HotspotService } from '../hotspots/hotspot-service.js';
import { normalizeMac } from '../ids.js';
import { keys } from '../redis/keys.js';
import { SessionStore } from '../sessions/session-store.js';

/** A sign-in's outcome as the page shows it: the verify answer, or the error body and status. */
export type PortalOutcome =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; status: number; body: Record<string, unknown> };

/**
 * What a no-JavaScript form post left for the page it redirects to. Captive
 * mini-browsers (Apple CNA, Android) keep no cookies or storage between
 * visits, so this lives on the server, keyed by an unguessable id carried in
 * the redirect URL and bound to the hotspot and the device's MAC.
 */
export interface PortalRecord {
  hs: string;
  mac: string;
  lang: 'tr' | 'en';
  ip: string;
  ssid: string;
  /** The gateway parameters (query string), so the page can offer the form again or hand back. */
  gateway: string;
  outcome: PortalOutcome;
  /** The voucher code of a refused form post, shown in the field again (at most MAX_CODE_CHARS). */
  code?: string;
}

/** Long enough to read the answer and follow the hand-back on a weak signal; not a sign-in token (it grants nothing). */
export const PORTAL_OUTCOME_TTL_SEC = 600;

/** RFC 8908 §5 fields of a device's live session, when it has one. */
export interface CaptiveState {
  ref: HotspotRef;
  live: { secondsRemaining: number; bytesRemaining: number | null } | null;
}

/**
 * The portal page's engine side: the hotspot's page settings, outcomes kept
 * for form posts (PortalSignIn keeps them), and the captive-portal API's view
 * of a device's grant (read through the session store, never by hand).
 */
export class PortalState {
  private readonly store: SessionStore;

  constructor(
    private readonly redis: Redis,
    private readonly hotspots: HotspotService,
    private readonly now: () => number,
  ) {
    this.store = new SessionStore(redis);
  }

  /** The hotspot as the page needs it, or null. */
  ref(hotspotId: string): Promise<HotspotRef | null> {
    return this.hotspots.ref(hotspotId);
  }

  /** Keeps an outcome for the page (rec.mac normalised, '' when not a MAC); returns the id to put in the redirect URL (128 random bits). */
  async save(tenantId: string, rec: PortalRecord): Promise<string> {
    const id = randomBytes(16).toString('base64url');
    await this.redis.set(keys.portalOutcome(tenantId, id), JSON.stringify(rec), 'EX', PORTAL_OUTCOME_TTL_SEC);
    return id;
  }

  /** The outcome under `id`, only for the hotspot and device it was made for; else null. */
  async load(tenantId: string, id: string, hotspotId: string, mac: string): Promise<PortalRecord | null> {
    if (!/^[A-Za-z0-9_-]{22}$/.test(id)) return null;
    const raw = await this.redis.get(keys.portalOutcome(tenantId, id));
    if (!raw) return null;
    const rec = JSON.parse(raw) as PortalRecord;
    return rec.hs === hotspotId && rec.mac === (normalizeMac(mac) ?? '') ? rec : null;
  }

  /** The hotspot and the device's live grant there (null: none or not found). */
  async captive(hotspotId: string, macInput: string): Promise<CaptiveState | null> {
    const ref = await this.hotspots.ref(hotspotId);
    if (!ref) return null;
    const mac = normalizeMac(macInput);
    const s = mac ? await this.store.byMac(ref.tenantId, ref.id, mac) : null;
    const nowMs = this.now();
    if (!s || s.untilMs <= nowMs) return { ref, live: null };
    const quota = s.sessionQuotaMb * 1_048_576;
    return {
      ref,
      live: {
        secondsRemaining: Math.floor((s.untilMs - nowMs) / 1000),
        bytesRemaining: quota > 0 ? Math.max(0, quota - s.bytesIn - s.bytesOut) : null,
      },
    };
  }
}
