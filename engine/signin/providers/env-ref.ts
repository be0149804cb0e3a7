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
