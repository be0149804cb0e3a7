import { Errors, signOperatorToken, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { requestSchema, responseSchema, secret } from '../schemas.js';

/** How long a console or dashboard session lasts: the contract gives operator tokens "lifetime shown as 3600 s". */
export const SESSION_TTL_SEC = 3600;

const sessionCreate = requestSchema<{ api_key: string }>('authSessionCreate', {
  type: 'object', additionalProperties: false, required: ['api_key'],
  properties: { api_key: secret({ type: 'string', minLength: 1, maxLength: 4096, description: 'An API key (gwk_...) or an operator JWT' } as const) },
});

const sessionCreated = responseSchema('authSession', {
  type: 'object',
  properties: {
    token: { type: 'string', description: 'An operator JWT (HS256); send it as Authorization: Bearer' },
    expires_at: { type: 'string', format: 'date-time' },
    tenant: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, modules: { type: 'array', items: { type: 'string' } } } },
    roles: { type: 'array', items: { type: 'string' } },
    renewable: { type: 'boolean', description: 'Begun with an API key: POST /api/v1/auth/session/refresh gives it another hour while the key is not revoked' },
  },
});

/** The `exp` of a JWT that has already been verified; null when it has none (cannot happen: exp is required). */
function expOf(jwt: string): number | null {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp : null;
  } catch {
    return null;
  }
}

/** The 201 both calls answer: the token, when it ends (s), and whose it is. */
function sessionAnswer(token: string, expSec: number, tenant: { id: string; name: string; modules: string[] }, roles: string[], renewable: boolean) {
  const { id, name, modules } = tenant;
  return { status: 201, headers: { 'cache-control': 'no-store' }, body: { token, expires_at: new Date(expSec * 1000).toISOString(), tenant: { id, name, modules }, roles, renewable } };
}

/**
 * POST /api/v1/auth/session: the console's and dashboard's sign-in. On the
 * public surface, which never has a port of its own, so that both pages reach
 * it wherever they are served (http/server.ts PAGE_CALLS). The
 * pages never keep the long-lived API key: they trade it here for an
 * operator JWT of one hour, kept in the tab's sessionStorage. An API key
 * gives role admin (API keys act as admin); a pasted JWT keeps its roles
 * and never gains time: the new token ends no later than the one presented.
 * POST /api/v1/auth/session/refresh gives a session begun with an API key
 * another hour while the key is not revoked: the pages call it before their
 * token runs out, so a dashboard on a wall screen stays signed in.
 */
export function authSessionRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'post', path: '/api/v1/auth/session', surface: 'public', auth: false, bodySchema: sessionCreate,
      responseSchema: sessionCreated, status: 201,
      summary: 'Exchange an API key (or an operator JWT) for a one-hour operator JWT; the console and dashboard sign-in',
      errors: { 401: 'unauthorized: the key or token is unknown, revoked, expired or invalid' },
      handler: async ({ body }) => {
        const key = body.api_key.trim();
        const isKey = key.startsWith('gwk_');
        const principal = await engine.credentials.authenticate(isKey ? { authorization: '', apiKey: key } : { authorization: `Bearer ${key}`, apiKey: '' });
        const now = Math.floor(Date.now() / 1000);
        const limit = isKey ? now + SESSION_TTL_SEC : Math.min(now + SESSION_TTL_SEC, expOf(key) ?? now + SESSION_TTL_SEC);
        const roles = isKey ? ['admin'] : principal.roles;
        const token = await signOperatorToken(engine.config.jwtSecret, principal.tenant.id, roles, Math.max(1, limit - now), principal.subject || 'console');
        return sessionAnswer(token, Math.max(now + 1, limit), principal.tenant, roles, isKey);
      },
    }),
    route({
      method: 'post', path: '/api/v1/auth/session/refresh', surface: 'public', auth: true, readOnly: true, responseSchema: sessionCreated, status: 201,
      summary: 'A session begun with an API key, one hour more while that key is not revoked (a wall screen stays signed in)',
      errors: { 401: 'unauthorized: not a session token, begun from a pasted JWT (which never gains time), or its API key is revoked' },
      handler: async ({ principal }) => {
        // A session made from an API key carries the key's id as `sub`; it lives as long as the key does, an hour at a
        // time, so revoking the key ends every page signed in with it within the hour.
        if (principal.via !== 'jwt' || !(await engine.tenants.apiKeyLive(principal.tenant.id, principal.subject))) {
          throw Errors.UNAUTHORIZED('This session cannot be extended: sign in again');
        }
        const now = Math.floor(Date.now() / 1000);
        const token = await signOperatorToken(engine.config.jwtSecret, principal.tenant.id, principal.roles, SESSION_TTL_SEC, principal.subject);
        return sessionAnswer(token, now + SESSION_TTL_SEC, principal.tenant, principal.roles, true);
      },
    }),
  ];
}
