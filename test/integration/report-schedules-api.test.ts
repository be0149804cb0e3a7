import { describe, expect } from 'vitest';
import { signOperatorToken } from '../../engine/index.js';
import { call, JWT_SECRET, newTenant, serviceTest, type Running, type Tenant } from '../support/fixture.js';

// The scheduler is off in this file's service (testEnv): these tests are about the API, nothing is sent.
const test = serviceTest();

/**
 * Deletes the tenant's schedules when the test ends, passed or failed: the mail tests' schedulers share this
 * database, run on the real clock, and would otherwise run (and mail) whatever this file left behind.
 */
function dropSchedulesAtEnd(svc: Running, t: Tenant, onTestFinished: (fn: () => Promise<void>) => void): void {
  onTestFinished(async () => {
    const list = await call(svc.base, 'GET', '/v1/reports/schedules', { auth: t.apiKey });
    for (const s of list.body.data as { id: string }[]) {
      expect((await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: t.apiKey })).status).toBe(200);
    }
  });
}

describe('report schedules API (/v1/reports/schedules)', () => {
  test('create, list, read, runs and delete; next_run_at is 08:00 in the venue\'s zone', async ({ svc, tenant, onTestFinished }) => {
    dropSchedulesAtEnd(svc, tenant, onTestFinished);
    const created = await call(svc.base, 'POST', '/v1/reports/schedules', {
      auth: tenant.apiKey,
      body: { frequency: 'weekly', recipients: ['a@example.com', 'B@example.com', 'b@example.com'], hotspot_id: tenant.hotspotId, content: 'report', lang: 'en', name: 'Monday' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const s = created.body;
    expect(s).toMatchObject({
      name: 'Monday', frequency: 'weekly', hotspot_id: tenant.hotspotId, content: 'report', lang: 'en', time_zone: 'Europe/Istanbul',
      // The same address twice (case aside) is one recipient.
      recipients: ['a@example.com', 'B@example.com'],
    });
    expect(s.id).toMatch(/^rsc_[0-9a-z]{16}$/);
    // Monday 08:00 Istanbul (UTC+3, no DST) is 05:00Z, after the creation, within a week.
    const next = Date.parse(s.next_run_at);
    expect(new Date(next).getUTCDay()).toBe(1);
    expect(s.next_run_at).toMatch(/T05:00:00\.000Z$/);
    expect(next).toBeGreaterThan(Date.parse(s.created_at));
    expect(next - Date.parse(s.created_at)).toBeLessThanOrEqual(7 * 86_400_000);

    const list = await call(svc.base, 'GET', '/v1/reports/schedules', { auth: tenant.apiKey });
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([s.id]);
    expect((await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey })).body).toEqual(s);
    expect((await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body).toEqual({ data: [] });

    // Defaults: all hotspots in the tenant's zone (its first venue's, as the tenant sets none), so Turkish.
    const all = await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'monthly', recipients: ['c@example.com'], content: 'compliance' } });
    expect(all.status).toBe(201);
    expect(all.body).toMatchObject({ lang: 'tr', hotspot_id: null, time_zone: 'Europe/Istanbul', name: '' });
    expect(all.body.next_run_at).toMatch(/-01T05:00:00\.000Z$/);

    // A venue elsewhere: English unless asked.
    const ny = await svc.service.engine.hotspots.create(tenant.tenantId, { name: 'Annex', timezone: 'America/New_York' });
    const en = await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: ['d@example.com'], content: 'report', hotspot_id: ny.id } });
    expect(en.body).toMatchObject({ lang: 'en', time_zone: 'America/New_York' });
    expect(en.body.next_run_at).toMatch(/T1[23]:00:00\.000Z$/);

    // The report of every venue is an aggregate over two now: it needs multi_venue, as the PDF does (the compliance package is the tenant's whole log, no aggregate).
    const every = await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: ['e@example.com'], content: 'report' } });
    expect(every.status).toBe(403);
    expect(every.body).toMatchObject({ error: 'module_not_licensed' });

    const del = await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    expect(del.status).toBe(200);
    expect(del.body.id).toBe(s.id);
    expect((await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey })).body).toMatchObject({ error: 'report_schedule_not_found' });
    expect((await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey })).status).toBe(404);
  });

  test('another tenant can neither see, read, list the runs of, nor delete a schedule: 404 as if it did not exist', async ({ svc, tenant, onTestFinished }) => {
    dropSchedulesAtEnd(svc, tenant, onTestFinished);
    const other = await newTenant(svc.service, 'Other Venue');
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: ['x@example.com'], content: 'report' } })).body;
    expect((await call(svc.base, 'GET', '/v1/reports/schedules', { auth: other.apiKey })).body).toEqual({ data: [] });
    for (const [method, path] of [['GET', `/v1/reports/schedules/${s.id}`], ['GET', `/v1/reports/schedules/${s.id}/runs`], ['DELETE', `/v1/reports/schedules/${s.id}`]] as const) {
      const r = await call(svc.base, method, path, { auth: other.apiKey });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body).toMatchObject({ error: 'report_schedule_not_found' });
    }
    // Still there for its owner.
    expect((await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey })).status).toBe(200);
    // Nor can a schedule name another tenant's hotspot.
    const theirs = await call(svc.base, 'POST', '/v1/reports/schedules', {
      auth: tenant.apiKey, body: { frequency: 'daily', recipients: ['x@example.com'], content: 'report', hotspot_id: other.hotspotId },
    });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({ error: 'hotspot_not_found' });
  });

  test('a recipient with CR or LF (header injection) is 400 report_recipient_invalid naming it; so is a display name; more than 20 is 400', async ({ svc, tenant, onTestFinished }) => {
    dropSchedulesAtEnd(svc, tenant, onTestFinished);
    const post = (recipients: unknown) => call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients, content: 'report' } });
    for (const bad of ['a@example.com\r\nBcc: victim@example.org', 'a@example.com\nBcc: v@example.org', 'a@example.com\r', 'Boss <boss@example.com>', 'a@b', 'a b@example.com', 'a@example.com,b@example.com']) {
      const r = await post(['ok@example.com', bad]);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body).toMatchObject({ error: 'report_recipient_invalid', field: 'recipients[1]' });
    }
    const many = await post(Array.from({ length: 21 }, (_, i) => `r${i}@example.com`));
    expect(many.status).toBe(400);
    expect(many.body).toMatchObject({ error: 'validation_failed' });
    expect((await post([])).status).toBe(400);
    expect((await post(Array.from({ length: 20 }, (_, i) => `r${i}@example.com`))).status).toBe(201);
    // Nothing of the refused ones was stored.
    expect((await call(svc.base, 'GET', '/v1/reports/schedules', { auth: tenant.apiKey })).body.data).toHaveLength(1);
  });

  test('writes need the admin role (a viewer reads); the paths are in the OpenAPI document', async ({ svc, tenant, onTestFinished }) => {
    dropSchedulesAtEnd(svc, tenant, onTestFinished);
    const viewer = await signOperatorToken(new TextEncoder().encode(JWT_SECRET), tenant.tenantId, ['viewer'], 600);
    const body = { frequency: 'daily', recipients: ['v@example.com'], content: 'report' };
    expect((await call(svc.base, 'POST', '/v1/reports/schedules', { bearer: viewer, body })).status).toBe(403);
    expect((await call(svc.base, 'GET', '/v1/reports/schedules', { bearer: viewer })).status).toBe(200);
    const doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/reports/schedules', '/v1/reports/schedules/{id}', '/v1/reports/schedules/{id}/runs']));
  });
});
