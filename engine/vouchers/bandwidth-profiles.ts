/** A named bandwidth profile. `daily_quota_mb` null means unlimited. */
export interface BandwidthProfile {
  down_mbps: number;
  up_mbps: number;
  daily_quota_mb: number | null;
}

/** The contract's four profiles, figures as it gives them; a tenant can override any of them or add its own. */
export const DEFAULT_PROFILES: Readonly<Record<string, BandwidthProfile>> = {
  basic: { down_mbps: 2, up_mbps: 1, daily_quota_mb: 500 },
  standard: { down_mbps: 10, up_mbps: 5, daily_quota_mb: 2048 },
  premium: { down_mbps: 50, up_mbps: 20, daily_quota_mb: null },
  conference: { down_mbps: 5, up_mbps: 2, daily_quota_mb: 1024 },
};

/** The tenant's effective profiles: the defaults with its overrides on top. */
export function profilesFor(overrides: Record<string, BandwidthProfile> | undefined): Record<string, BandwidthProfile> {
  return { ...DEFAULT_PROFILES, ...overrides };
}
