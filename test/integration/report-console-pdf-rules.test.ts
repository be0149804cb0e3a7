import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import { reportFigures } from '../../engine/reports/report-document.js';
import { reportRange } from '../../engine/reports/report-range.js';
import { newTenant, serviceTest, type Running, type Tenant } from '../support/fixture.js';
import { pdfText } from '../support/voucher-sheet.js';

const test = serviceTest();
const MODULES = [...DEFAULT_MODULES, 'multi_venue'];

/** The PDF's text (pdftotext), the file in a directory of its own removed after. */
async function textOf(pdf: Buffer): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-report-rules-'));
  try {
    writeFileSync(join(dir, 'r.pdf'), pdf);
    return (await pdfText(join(dir, 'r.pdf'))).replace(/\s+/g, ' ');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const console7 = (svc: Running, t: Tenant, ids: string[]) => svc.service.engine.consoleReports.report(t.tenantId, MODULES,
  { preset: 'custom', from: '2026-05-04', to: '2026-05-10', hotspotIds: ids });

/** The console report and the PDF report follow one rule where they show the same thing. */
describe('the console and the PDF agree', () => {
  test('unique devices never above the sessions, in the summary, per day and in the PDF', async ({ svc, db }) => {
    const t = await newTenant(svc.service, 'Rules Venue', MODULES);
    await db.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, started_at, ends_at, ended_at, device_type)
       SELECT 'ses_rules' || $1 || g, $1, $2, '02:AB:00:00:00:0' || g, 'voucher', '2026-05-05 09:00:00+03'::timestamptz + g * interval '1 second',
              '2026-05-06 09:00:00+03', '2026-05-05 09:30:00+03', 'ios' FROM generate_series(1, 3) g`, [t.tenantId, t.hotspotId]);
    await svc.service.engine.reports.rebuild(t.tenantId, '2026-05-01', '2026-05-31');
    // Three devices over two sessions: what the sketch's error says at large counts, a device more than there were sessions.
    await db.query('UPDATE report_hours SET sessions = 2 WHERE tenant_id = $1', [t.tenantId]);
    const r = await console7(svc, t, [t.hotspotId]);
    expect(r.summary).toMatchObject({ total_sessions: 2, unique_devices: 2 });
    expect(r.daily.find((d) => d.date === '2026-05-05')).toMatchObject({ sessions: 2, unique_devices: 2 });
    const pdf = await reportFigures(svc.service.engine.pool, t.tenantId, [t.hotspotId], reportRange('2026-05-04', '2026-05-10'));
    expect([pdf.sessions, pdf.uniqueDevices]).toEqual([r.summary.total_sessions, r.summary.unique_devices]);
  });

  test('several venues: named in the order given, in the first one\'s zone unless the tenant sets one (an unknown one reads as UTC)', async ({ svc, db }) => {
    const t = await newTenant(svc.service, 'Rules Group', MODULES);
    const annex = await svc.service.engine.hotspots.create(t.tenantId, { name: 'Annex', timezone: 'America/New_York' });
    const ids = [annex.id, t.hotspotId];
    const pdfZone = async (): Promise<string> => {
      const { pdf } = await svc.service.engine.reportPdf.renderBuffer(t.tenantId, { from: '2026-05-04', to: '2026-05-10', hotspotIds: ids, lang: 'en' });
      const text = await textOf(pdf);
      // The cover names the venues as the console lists them.
      expect(text).toContain('Annex, Lobby');
      return /Time zone: (\S*)/.exec(text)?.[1] ?? '';
    };
    expect((await console7(svc, t, ids)).hotspots.map((h) => h.name)).toEqual(['Annex', 'Lobby']);
    for (const [setting, zone] of [[null, 'America/New_York'], ['', 'America/New_York'], ['Not/AZone', 'UTC'], ['Europe/Berlin', 'Europe/Berlin']] as const) {
      if (setting !== null) await db.query(`UPDATE tenants SET settings = settings || jsonb_build_object('timezone', $2::text) WHERE id = $1`, [t.tenantId, setting]);
      expect((await console7(svc, t, ids)).period.time_zone, `tenant zone ${setting}`).toBe(zone);
      expect(await pdfZone(), `tenant zone ${setting}`).toBe(zone);
    }
  });
});
