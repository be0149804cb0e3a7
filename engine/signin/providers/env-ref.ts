/**
 * Provider credentials are referenced, never stored: `env://NAME` names an
 * environment variable read at send time, so rotating a secret is a restart
 * (or a changed environment) and no database row, log line or API answer ever
 * holds one. Only the reference travels; the value lives in a local variable
 * of the call that uses it.
 */
const ENV_REF = /^env:\/\/([A-Za-z_][A-Za-z0-9_]{0,127})$/;

/** True when `ref` has the `env://NAME` form. */
export function isEnvRef(ref: string): boolean {
  return ENV_REF.test(ref);
}

/**
 * The variables a tenant's own settings may name: `env://<TENANT ID IN CAPITALS>_...`
 * (tenant tn_ab12 may use env://TN_AB12_NETGSM). A tenant administrator sets
 * these references; the service's own variables (DATABASE_URL, JWT_SECRET,
 * another tenant's credentials) must never be reachable through them, or a
 * tenant could have them sent, as a password, to a URL of its choice.
 * The platform administrator's provider records may name any variable.
 */
export function tenantRefPrefix(tenantId: string): string {
  return `${tenantId.toUpperCase()}_`;
}

/** True when `ref` is an `env://NAME` reference a tenant's settings may hold (see tenantRefPrefix). */
export function isTenantEnvRef(ref: string, tenantId: string): boolean {
  const m = ENV_REF.exec(ref);
  return m !== null && m[1]!.startsWith(tenantRefPrefix(tenantId)) && m[1]!.length > tenantRefPrefix(tenantId).length;
}

/** The variable's value, or null when the reference is malformed or the variable unset or empty. */
export function resolveEnvRef(ref: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const m = ENV_REF.exec(ref);
  if (!m) return null;
  const v = env[m[1]!];
  return v ? v : null;
}

/** A `usercode:password` pair (Netgsm SMS and type C), split at the first colon; null when there is none. */
export function basicPair(value: string): { user: string; header: string } | null {
  const i = value.indexOf(':');
  if (i <= 0 || i === value.length - 1) return null;
  return { user: value.slice(0, i), header: 'Basic ' + Buffer.from(value).toString('base64') };
}
