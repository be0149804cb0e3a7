import { Errors } from '../errors.js';
import type { Pool } from '../store/postgres.js';
import { profilesFor, type BandwidthProfile } from './bandwidth-profiles.js';

/** The fields of a voucher a bandwidth profile fills in. */
export interface ProfiledFields {
  bandwidth_profile: string | null;
  bandwidth_down_mbps: number | null;
  bandwidth_up_mbps: number | null;
  daily_quota_mb: number | null;
}

/**
 * A tenant's bandwidth profiles (the contract's four, DEFAULT_PROFILES, with
 * the tenant's overrides on top), kept in `tenants.settings.bandwidth_profiles`. A change
 * applies to vouchers created afterwards: a voucher copies its profile's
 * figures when it is created.
 */
export class BandwidthProfileService {
  constructor(private readonly pool: Pool) {}

  /** The tenant's effective profiles, by name. */
  async list(tenantId: string): Promise<Record<string, BandwidthProfile>> {
    const { rows } = await this.pool.query<{ p: Record<string, BandwidthProfile> | null }>(
      "SELECT settings->'bandwidth_profiles' AS p FROM tenants WHERE id = $1", [tenantId]);
    return profilesFor(rows[0]?.p ?? undefined);
  }

  /** Customises or adds one profile; returns the tenant's profiles after the change. */
  async put(tenantId: string, name: string, profile: BandwidthProfile): Promise<Record<string, BandwidthProfile>> {
    await this.pool.query(
      `UPDATE tenants SET settings = jsonb_set(settings, '{bandwidth_profiles}',
         COALESCE(settings->'bandwidth_profiles', '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb))
       WHERE id = $1`, [tenantId, name, JSON.stringify(profile)]);
    return this.list(tenantId);
  }

  /** Fills bandwidth and quota from the named profile where the request leaves them out. */
  async resolve<T extends ProfiledFields>(tenantId: string, spec: T): Promise<T> {
    if (!spec.bandwidth_profile) return spec;
    const profiles = await this.list(tenantId);
    // Own keys only: `constructor` or `toString` name no profile, whatever Object.prototype holds.
    const profile = Object.hasOwn(profiles, spec.bandwidth_profile) ? profiles[spec.bandwidth_profile] : undefined;
    if (!profile) throw Errors.UNKNOWN_BANDWIDTH_PROFILE(spec.bandwidth_profile);
    return {
      ...spec,
      bandwidth_down_mbps: spec.bandwidth_down_mbps ?? profile.down_mbps,
      bandwidth_up_mbps: spec.bandwidth_up_mbps ?? profile.up_mbps,
      daily_quota_mb: spec.daily_quota_mb ?? profile.daily_quota_mb,
    };
  }
}
