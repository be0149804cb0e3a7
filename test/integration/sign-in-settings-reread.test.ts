import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { OutboundPolicy } from '../../engine/net/outbound-target.js';
import { SignInSettingsService } from '../../engine/signin/sign-in-settings.js';
import { poolTest as test } from '../support/fixture.js';

/**
 * Two processes' copies of one tenant's sign-in settings, each on its own clock. A process that
 * re-reads a row changed through the other tells its listeners (the sender cache) before it hands
 * the new copy out, so a sender built from the old copy is never used after the new one is seen;
 * a re-read that finds the same row keeps the same copy and tells no one.
 */
describe('sign-in settings re-read across processes', () => {
  test('a newer row read by the other process reaches its listeners before its copy is returned; an unchanged one does not', async ({ pool }) => {
    const tenant = `ten_reread_${randomBytes(4).toString('hex')}`;
    await pool.query('INSERT INTO tenants (id, name) VALUES ($1, $2)', [tenant, 'Re-read']);
    const outbound = new OutboundPolicy({ allowPrivate: true });
    const writer = new SignInSettingsService(pool, outbound);
    let clock = 1_000_000;
    const reader = new SignInSettingsService(pool, outbound, () => clock);
    const heard: { tenant: string; methodsThen: string[] }[] = [];
    let latest: Awaited<ReturnType<SignInSettingsService['get']>> | undefined;
    reader.onChange((t) => heard.push({ tenant: t, methodsThen: latest?.methods ?? [] }));

    await writer.put(tenant, { methods: ['voucher'] });
    latest = await reader.get(tenant);
    expect(latest.methods).toEqual(['voucher']);

    // Unchanged row, copy expired: the same object again, no one told.
    clock += 5_001;
    expect(await reader.get(tenant)).toBe(latest);
    expect(heard).toEqual([]);

    // Changed through the other process: within the copy's life the reader still answers the old one...
    await writer.put(tenant, { methods: ['voucher', 'email'] });
    expect(await reader.get(tenant)).toBe(latest);
    // ...and the read that finds the newer row tells the listeners while the old copy was still the latest handed out.
    clock += 5_001;
    const next = await reader.get(tenant);
    expect(next.methods).toEqual(['voucher', 'email']);
    expect(heard).toEqual([{ tenant, methodsThen: ['voucher'] }]);
  });
});
