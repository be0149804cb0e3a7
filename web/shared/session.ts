/**
 * The operator's session: the short-lived JWT from POST /api/v1/auth/session.
 * Kept in sessionStorage so it belongs to this tab only and is gone when the
 * tab closes; it is never written to localStorage or a cookie. A session past
 * its expiry is dropped on read, so an idle tab signs in again.
 */

export interface Tenant {
  id: string;
  name: string;
  modules: string[];
}

export interface Session {
  token: string;
  /** ISO 8601 UTC; the token's `exp`. */
  expires_at: string;
  tenant: Tenant;
  roles: string[];
  /** Begun with an API key: refreshable an hour at a time while the key lives (POST /api/v1/auth/session/refresh). */
  renewable?: boolean;
}

const KEY = 'gw.session';

export function loadSession(now = Date.now()): Session | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    if (typeof s.token !== 'string' || !(Date.parse(s.expires_at) > now)) {
      sessionStorage.removeItem(KEY);
      return null;
    }
    return s;
  } catch {
    return null;
  }
}

export function saveSession(s: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(s));
}

export function clearSession(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // nothing stored
  }
}

/** How long before its end a renewable session is refreshed: early enough for a retry or two. */
export const REFRESH_BEFORE_MS = 5 * 60_000;

/** Milliseconds until the session ends (negative once it has). */
export const remainingMs = (s: Session, now = Date.now()): number => Date.parse(s.expires_at) - now;

/**
 * Exchanges an API key or an operator JWT for a session. Throws ApiError
 * (api.ts) on refusal; the caller shows it as a sentence.
 */
export async function exchange(key: string, post: (path: string, body: unknown) => Promise<Session>): Promise<Session> {
  const s = await post('/api/v1/auth/session', { api_key: key.trim() });
  saveSession(s);
  return s;
}

/**
 * Another hour for a renewable session; the new token replaces the old in
 * sessionStorage. A refusal (401: the API key was revoked) signs the page
 * out, as any 401 does.
 */
export async function refresh(post: (path: string) => Promise<Session>): Promise<Session> {
  const s = await post('/api/v1/auth/session/refresh');
  saveSession(s);
  return s;
}
