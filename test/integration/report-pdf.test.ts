import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PNG } from 'pngjs';
import { describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import { newTenant, serviceTest, type Running, type Tenant } from '../support/fixture.js';
import { pageImage, pdfText } from '../support/voucher-sheet.js';

const it = serviceTest();

/** Where the reports and their page images go (test-artifacts/ is git-ignored; look at them). */
const DIR = join('test-artifacts', 'report-pdf');
const SITE = 'Çamlıca Kafe & Şişli Bahçe';

async function getPdf(base: string, apiKey: string, query: string, path = '/v1/reports/pdf'): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(`${base}${path}?${query}`, { headers: { 'x-api-key': apiKey } });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

function savePdf(name: string, pdf: Buffer): string {
  mkdirSync(DIR, { recursive: true });
  const file = join(DIR, `${name}.pdf`);
  writeFileSync(file, pdf);
  return file;
}

/** The share of pixels that are not (near) white: a drawn page has text, cards and bars. */
function inked(png: PNG): number {
  let n = 0;
  for (let i = 0; i < png.data.length; i += 4) if (png.data[i]! < 200 || png.data[i + 1]! < 200 || png.data[i + 2]! < 200) n++;
  return n / (png.width * png.height);
}

/**
 * Seeds a week whose right answers are known, 4..10 May 2026 in Istanbul:
 * 1,000 voucher sign-ins from Android on Tuesday 5 May at 09:xx (30 min,
 * 1,000 B in and 2,000 B out each), 234 SMS sign-ins from iOS on 6 May at
 * 18:xx (60 min): 1,234 sessions, average 36 min, peak 09:00; and 617 on
 * 1 May, the week before (so +100 %). Rollups rebuilt from the rows.
 */
type Db = { query: (sql: string, args: unknown[]) => Promise<unknown> };

/** `n` ended sessions of one venue, one a second from `start`, each `minutes` long with 1,000 B in and 2,000 B out; MACs distinct per tag length. */
function insertSessions(db: Db, t: Tenant, hotspotId: string, tag: string, n: number, start: string, minutes: number, method: string, type: string): Promise<unknown> {
  return db.query(
    `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, started_at, ends_at, ended_at, bytes_in, bytes_out, device_type)
     SELECT 'ses_pdf' || $6 || $1 || lpad(g::text, 5, '0'), $1, $2,
            '02:' || lpad(to_hex(length($6)), 2, '0') || ':00:' || lpad(to_hex(g / 256), 2, '0') || ':' || lpad(to_hex(g % 256), 2, '0') || ':07',
            $4, $3::timestamptz + g * interval '1 second', $3::timestamptz + interval '1 day',
            $3::timestamptz + g * interval '1 second' + $7 * interval '1 minute', 1000, 2000, $5
     FROM generate_series(1, $8::int) g`, [t.tenantId, hotspotId, start, method, type, tag, minutes, n]);
}

async function seedWeek(svc: Running, db: Db, t: Tenant): Promise<void> {
  const insert = (tag: string, n: number, start: string, minutes: number, method: string, type: string) =>
    insertSessions(db, t, t.hotspotId, tag, n, start, minutes, method, type);
  await insert('a', 1000, '2026-05-05 09:00:00+03', 30, 'voucher', 'android');
  await insert('bb', 234, '2026-05-06 18:00:00+03', 60, 'sms_otp', 'ios');
  await insert('ccc', 617, '2026-05-01 12:00:00+03', 10, 'voucher', 'windows');
  await db.query('UPDATE hotspots SET name = $2 WHERE id = $1', [t.hotspotId, SITE]);
  await svc.service.engine.reports.rebuild(t.tenantId, '2026-04-27', '2026-05-10');
}

/**
 * The PDF report (GET /v1/reports/pdf, /api/v1/reports/pdf): each document
 * is turned into PNG with pdftoppm (pages counted, pages not blank) and read
 * back with pdftotext (venue, period, KPI values, notes, Turkish letters).
 * Files stay in test-artifacts/report-pdf/.
 */
describe('PDF report', () => {
  for (const lang of ['en', 'tr'] as const) {
    it(`a week of seeded sessions, ${lang}: cover, KPI cards, charts, tables and notes with the known figures`, async ({ svc, tenant: t, db }) => {
      await seedWeek(svc, db, t);
      const res = await getPdf(svc.base, t.apiKey, `from=2026-05-04&to=2026-05-10&hotspot_id=${t.hotspotId}&lang=${lang}`);
      expect(res.status, res.body.toString()).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="report-2026-05-04-2026-05-10.pdf"');
      // Streamed: no length known in advance.
      expect(res.headers.get('content-length')).toBeNull();
      expect(res.body.subarray(0, 5).toString()).toBe('%PDF-');
      const file = savePdf(`week-${lang}`, res.body);

      const text = await pdfText(file);
      const pages = text.split('\f').filter((p) => p.trim());
      expect(pages).toHaveLength(3); // cover with cards and notes; charts; tables
      for (let p = 1; p <= 3; p++) expect(inked(await pageImage(file, p)), `page ${p}`).toBeGreaterThan(0.01);
      expect(text).toContain(SITE);
      if (lang === 'en') {
        expect(text).toContain('Wi-Fi usage report');
        expect(text).toContain('4 May 2026 – 10 May 2026 (7 days)');
        expect(text).toMatch(/Sessions\s/);
        expect(text).toContain('1,234');
        expect(text).toContain('36 min');
        expect(text).toContain('09:00');
        expect(text).toContain('The busiest day was Tuesday, 5 May 2026, with 1,000 sessions.');
        expect(text).toContain('Most sessions started between 09:00 and 10:00.');
        expect(text).toMatch(/The leading sign-in method was Voucher, with 81%\s+of sessions\./);
        expect(text).toMatch(/Sessions rose by 100% against the previous 7 days/);
        expect(text).toContain('Per day');
        expect(text).toContain('Hotel room (PMS)');
      } else {
        expect(text).toContain('Wi-Fi kullanım raporu');
        expect(text).toContain('4 Mayıs 2026 – 10 Mayıs 2026 (7 gün)');
        expect(text).toContain('1.234');
        expect(text).toContain('36 dk');
        expect(text).toContain('En yoğun gün 1.000 oturumla 5 Mayıs 2026 Salı oldu.');
        expect(text).toMatch(/%81\s+payıyla Kupon/);
        expect(text).toMatch(/%100\s+arttı/);
        expect(text).toContain('Günlere göre');
        expect(text).toContain('Giriş yöntemleri');
        expect(text).toContain('Diğer');
      }
    });
  }

  it('an empty period is a valid one-page PDF that says there was no session', async ({ svc, tenant: t }) => {
    const res = await getPdf(svc.base, t.apiKey, 'from=2025-01-01&to=2025-01-31&lang=en');
    expect(res.status, res.body.toString()).toBe(200);
    const file = savePdf('empty-en', res.body);
    const text = await pdfText(file);
    expect(text.split('\f').filter((p) => p.trim())).toHaveLength(1);
    expect(text).toContain('There was no session in this period.');
    expect(text).toContain('1 January 2025 – 31 January 2025 (31 days)');
    expect(inked(await pageImage(file, 1))).toBeGreaterThan(0.01);
    const tr = await getPdf(svc.base, t.apiKey, 'from=2025-01-01&to=2025-01-31', '/api/v1/reports/pdf');
    expect(tr.status).toBe(200);
    // No lang: the venue's zone is Europe/Istanbul, so Turkish.
    expect(await pdfText(savePdf('empty-tr', tr.body))).toContain('Bu dönemde hiç oturum olmadı.');
  });

  it('several venues need the multi_venue module (403 without it); with it, one report over both', async ({ svc, tenant: t, db }) => {
    // A tenant of its own with two venues (the file's tenant keeps one, for the tests after this).
    const basic = await newTenant(svc.service, 'Basic Venue');
    const second = await svc.service.engine.hotspots.create(basic.tenantId, { name: 'Terrace', timezone: 'Europe/Istanbul' });
    for (const path of ['/v1/reports/pdf', '/api/v1/reports/pdf']) {
      // Two named, or none named (every venue of the tenant, two here): an aggregate either way.
      for (const venues of [`&hotspot_id=${basic.hotspotId}&hotspot_id=${second.id}`, '']) {
        const r = await getPdf(svc.base, basic.apiKey, `from=2026-05-04&to=2026-05-10${venues}`, path);
        expect(r.status, `${path} ${venues}`).toBe(403);
        expect(JSON.parse(r.body.toString())).toMatchObject({ error: 'module_not_licensed' });
        expect(JSON.parse(r.body.toString()).message).toContain('multi_venue');
      }
    }
    const pro = await newTenant(svc.service, 'Pro Venue', [...DEFAULT_MODULES, 'multi_venue']);
    const terrace = await svc.service.engine.hotspots.create(pro.tenantId, { name: 'Terrace Ğ', timezone: 'Europe/Istanbul' });
    // 66 e-mail sign-ins on the terrace on Thursday 7 May: the two venues together have 1,300.
    await insertSessions(db, pro, terrace.id, 'dddd', 66, '2026-05-07 20:00:00+03', 15, 'email', 'macos');
    await seedWeek(svc, db, pro);
    const both = await getPdf(svc.base, pro.apiKey, `from=2026-05-04&to=2026-05-10&hotspot_id=${pro.hotspotId},${terrace.id}&lang=en`, '/api/v1/reports/pdf');
    expect(both.status, both.body.toString()).toBe(200);
    const text = await pdfText(savePdf('two-venues-en', both.body));
    expect(text).toContain('VENUES');
    expect(text).toContain(`${SITE}, Terrace Ğ`);
    expect(text).toContain('1,300');
    expect(text).toMatch(/Thursday, 7 May 2026\s+66\s/);
    // The same week of the first venue alone: the terrace's sessions stay out.
    const one = await getPdf(svc.base, pro.apiKey, `from=2026-05-04&to=2026-05-10&hotspot_id=${pro.hotspotId}&lang=en`);
    const oneText = await pdfText(savePdf('one-of-two-venues-en', one.body));
    expect(oneText).toContain('1,234');
    expect(oneText).not.toContain('1,300');
    // One venue of another tenant among them: 404, as if it did not exist.
    const mixed = await getPdf(svc.base, pro.apiKey, `from=2026-05-04&to=2026-05-10&hotspot_id=${pro.hotspotId}&hotspot_id=${t.hotspotId}`);
    expect(mixed.status).toBe(404);
    expect(JSON.parse(mixed.body.toString())).toMatchObject({ error: 'hotspot_not_found' });
    // More than ten: 400 whatever the licence.
    const eleven = Array.from({ length: 11 }, (_, i) => `hotspot_id=hsp_x${i}`).join('&');
    const many = await getPdf(svc.base, pro.apiKey, `from=2026-05-04&to=2026-05-10&${eleven}`);
    expect(many.status).toBe(400);
    expect(JSON.parse(many.body.toString())).toMatchObject({ error: 'report_too_many_venues', max_venues: 10 });
  });

  it("another tenant's hotspot is unknown, and its sessions never reach this tenant's report", async ({ svc, tenant: t, db }) => {
    const other = await newTenant(svc.service, 'Other Venue');
    await seedWeek(svc, db, other);
    const r = await getPdf(svc.base, t.apiKey, `from=2026-05-04&to=2026-05-10&hotspot_id=${other.hotspotId}`);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body.toString())).toMatchObject({ error: 'hotspot_not_found' });
    // All of this tenant's venues over the same week: none of the other's sessions.
    const mine = await getPdf(svc.base, t.apiKey, 'from=2026-05-04&to=2026-05-10&lang=en');
    expect(mine.status).toBe(200);
    const text = await pdfText(savePdf('isolation-en', mine.body));
    expect(text).toContain('There was no session in this period.');
    expect(text).not.toContain(SITE);
  });

  it('the range rules and 400s of the analytics', async ({ svc, tenant: t }) => {
    const get = async (q: string) => {
      const r = await getPdf(svc.base, t.apiKey, q);
      return { status: r.status, body: JSON.parse(r.body.toString()) as Record<string, unknown> };
    };
    expect(await get('from=2024-01-01&to=2025-01-01')).toMatchObject({ status: 400, body: { error: 'report_range_too_long', max_days: 366 } });
    expect(await get('from=2026-03-10&to=2026-03-09')).toMatchObject({ status: 400, body: { error: 'report_range_reversed' } });
    expect(await get('from=2026-02-30&to=2026-03-09')).toMatchObject({ status: 400, body: { error: 'report_date_invalid', field: 'from' } });
    expect((await get('from=2026-02-01')).status).toBe(400);
    expect((await get('from=2026-02-01&to=2026-02-02&lang=de')).status).toBe(400);
    // 366 days are a report (a year of empty days: the per-day table runs over several pages).
    const year = await getPdf(svc.base, t.apiKey, 'from=2024-01-01&to=2024-12-31&lang=en');
    expect(year.status).toBe(200);
    expect(await pdfText(savePdf('leap-year-empty-en', year.body))).toContain('(366 days)');
  });

  it('a year: the per-day table runs over as many pages as it needs, every day listed once', async ({ svc, tenant: t, db }) => {
    await seedWeek(svc, db, t);
    const res = await getPdf(svc.base, t.apiKey, 'from=2026-01-01&to=2026-12-31&lang=en');
    expect(res.status, res.body.toString()).toBe(200);
    const file = savePdf('year-en', res.body);
    const text = await pdfText(file);
    const pages = text.split('\f').filter((p) => p.trim());
    // 365 rows of 15 pt: the first table page holds about 40 after the small tables, the next ones about 48.
    expect(pages.length).toBeGreaterThanOrEqual(9);
    expect(pages.at(-1)).toContain('Thursday, 31 December 2026');
    expect(text.match(/Tuesday, 5 May 2026/g)).toHaveLength(2); // the busiest day's note and its row
    expect(text).toContain('1,851'); // the week's 1,234 and the 617 of 1 May
    expect(text).toContain('(365 days)');
    expect(inked(await pageImage(file, 2))).toBeGreaterThan(0.01);
    expect(inked(await pageImage(file, pages.length))).toBeGreaterThan(0.005);
  });

  it('the engine renders the same document for the scheduled e-mail, as a Buffer', async ({ svc, tenant: t, db }) => {
    await seedWeek(svc, db, t);
    const { filename, pdf, lang } = await svc.service.engine.reportPdf.renderBuffer(t.tenantId, { from: '2026-05-04', to: '2026-05-10' });
    expect(filename).toBe('report-2026-05-04-2026-05-10.pdf');
    expect(lang).toBe('tr');
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(await pdfText(savePdf('engine-buffer-tr', pdf))).toContain('1.234');
  });
});
