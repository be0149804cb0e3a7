import { afterEach, describe, expect, it, vi } from 'vitest';
import { CredentialVerifier, signOperatorToken } from '../../engine/tenants/credentials.js';
import type { Tenant, TenantService } from '../../engine/tenants/tenant-service.js';

/**
 * CredentialVerifier keeps a verified token's payload until it expires:
 * the cache must never let a token through that a fresh verify would refuse.
 */
describe('verified JWTs kept until they expire', () => {
  const secret = new TextEncoder().encode('credential-cache-test-secret-0123456789abcdef');
  const tenants = new Map<string, Tenant>([['tn_a', { id: 'tn_a', name: 'A', modules: ['dashboard'], createdAt: new Date(0) }]]);
  const source = { get: async (id: string) => tenants.get(id) ?? null } as unknown as TenantService;
  const bearer = (t: string) => ({ authorization: `Bearer ${t}`, apiKey: '' });

  afterEach(() => { vi.useRealTimers(); });

  it('a cached token still expires at exp plus the leeway, and still needs its tenant', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-25T04:00:00Z'));
    const leeway = 5;
    const v = new CredentialVerifier(source, secret, leeway);
    const token = await signOperatorToken(secret, 'tn_a', ['viewer'], 60, 'ops');
    expect(await v.authenticate(bearer(token))).toMatchObject({ tenant: { id: 'tn_a' }, subject: 'ops', roles: ['viewer'], via: 'jwt' });
    vi.setSystemTime(new Date('2026-11-25T04:01:04Z')); // exp + 4 s: inside the leeway
    expect((await v.authenticate(bearer(token))).subject).toBe('ops');
    vi.setSystemTime(new Date('2026-11-25T04:01:05Z')); // exp + leeway: jose's own limit
    await expect(v.authenticate(bearer(token))).rejects.toMatchObject({ status: 401, message: 'JWT has expired' });
  });

  it('a token whose tenant is gone is refused though its signature was checked before', async () => {
    const v = new CredentialVerifier(source, secret, 0);
    tenants.set('tn_b', { id: 'tn_b', name: 'B', modules: [], createdAt: new Date(0) });
    const token = await signOperatorToken(secret, 'tn_b', ['admin'], 600);
    expect((await v.authenticate(bearer(token))).tenant.id).toBe('tn_b');
    tenants.delete('tn_b');
    await expect(v.authenticate(bearer(token))).rejects.toMatchObject({ status: 401, message: 'JWT names an unknown tenant' });
  });

  it('a token changed by one character is verified on its own, and refused', async () => {
    const v = new CredentialVerifier(source, secret, 0);
    const token = await signOperatorToken(secret, 'tn_a', ['viewer'], 600);
    await v.authenticate(bearer(token));
    const [h, p, s] = token.split('.');
    const flipped = `${h}.${p}.${s!.slice(0, -2)}${s!.slice(-2) === 'AA' ? 'AB' : 'AA'}`;
    await expect(v.authenticate(bearer(flipped))).rejects.toMatchObject({ status: 401, message: 'JWT is invalid' });
  });
});
