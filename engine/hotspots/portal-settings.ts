/** Sign-in methods a portal page can offer (auth_method names). */
export const PORTAL_METHODS = ['voucher', 'sms_otp', 'msgapp_otp', 'email'] as const;
export type PortalMethod = (typeof PORTAL_METHODS)[number];

export const GATEWAY_KINDS = ['mac_auth', 'uam', 'mikrotik', 'opennds'] as const;
export type GatewayKind = (typeof GATEWAY_KINDS)[number];

/** The largest logo (a data: URI) a hotspot may set: it is inlined into a first view that must stay under 50 KB. */
export const MAX_LOGO_CHARS = 24_000;

/** A hotspot's portal settings as the API returns them: the UAM secret only as `uam_secret_set`. */
export interface PortalSettings {
  display_name: string | null;
  /** data:image/(png|jpeg|gif|webp);base64,... */
  logo: string | null;
  /** #rrggbb */
  primary_color: string | null;
  accent_color: string | null;
  /** Terms of use per language; a language without text falls back to the other. */
  terms: { tr?: string; en?: string } | null;
  /** The guest must tick "I accept the terms" (checked by the server too). */
  terms_required: boolean;
  /**
   * Methods this hotspot allows, a subset of PORTAL_METHODS (default: all). A guest is offered
   * those the tenant's sign-in settings offer too (offeredMethods).
   */
  methods: PortalMethod[];
  /** The gateway in front of this hotspot, for documentation and defaults; null: not said. */
  gateway: GatewayKind | null;
  /** CoovaChilli hand-back: CHAP response (default) or the PAP password form. */
  uam_auth: 'chap' | 'pap';
  uam_secret_set: boolean;
}

/** What the API accepts under `portal` (validated by the hotspot schemas); uam_secret is write-only, null clears it. */
export type PortalSettingsInput = Partial<Omit<PortalSettings, 'uam_secret_set'>> & { uam_secret?: string | null };

/** The methods a guest at this hotspot is offered: the hotspot's, of those its tenant offers. */
export function offeredMethods(hotspot: readonly PortalMethod[], tenant: readonly string[]): PortalMethod[] {
  return hotspot.filter((m) => tenant.includes(m));
}

/** The stored settings (jsonb `portal`) and secret column, as the API shows them. */
export function portalSettingsOf(stored: Record<string, unknown> | null | undefined, uamSecret: string | null): PortalSettings {
  const s = stored ?? {};
  const str = (k: string): string | null => (typeof s[k] === 'string' ? (s[k] as string) : null);
  const methods = Array.isArray(s.methods)
    ? (s.methods as unknown[]).filter((m): m is PortalMethod => (PORTAL_METHODS as readonly unknown[]).includes(m))
    : [...PORTAL_METHODS];
  const terms = s.terms !== null && typeof s.terms === 'object' ? (s.terms as { tr?: string; en?: string }) : null;
  return {
    display_name: str('display_name'), logo: str('logo'), primary_color: str('primary_color'), accent_color: str('accent_color'),
    terms, terms_required: s.terms_required === true, methods,
    gateway: (GATEWAY_KINDS as readonly unknown[]).includes(s.gateway) ? (s.gateway as GatewayKind) : null,
    uam_auth: s.uam_auth === 'pap' ? 'pap' : 'chap',
    uam_secret_set: uamSecret !== null && uamSecret !== '',
  };
}

/** The part of an input stored in jsonb (everything but the secret). */
export function storedPortalPart(input: PortalSettingsInput | undefined): Record<string, unknown> {
  if (!input) return {};
  const { uam_secret: _secret, ...rest } = input;
  return rest;
}
