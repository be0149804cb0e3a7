import { jwtVerify, SignJWT, errors as joseErrors, type JWTPayload } from 'jose';
import { Errors } from '../errors.js';
import type { TenantService, Tenant } from './tenant-service.js';

/** Who is calling: always exactly one tenant. */
export interface Principal {
  tenant: Tenant;
  subject: string;
  roles: string[];
  /** stream_token: a stream-only token (`?token=` on the dashboard's streams, nowhere else). */
  via: 'jwt' | 'api_key' | 'stream_token';
}

/** The platform administration role: above tenants, on /admin/ routes only. */
export const PLATFORM_ADMIN = 'platform_admin';

/**
 * The roles that may read guests' identities in clear: the unmasked audit
 * chain and the 5651 evidence pack. `compliance` is the auditor's read-only
 * role (it changes nothing, as any role without admin); `viewer` reads masked.
 */
export const IDENTITY_READER_ROLES: readonly string[] = ['admin', 'compliance'];

/** True when `p` may read guests' identities in clear (IDENTITY_READER_ROLES). */
export function readsIdentities(p: Principal): boolean {
  return p.roles.some((r) => IDENTITY_READER_ROLES.includes(r));
}

/** A platform administrator: no tenant. */
export interface PlatformPrincipal {
  subject: string;
  roles: string[];
}

/** The two header forms, `Authorization: Bearer <token>` and `X-API-Key: <key>`, read synchronously from the request. */
export interface PresentedCredentials {
  authorization: string;
  apiKey: string;
  /** The `?token=` of a route that takes stream tokens (EventSource cannot send headers); used when no header is sent. */
  streamToken?: string;
}

/** The `scope` claim of a stream-only token. */
export const STREAM_SCOPE = 'stream';
/** How long a stream token is good for: long enough to open (and after a drop reopen) a stream, short enough to leak little from a URL. */
export const STREAM_TOKEN_TTL_SEC = 300;
/** Past this many distinct tokens verified within their lifetime the cache starts over (each is verified again). */
const MAX_VERIFIED_TOKENS = 10_000;

/**
 * Checks operator credentials: a JWT (HS256 only, `exp` and `tenant_id`
 * required) or an API key, in `Authorization: Bearer` or `X-API-Key`.
 * A bearer value that looks like an API key is treated as one, so POS systems
 * can use either header with a key.
 */
export class CredentialVerifier {
  /**
   * The secret imported once as an HMAC verify key: given the raw bytes, jose
   * imports them again on every verify, which a profile of the dashboard's
   * overview showed as about a third of a request's JWT cost.
   */
  private verifyKey: Promise<CryptoKey> | null = null;
  /** Verified tokens' payloads until their exp plus leeway, in seconds (verifiedPayload). */
  private readonly verified = new Map<string, { until: number; payload: JWTPayload }>();

  constructor(private readonly tenants: TenantService, private readonly secret: Uint8Array, private readonly leewaySec: number) {}

  private hmacKey(): Promise<CryptoKey> {
    return (this.verifyKey ??= crypto.subtle.importKey('raw', new Uint8Array(this.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']));
  }

  async authenticate(creds: PresentedCredentials): Promise<Principal> {
    let token = '';
    if (creds.authorization) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(creds.authorization);
      if (!m) throw Errors.UNAUTHORIZED('Authorization header must be "Bearer <token>"');
      token = m[1]!;
    }
    if (!token && !creds.apiKey && creds.streamToken) return this.verifyJwt(creds.streamToken, 'stream');
    const apiKey = creds.apiKey || (token.startsWith('gwk_') ? token : '');
    if (apiKey) {
      const tenantId = await this.tenants.tenantForApiKey(apiKey);
      const tenant = tenantId ? await this.tenants.get(tenantId) : null;
      if (!tenant) throw Errors.UNAUTHORIZED('API key is unknown or revoked');
      return { tenant, subject: apiKey.slice(0, 12), roles: ['admin'], via: 'api_key' };
    }
    if (!token) throw Errors.UNAUTHORIZED('Send a JWT as "Authorization: Bearer <token>" or an API key as "X-API-Key"');
    return this.verifyJwt(token, 'operator');
  }

  /**
   * A stream-only token for the principal (POST .../stream-token): its
   * tenant and roles, scope `stream`, good for STREAM_TOKEN_TTL_SEC.
   */
  async mintStreamToken(p: Principal): Promise<{ token: string; expires_in: number }> {
    const token = await signStreamToken(this.secret, p.tenant.id, p.roles, STREAM_TOKEN_TTL_SEC, `${p.via}:${p.subject}`);
    return { token, expires_in: STREAM_TOKEN_TTL_SEC };
  }

  /**
   * Checks a platform administrator (the /admin/ routes, above tenants): a
   * JWT with `roles` holding platform_admin and no `tenant_id`. Anything a
   * tenant holds (an API key, a tenant JWT, whatever its roles) is refused
   * with 403: it is a valid credential, for another surface. Tenant routes
   * refuse platform tokens in turn, as JWTs without tenant_id (401).
   */
  async authenticatePlatform(creds: PresentedCredentials): Promise<PlatformPrincipal> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(creds.authorization);
    if (creds.apiKey || m?.[1]?.startsWith('gwk_')) throw Errors.PLATFORM_ONLY('API keys belong to a tenant');
    if (!m) throw Errors.UNAUTHORIZED('Send a platform JWT as "Authorization: Bearer <token>"');
    let payload;
    try {
      ({ payload } = await jwtVerify(m[1]!, await this.hmacKey(), { algorithms: ['HS256'], clockTolerance: this.leewaySec, requiredClaims: ['exp'] }));
    } catch (err) {
      throw Errors.UNAUTHORIZED(err instanceof joseErrors.JWTExpired ? 'JWT has expired' : 'JWT is invalid');
    }
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + this.leewaySec) {
      throw Errors.UNAUTHORIZED('JWT claim invalid: "iat" is in the future');
    }
    if (payload['scope'] === STREAM_SCOPE) throw Errors.UNAUTHORIZED('A stream token opens the dashboard streams only');
    if (payload['tenant_id'] !== undefined) throw Errors.PLATFORM_ONLY('this token belongs to a tenant');
    const roles = Array.isArray(payload['roles']) ? payload['roles'].filter((r): r is string => typeof r === 'string') : [];
    if (!roles.includes(PLATFORM_ADMIN)) throw Errors.PLATFORM_ONLY(`the token lacks the ${PLATFORM_ADMIN} role`);
    return { subject: typeof payload.sub === 'string' ? payload.sub : '', roles };
  }

  /**
   * An operator JWT, or with `want` stream a stream token. Each is refused
   * where the other belongs: a stream token sits in URLs (and so in logs and
   * browser history), so it must open nothing but a stream; an operator
   * token is never taken from a URL.
   */
  private async verifyJwt(token: string, want: 'operator' | 'stream'): Promise<Principal> {
    let payload;
    try {
      payload = await this.verifiedPayload(token);
    } catch (err) {
      const why = err instanceof joseErrors.JWTExpired ? 'JWT has expired'
        : err instanceof joseErrors.JWTClaimValidationFailed ? `JWT claim invalid: ${err.message}`
        : 'JWT is invalid';
      throw Errors.UNAUTHORIZED(why);
    }
    // jose checks iat's type only: a token issued in the future (past the leeway) was made by a wrong clock, or to outlive one.
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + this.leewaySec) {
      throw Errors.UNAUTHORIZED('JWT claim invalid: "iat" is in the future');
    }
    const isStream = payload['scope'] === STREAM_SCOPE;
    if (want === 'stream' && !isStream) throw Errors.UNAUTHORIZED('?token= takes a stream token (POST /api/v1/tenants/me/stream-token), not an operator token');
    if (want === 'operator' && isStream) throw Errors.UNAUTHORIZED('A stream token opens the dashboard streams only');
    const tenantId = payload['tenant_id'];
    if (typeof tenantId !== 'string' || tenantId === '') throw Errors.UNAUTHORIZED('JWT claim tenant_id must be a non-empty string');
    const tenant = await this.tenants.get(tenantId);
    if (!tenant) throw Errors.UNAUTHORIZED('JWT names an unknown tenant');
    const roles = Array.isArray(payload['roles']) ? payload['roles'].filter((r): r is string => typeof r === 'string') : [];
    return { tenant, subject: typeof payload.sub === 'string' ? payload.sub : '', roles, via: isStream ? 'stream_token' : 'jwt' };
  }

  /**
   * The payload of a token whose signature and times (exp, nbf) jose
   * checked, kept until the token expires: the dashboard polls with the same
   * token every few seconds, and each jose verify is an HMAC job on the libuv
   * thread pool (a hop there and back that, on a busy machine, waits for a
   * core). Only what cannot change before exp is skipped on a hit (the
   * signature, and nbf, already passed); every other check above, and the
   * tenant lookup, run on every request. Bounded by MAX_VERIFIED_TOKENS.
   */
  private async verifiedPayload(token: string): Promise<JWTPayload> {
    const hit = this.verified.get(token);
    // jose's own rule: expired once the clock (whole seconds) reaches exp + leeway.
    if (hit && Math.floor(Date.now() / 1000) < hit.until) return hit.payload;
    if (hit) this.verified.delete(token);
    // algorithms pins HS256: "none", RS256 with the secret as a public key, etc. are all refused.
    const { payload } = await jwtVerify(token, await this.hmacKey(), {
      algorithms: ['HS256'],
      clockTolerance: this.leewaySec,
      requiredClaims: ['exp', 'tenant_id'],
    });
    if (this.verified.size >= MAX_VERIFIED_TOKENS) this.verified.clear();
    this.verified.set(token, { until: (payload.exp ?? 0) + this.leewaySec, payload });
    return payload;
  }
}

/** Signs an operator token as the contract defines it: HS256, claims sub, tenant_id, roles, iat, exp. */
export async function signOperatorToken(secret: Uint8Array, tenantId: string, roles: string[], ttlSec: number, sub = 'cli'): Promise<string> {
  return new SignJWT({ tenant_id: tenantId, roles })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSec)
    .sign(secret);
}

/** Signs a stream-only token: HS256, claims sub, tenant_id, roles, scope `stream`, iat, exp. */
export async function signStreamToken(secret: Uint8Array, tenantId: string, roles: string[], ttlSec: number, sub: string): Promise<string> {
  return new SignJWT({ tenant_id: tenantId, roles, scope: STREAM_SCOPE })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSec)
    .sign(secret);
}

/** Signs a platform administration token: HS256, sub, roles [platform_admin], iat, exp, and no tenant_id. */
export async function signPlatformToken(secret: Uint8Array, ttlSec: number, sub = 'cli'): Promise<string> {
  return new SignJWT({ roles: [PLATFORM_ADMIN] })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSec)
    .sign(secret);
}
