import { inTransaction, type Pool } from '../store/postgres.js';
import { Errors } from '../errors.js';
import type { OutboundPolicy } from '../net/outbound-target.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { basicPair, isTenantEnvRef, tenantRefPrefix } from './providers/env-ref.js';
import { checkEmailConfig, checkSettingsTargets, checkSmsConfig } from './providers/provider-registry.js';

/** Sign-in methods, by the `auth_method` name sessions and audit records carry. */
export const AUTH_METHODS = ['voucher', 'sms_otp', 'msgapp_otp', 'email', 'sponsor', 'pms'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** A secret named by the environment variable that holds it; resolved at send time, never stored. */
export const ENV_REF = /^env:\/\/[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A secret is either referenced (`credentials_ref: env://NAME`, read from the environment at send
 * time) or given inline once (`credentials`, write-only: sealed into tenant_secrets, shown back
 * only as `credentials_set: true`). Likewise email.smtp_url. A messaging-app provider's keys are the
 * platform's provider record's (msgapp-provider-store.ts), sealed there when given inline.
 */
export interface SmsSettings { provider: 'netgsm'; base_url?: string; credentials_ref?: string; credentials_set?: boolean; sender?: string }
/**
 * The console's messaging-app parameters: MSGAPP_API_KEY (held as a reference),
 * MSGAPP_TEMPLATE_ID, MSGAPP_SENDER_PHONE (E.164), MSGAPP_FALLBACK_SMS and
 * MSGAPP_FALLBACK_TIMEOUT_SEC (default 30).
 */
export interface MsgappSettings {
  api_key_ref?: string; template_id?: string; sender_phone?: string;
  /** MSGAPP_FALLBACK_SMS: a code not delivered in time (or refused) goes by SMS. */
  fallback_sms: boolean;
  /** MSGAPP_FALLBACK_TIMEOUT_SEC. */
  fallback_timeout_sec: number;
}
export interface EmailSettings { smtp_url_ref?: string; smtp_url_set?: boolean; from?: string }

/** OTP abuse limits; 0 turns a limit off. */
export interface OtpLimits {
  /** Wait between two sends to one phone or address. */
  cooldown_sec: number;
  /** Sends to one phone or address per 24 h window. */
  per_identity_daily: number;
  /** Sends asked for by one client IP per hour window. */
  per_ip_hourly: number;
  /** Sends asked for by one device (MAC) per hour window. */
  per_mac_hourly: number;
  /** Sends to one dial prefix (or e-mail domain) per hour window: SMS pumping targets a number range. */
  per_prefix_hourly: number;
  /** Digits after `+` that make the prefix counted by per_prefix_hourly. */
  prefix_digits: number;
}

/**
 * Voucher guessing limits (use-voucher-18.lua): only unknown codes count;
 * past a limit every code is refused, a valid one too, and nothing is spent.
 * 0 turns a limit off.
 */
export interface GuessingLimits {
  /** Unknown codes one device (MAC: the portal's, or RADIUS Calling-Station-Id) may try at one hotspot within window_sec. */
  per_device: number;
  /** Unknown codes one source address (the portal's client, never the body's `ip`) may try within window_sec, at any of the tenant's hotspots. */
  per_address: number;
  /** The sliding window both limits count in, s. */
  window_sec: number;
  /** Attempts the limits refuse at one hotspot within a 10-minute window that raise a `signin_guessing` incident (0: never). */
  incident_refusals: number;
}

/**
 * Sponsor approval (engine/signin/sponsor/): who may sponsor a guest, the access lengths a sponsor
 * picks from, how long a link lives, the request limits (0 turns one off), how the page shows the MAC.
 */
export interface SponsorSettings {
  enabled: boolean;
  /** E-mail domains whose addresses may sponsor (lower case, e.g. example.com; a sub-domain does not count). */
  allowed_domains: string[];
  /** Single addresses that may sponsor besides the domains. */
  allowed_emails: string[];
  /** The access lengths a sponsor chooses from, minutes, in the order shown. */
  durations_minutes: number[];
  /** How long the approve and reject links work, minutes. */
  link_ttl_minutes: number;
  /** Requests one source address may file per hour. */
  per_ip_hourly: number;
  /** Requests one device (MAC) may file per hour at a hotspot. */
  per_mac_hourly: number;
  /** Requests one sponsor address may receive per hour: no one's inbox is flooded. */
  per_sponsor_hourly: number;
  /** The sponsor's page shows the device's MAC masked (default) or in full. */
  show_mac: 'masked' | 'full';
}

export const DEFAULT_SPONSOR: Readonly<SponsorSettings> = {
  enabled: false, allowed_domains: [], allowed_emails: [], durations_minutes: [60, 240, 480], link_ttl_minutes: 30,
  per_ip_hourly: 20, per_mac_hourly: 5, per_sponsor_hourly: 30, show_mac: 'masked',
};

/** Session settings for one method; absent fields fall back to the hotspot's. */
export interface MethodSession {
  session_minutes?: number; bandwidth_down_mbps?: number; bandwidth_up_mbps?: number;
  daily_quota_mb?: number; session_quota_mb?: number;
}

export interface SignInSettings {
  methods: AuthMethod[];
  sms: SmsSettings | null;
  msgapp: MsgappSettings;
  email: EmailSettings | null;
  otp: OtpLimits;
  allowed_prefixes: string[];
  blocked_prefixes: string[];
  sessions: Partial<Record<AuthMethod, MethodSession>>;
  guessing: GuessingLimits;
  sponsor: SponsorSettings;
}

export const DEFAULT_OTP_LIMITS: Readonly<OtpLimits> = {
  cooldown_sec: 60, per_identity_daily: 10, per_ip_hourly: 20, per_mac_hourly: 10, per_prefix_hourly: 300, prefix_digits: 5,
};

export const DEFAULT_GUESSING_LIMITS: Readonly<GuessingLimits> = { per_device: 10, per_address: 300, window_sec: 600, incident_refusals: 50 };

/** A tenant that never saved settings offers vouchers only, as before phone and e-mail sign-in existed. */
export function defaultSettings(): SignInSettings {
  return {
    methods: ['voucher'], sms: null, msgapp: { fallback_sms: false, fallback_timeout_sec: 30 }, email: null,
    otp: { ...DEFAULT_OTP_LIMITS }, allowed_prefixes: [], blocked_prefixes: [], sessions: {},
    guessing: { ...DEFAULT_GUESSING_LIMITS },
    sponsor: { ...DEFAULT_SPONSOR },
  };
}

/**
 * What PUT accepts (validated by the route's schema): the document, with optional parts, and the
 * inline secrets. Per secret: the value itself (sealed and stored), or its env:// reference, or
 * `<name>_set: true` as GET showed it (keep the one stored), or none (remove it).
 */
export type SignInSettingsInput = Partial<Omit<SignInSettings, 'msgapp' | 'otp' | 'guessing' | 'sms' | 'email' | 'sponsor'>> & {
  sms?: (SmsSettings & { credentials?: string }) | null;
  email?: (EmailSettings & { smtp_url?: string }) | null;
  msgapp?: Partial<MsgappSettings>;
  otp?: Partial<OtpLimits>;
  guessing?: Partial<GuessingLimits>;
  sponsor?: Partial<SponsorSettings>;
};

/** The secrets a tenant may give inline: the settings part, the write-only field, its reference and its `_set` mark. */
export const INLINE_SECRETS = [
  { name: 'sms.credentials', part: 'sms', field: 'credentials', ref: 'credentials_ref', set: 'credentials_set' },
  { name: 'email.smtp_url', part: 'email', field: 'smtp_url', ref: 'smtp_url_ref', set: 'smtp_url_set' },
] as const;

/**
 * How long a process trusts its copy of a tenant's settings; another process's change shows after
 * this. A re-read that finds a newer row tells the listeners (the provider registry drops the tenant's
 * senders), so a carrier account changed through another process is taken from the moment this process
 * has read it, whatever else is cached.
 */
const CACHE_MS = 5_000;

/**
 * Per-tenant sign-in settings in Postgres (sign_in_settings), read on every
 * OTP request through a short cache. PUT replaces the whole document; what it
 * leaves out takes the default. Secrets never enter: every `*_ref` must be an
 * `env://NAME` reference (checked here too, not only by the route's schema).
 */
export class SignInSettingsService {
  /** `version`: the row's updated_at as Postgres wrote it ('' when the tenant has no row). */
  private readonly cache = new Map<string, { at: number; value: SignInSettings; version: string }>();
  private readonly reading = new Map<string, Promise<SignInSettings>>();
  private readonly listeners: ((tenantId: string) => void)[] = [];

  /** `outbound` judges the URLs the settings name (engine/net/outbound-target.ts). */
  constructor(
    private readonly pool: Pool, private readonly outbound: OutboundPolicy,
    private readonly now: () => number = Date.now, private readonly secrets: SecretStore | null = null,
  ) {}

  /**
   * Calls `fn` after a tenant's settings change: at once when changed through this process, on the next
   * re-read when changed through another (before the new copy is handed to anyone).
   */
  onChange(fn: (tenantId: string) => void): void {
    this.listeners.push(fn);
  }

  /**
   * The tenant's settings, read once per CACHE_MS however many sign-ins ask meanwhile. While
   * Postgres does not answer, the last copy read stays in use: a sign-in needs no Postgres.
   */
  async get(tenantId: string): Promise<SignInSettings> {
    const hit = this.cache.get(tenantId);
    if (hit && this.now() - hit.at < CACHE_MS) return hit.value;
    let p = this.reading.get(tenantId);
    if (!p) {
      p = this.read(tenantId).finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, p);
    }
    try {
      return await p;
    } catch (err) {
      if (hit) return hit.value;
      throw err;
    }
  }

  private async read(tenantId: string): Promise<SignInSettings> {
    const { rows } = await this.pool.query<{ settings: SignInSettingsInput; version: string }>(
      'SELECT settings, updated_at::text AS version FROM sign_in_settings WHERE tenant_id = $1', [tenantId]);
    const version = rows[0]?.version ?? '';
    const before = this.cache.get(tenantId);
    // Unchanged since the last read: the same copy, so what was built from it (a sender) stays good.
    if (before && before.version === version) {
      before.at = this.now();
      return before.value;
    }
    const value = withDefaults(rows[0]?.settings ?? {});
    this.cache.set(tenantId, { at: this.now(), value, version });
    if (before) this.changed(tenantId);
    return value;
  }

  private changed(tenantId: string): void {
    for (const fn of this.listeners) fn(tenantId);
  }

  /**
   * The voucher guessing limits (GuessingLimitsSource of voucher-method.ts). A tenant this process
   * has not read yet while Postgres is down gets the defaults: voucher sign-ins go on, limited.
   */
  async guessing(tenantId: string): Promise<GuessingLimits> {
    try {
      return (await this.get(tenantId)).guessing;
    } catch {
      return { ...DEFAULT_GUESSING_LIMITS };
    }
  }

  async put(tenantId: string, input: SignInSettingsInput): Promise<SignInSettings> {
    const value = withDefaults(input);
    checkRefs(value, tenantId);
    const writes = await inlineSecretWrites(this.secrets, tenantId, input, value);
    const problems = [...(value.sms ? checkSmsConfig(value.sms) : []), ...(value.email ? checkEmailConfig(value.email) : [])];
    if (problems.length) throw Errors.VALIDATION_FAILED(problems.join('; '), problems.map((message) => ({ field: 'sms', message })));
    await checkSettingsTargets(this.outbound, value.sms, value.email);
    // An inline SMTP URL is not in the stored document (it is sealed): it is judged here, as a reference's URL is above.
    if (typeof input.email?.smtp_url === 'string') await this.outbound.checkUrl('email.smtp_url', input.email.smtp_url, ['smtp:', 'smtps:']);
    // The document and its secrets change together: a reader never sees `_set` without its row.
    const version = await inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<{ version: string }>(
        `INSERT INTO sign_in_settings (tenant_id, settings) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()
         RETURNING updated_at::text AS version`,
        [tenantId, JSON.stringify(value)]);
      for (const w of writes) {
        if (w.plain === null) await this.secrets?.remove(c, tenantId, w.name);
        else await this.secrets!.put(c, tenantId, w.name, w.plain);
      }
      return rows[0]!.version;
    });
    this.cache.set(tenantId, { at: this.now(), value, version });
    this.changed(tenantId);
    return value;
  }
}

/** A secret to seal and store (plain) or to remove (null). */
interface SecretWrite { name: string; plain: string | null }

/**
 * Sorts out the inline secrets of a PUT: strips every value from `value` (the document that is
 * stored and answered), marks `<field>_set` where one is or stays stored, and lists the writes.
 * A problem names the field, never echoes its value.
 */
async function inlineSecretWrites(store: SecretStore | null, tenantId: string, input: SignInSettingsInput, value: SignInSettings): Promise<SecretWrite[]> {
  const writes: SecretWrite[] = [];
  const fail = (field: string, message: string): never => { throw Errors.VALIDATION_FAILED(`${field} ${message}`, [{ field, message }]); };
  for (const spec of INLINE_SECRETS) {
    const given = input[spec.part] as Record<string, unknown> | null | undefined;
    const stored = value[spec.part] as Record<string, unknown> | null;
    const field = `${spec.part}.${spec.field}`;
    const plain = given?.[spec.field];
    const keep = given?.[spec.set] === true;
    if (stored) {
      delete stored[spec.field];
      delete stored[spec.set];
    }
    if (typeof plain === 'string') {
      if (given?.[spec.ref] !== undefined) fail(field, `and ${spec.ref} exclude each other: give the secret inline or its reference`);
      if (!store?.box.canSeal) throw Errors.SECRETS_UNAVAILABLE();
      const problem = checkInline(spec.name, plain);
      if (problem) fail(field, problem);
      writes.push({ name: spec.name, plain });
      stored![spec.set] = true;
    } else if (keep && given?.[spec.ref] === undefined) {
      if (!store || !(await store.has(tenantId, spec.name))) fail(`${spec.part}.${spec.set}`, 'is true but no secret is stored: give it inline');
      stored![spec.set] = true;
    } else {
      writes.push({ name: spec.name, plain: null });
    }
  }
  return writes;
}

/** What an inline secret must look like to be of use; a sentence without the value, or null. */
function checkInline(name: string, plain: string): string | null {
  if (name === 'sms.credentials' && !basicPair(plain)) return 'must be usercode:password';
  if (name === 'email.smtp_url' && !/^smtps?:\/\/[^\s/]+/.test(plain)) return 'must be an smtp:// or smtps:// URL';
  return null;
}

/** The document PUT stores and answers; the parts are copies (inline secrets are stripped from them, not from the input). */
function withDefaults(input: SignInSettingsInput): SignInSettings {
  const d = defaultSettings();
  return {
    methods: input.methods ? [...new Set(input.methods)] : d.methods,
    sms: input.sms ? { ...input.sms } : null,
    msgapp: { ...d.msgapp, ...input.msgapp },
    email: input.email ? { ...input.email } : null,
    otp: { ...d.otp, ...input.otp },
    allowed_prefixes: input.allowed_prefixes ?? [],
    blocked_prefixes: input.blocked_prefixes ?? [],
    sessions: input.sessions ?? {},
    guessing: { ...d.guessing, ...input.guessing },
    sponsor: {
      ...d.sponsor, ...input.sponsor,
      allowed_domains: [...new Set((input.sponsor?.allowed_domains ?? []).map((x) => x.toLowerCase()))],
      allowed_emails: [...new Set((input.sponsor?.allowed_emails ?? []).map((x) => x.toLowerCase()))],
      durations_minutes: input.sponsor?.durations_minutes?.length ? [...new Set(input.sponsor.durations_minutes)] : [...d.sponsor.durations_minutes],
    },
  };
}

function checkRefs(s: SignInSettings, tenantId: string): void {
  const refs: [string, string | undefined][] = [
    ['sms.credentials_ref', s.sms?.credentials_ref], ['msgapp.api_key_ref', s.msgapp.api_key_ref], ['email.smtp_url_ref', s.email?.smtp_url_ref],
  ];
  for (const [field, v] of refs) {
    if (v !== undefined && !ENV_REF.test(v)) {
      throw Errors.VALIDATION_FAILED(`${field} must be an env://NAME reference, never the secret itself`, [{ field, message: 'must match env://NAME' }]);
    }
    if (v !== undefined && !isTenantEnvRef(v, tenantId)) {
      const prefix = tenantRefPrefix(tenantId);
      throw Errors.VALIDATION_FAILED(`${field} must name one of this tenant's variables, env://${prefix}...`, [{ field, message: `must match env://${prefix}NAME` }]);
    }
  }
}
