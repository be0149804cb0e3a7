import type { HotspotRef } from '../hotspots/hotspot-service.js';
import type { PreCheckedMethod, TermsSource } from './identity-method.js';
import type { SessionTerms } from './method.js';
import type { SignInSettingsService } from './sign-in-settings.js';

/**
 * A session's terms for a pre-checked method from the tenant's sign-in
 * settings (`sessions.<method>`): what the operator set for SMS, messaging-app
 * or e-mail sign-ins. Fields left out take the hotspot's session length and the
 * service defaults, as the identity method does for an empty answer.
 */
export class SettingsTerms implements TermsSource {
  constructor(private readonly settings: SignInSettingsService) {}

  async termsFor(hotspot: HotspotRef, method: PreCheckedMethod): Promise<Partial<SessionTerms>> {
    const s = (await this.settings.get(hotspot.tenantId)).sessions[method];
    if (!s) return {};
    const kbps = (mbps: number | undefined): number => (mbps ? mbps * 1000 : 0);
    return {
      minutes: s.session_minutes ?? 0, downKbps: kbps(s.bandwidth_down_mbps), upKbps: kbps(s.bandwidth_up_mbps),
      quotaMb: s.daily_quota_mb ?? 0, sessionQuotaMb: s.session_quota_mb ?? 0,
    };
  }
}
