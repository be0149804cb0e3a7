import { PNG } from 'pngjs';
import { describe, expect } from 'vitest';
import { call, newTenant, serviceTest } from '../support/fixture.js';
import { freePort } from '../../scripts/local-services.js';
import { a4Cell, decodeQr, getSheet, pageImage, pdfText, savePdf } from '../support/voucher-sheet.js';

// The QR codes hold PORTAL_PUBLIC_URL: the service's own address here, known before it starts.
const it = serviceTest(async () => {
  const port = await freePort();
  return { HTTP_PORT: String(port), PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}` };
});

interface Batch { batch_id: string; vouchers: { id: string; code: string }[] }

async function batch(base: string, apiKey: string, body: Record<string, unknown>): Promise<Batch> {
  const r = await call(base, 'POST', '/api/v1/vouchers', { auth: apiKey, body: { count: 3, max_uses: 1, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as Batch;
}

/**
 * Voucher sheets (GET /v1/vouchers/pdf): every sheet is turned into PNG with
 * pdftoppm and its QR codes decoded back with jsQR; pdftotext reads the codes
 * and the words. Sheets and page images stay in test-artifacts/voucher-sheets/.
 */
describe('voucher sheets', () => {
  for (const lang of ['tr', 'en'] as const) {
    it(`an A4 sheet of a batch, ${lang}: large codes, QR codes opening the portal with the code, terms in words`, async ({ svc, tenant: t, db }) => {
      const b = await batch(svc.base, t.apiKey, { count: 10, max_uses: 3, duration_minutes: 120, notes: 'sheet test', expires_at: '2026-12-31T20:59:00Z' });
      // A match-day window (migration 020's columns; the batch API takes it in another change).
      await db.query("UPDATE vouchers SET valid_from = '2026-12-05T15:00:00Z', valid_until = '2026-12-05T21:00:00Z' WHERE tenant_id = $1 AND batch_id = $2",
        [t.tenantId, b.batch_id]);
      const res = await getSheet(svc.base, t.apiKey, { batch_id: b.batch_id, lang, message: 'Maç günü: şans, ğ, İ, ı, ç, ö, ü!' });
      expect(res.status, res.body.toString()).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.body.subarray(0, 5).toString()).toBe('%PDF-');
      const file = savePdf(`a4-${lang}`, res.body);

      const text = await pdfText(file);
      for (const v of b.vouchers) expect(text).toContain(v.code);
      expect(text).toContain('Maç günü: şans, ğ, İ, ı, ç, ö, ü!');
      if (lang === 'tr') {
        expect(text).toContain('Wi-Fi kuponu');
        expect(text).toContain('En fazla 3 kullanım');
        expect(text).toContain('Her girişte çevrimiçi süre: 2 saat');
        expect(text).toMatch(/Yalnızca 5 Ara 2026 18:00/);
      } else {
        expect(text).toContain('Wi-Fi voucher');
        expect(text).toContain('Up to 3 uses');
        expect(text).toContain('Online time per sign-in: 2 hours');
        expect(text).toMatch(/Valid only from 5 Dec 2026, 18:00/);
      }
      // 10 vouchers: 8 on the first page, 2 on the second.
      expect(text.split('\f').filter((p) => p.trim()).length).toBe(2);

      const page = await pageImage(file, 1);
      const codes = new Set(b.vouchers.map((v) => v.code));
      const seen: string[] = [];
      for (let cell = 0; cell < 8; cell++) {
        const url = decodeQr(page, a4Cell(cell));
        expect(url, `cell ${cell}`).not.toBeNull();
        const u = new URL(url!);
        expect(`${u.origin}${u.pathname}`).toBe(`${svc.base}/portal`);
        expect(u.searchParams.get('hotspot_id')).toBe(t.hotspotId);
        expect(codes.has(u.searchParams.get('code')!)).toBe(true);
        seen.push(u.searchParams.get('code')!);
      }
      expect(new Set(seen).size).toBe(8);
    });

    it(`a receipt roll, ${lang}: 80 mm wide, one voucher per page, each QR code its own`, async ({ svc, tenant: t }) => {
      const b = await batch(svc.base, t.apiKey, { count: 2 });
      const ids = b.vouchers.map((v) => v.id).join(',');
      const res = await getSheet(svc.base, t.apiKey, { ids, layout: 'receipt', lang });
      expect(res.status, res.body.toString()).toBe(200);
      const file = savePdf(`receipt-${lang}`, res.body);
      for (const [i, v] of b.vouchers.entries()) {
        const png = await pageImage(file, i + 1);
        expect(Math.abs(png.width - (80 / 25.4) * 150)).toBeLessThanOrEqual(1); // 80 mm at 150 dpi
        expect(new URL(decodeQr(png)!).searchParams.get('code')).toBe(v.code);
      }
      const text = await pdfText(file);
      expect(text).toContain(lang === 'tr' ? 'Tek kullanımlık' : 'Single use');
    });
  }

  it("another tenant's ids or batch give no sheet and do not say they exist", async ({ svc, tenant: t }) => {
    const mine = await batch(svc.base, t.apiKey, { count: 1 });
    const other = await newTenant(svc.service, 'Other Venue');
    const theirs = await batch(svc.base, other.apiKey, { count: 1 });
    const never = 'vch_0000000000000000';
    const answers = [
      await getSheet(svc.base, t.apiKey, { ids: theirs.vouchers[0]!.id }),
      await getSheet(svc.base, t.apiKey, { ids: `${mine.vouchers[0]!.id},${theirs.vouchers[0]!.id}` }),
      await getSheet(svc.base, t.apiKey, { batch_id: theirs.batch_id }),
      await getSheet(svc.base, t.apiKey, { ids: never }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(404);
      expect(JSON.parse(a.body.toString())).toEqual({ error: 'voucher_not_found', message: 'No such voucher' });
      expect(a.body.toString()).not.toContain(theirs.vouchers[0]!.code);
    }
    // The owner prints it.
    expect((await getSheet(svc.base, other.apiKey, { ids: theirs.vouchers[0]!.id })).status).toBe(200);
    // Another tenant's hotspot is as unknown as none.
    const hs = await getSheet(svc.base, t.apiKey, { ids: mine.vouchers[0]!.id, hotspot_id: other.hotspotId });
    expect(hs.status).toBe(404);
    expect(JSON.parse(hs.body.toString()).error).toBe('hotspot_not_found');
  });

  it('/v1/vouchers/pdf is its own route, not a voucher id; the request must name the vouchers one way', async ({ svc, tenant: t }) => {
    const none = await getSheet(svc.base, t.apiKey, {});
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body.toString()).error).toBe('validation_failed');
    const both = await getSheet(svc.base, t.apiKey, { ids: 'vch_a', batch_id: 'vbt_a' });
    expect(both.status).toBe(400);
    const bad = await getSheet(svc.base, t.apiKey, { ids: '<script>', layout: 'a4' });
    expect(bad.status).toBe(400);
    const long = await getSheet(svc.base, t.apiKey, { q: 'x', message: 'm'.repeat(201) });
    expect(long.status).toBe(400);
  });

  it('a tenant with several hotspots names one; its hotspot decides the QR codes and the default language', async ({ svc, tenant: t }) => {
    const b = await batch(svc.base, t.apiKey, { count: 1 });
    const second = await svc.service.engine.hotspots.create(t.tenantId, { name: 'Terrace', timezone: 'Europe/London' });
    const unnamed = await getSheet(svc.base, t.apiKey, { batch_id: b.batch_id });
    expect(unnamed.status).toBe(400);
    expect(JSON.parse(unnamed.body.toString()).message).toContain('2 hotspots');
    const named = await getSheet(svc.base, t.apiKey, { batch_id: b.batch_id, hotspot_id: second.id, layout: 'receipt' });
    expect(named.status).toBe(200);
    expect(named.headers.get('content-disposition')).toContain('-receipt-en.pdf');
    const file = savePdf('receipt-second-hotspot', named.body);
    expect(new URL(decodeQr(await pageImage(file, 1))!).searchParams.get('hotspot_id')).toBe(second.id);
  });

  it("the hotspot's logo is printed on every voucher; a logo the PDF cannot embed (GIF) is left out", async ({ svc, tenant: t }) => {
    // A 60 x 20 logo: a dark blue bar, as a PNG data URI in the hotspot's portal settings.
    const png = new PNG({ width: 60, height: 20 });
    for (let i = 0; i < 60 * 20; i++) png.data.set([11, 83, 148, 255], i * 4);
    const logo = `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
    expect((await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { logo } } })).status).toBe(200);
    const b = await batch(svc.base, t.apiKey, { count: 2 });
    for (const layout of ['a4', 'receipt']) {
      const res = await getSheet(svc.base, t.apiKey, { batch_id: b.batch_id, layout, lang: 'tr', message: 'Logolu kupon' });
      expect(res.status).toBe(200);
      expect(res.body.toString('latin1')).toContain('/Subtype /Image');
      const file = savePdf(`logo-${layout}`, res.body);
      const page = await pageImage(file, 1);
      // The bar's blue is on the page (nothing else on a sheet is blue).
      let blue = 0;
      for (let i = 0; i < page.data.length; i += 4) if (page.data[i]! < 40 && page.data[i + 2]! > 120) blue++;
      expect(blue).toBeGreaterThan(100);
      expect(decodeQr(page, layout === 'a4' ? a4Cell(0) : undefined)).toContain(t.hotspotId);
    }
    const gif = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
    expect((await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { logo: gif } } })).status).toBe(200);
    const res = await getSheet(svc.base, t.apiKey, { batch_id: b.batch_id });
    expect(res.status).toBe(200);
    expect(res.body.toString('latin1')).not.toContain('/Subtype /Image');
  });

  it('the console prints a selection of the list with its own surface, and the filter prints as the list shows it', async ({ svc, tenant: t }) => {
    const b = await batch(svc.base, t.apiKey, { count: 2, notes: 'filter-me' });
    const res = await getSheet(svc.base, t.apiKey, { q: 'filter-me', status: 'created' }, '/api/v1/vouchers/pdf');
    expect(res.status, res.body.toString()).toBe(200);
    expect(res.headers.get('x-voucher-count')).toBe('2');
    const text = await pdfText(savePdf('console-filter', res.body));
    for (const v of b.vouchers) expect(text).toContain(v.code);
  });

  it('drawing a 1,000-voucher document leaves the request thread free: another route answers while it streams', async ({ svc, tenant: t }) => {
    const created = await call(svc.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 1000, max_uses: 1 } });
    expect(created.status).toBe(201);
    const res = await fetch(`${svc.base}/v1/vouchers/pdf?batch_id=${created.body.batch_id}`, { headers: { 'x-api-key': t.apiKey } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let bytes = 0;
    let afterAnswer = -1;
    const first = await reader.read();
    bytes += first.value?.length ?? 0;
    // The document has begun; another request now, while the rest is drawn.
    const other = call(svc.base, 'GET', '/v1/vouchers?limit=1', { auth: t.apiKey }).then((a) => { afterAnswer = 0; return a; });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      if (afterAnswer >= 0) afterAnswer += value.length;
    }
    expect((await other).status).toBe(200);
    // The other answer came while the PDF was still arriving: pages kept coming after it.
    expect(afterAnswer).toBeGreaterThan(0);
    expect(bytes).toBeGreaterThan(100_000);
  });

  it('the logo is embedded once per document: on a 50-voucher sheet it costs what it costs on a 1-voucher one, not 50 times that', async ({ svc, tenant: t }) => {
    // Noise does not compress: the logo's bytes show in the file's size.
    const png = new PNG({ width: 64, height: 64 });
    let seed = 7;
    for (let i = 0; i < png.data.length; i++) { seed = (seed * 1103515245 + 12345) >>> 0; png.data[i] = seed >>> 24; }
    const logo = `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
    const one = await batch(svc.base, t.apiKey, { count: 1 });
    const fifty = await batch(svc.base, t.apiKey, { count: 50 });
    const sizes = async (layout: string): Promise<[number, number]> => {
      const small = await getSheet(svc.base, t.apiKey, { batch_id: one.batch_id, layout });
      const big = await getSheet(svc.base, t.apiKey, { batch_id: fifty.batch_id, layout });
      expect([small.status, big.status]).toEqual([200, 200]);
      return [small.body.length, big.body.length];
    };
    const setLogo = async (value: string | null): Promise<void> => {
      expect((await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { logo: value } } })).status).toBe(200);
    };
    for (const layout of ['a4', 'receipt']) {
      await setLogo(null);
      const [smallBare, bigBare] = await sizes(layout);
      await setLogo(logo);
      const [smallLogo, bigLogo] = await sizes(layout);
      const once = smallLogo - smallBare;
      expect(once, layout).toBeGreaterThan(8_000); // the logo is in it
      expect(bigLogo - bigBare, layout).toBeLessThan(3 * once);
    }
  });

  it('a corrupt PNG or JPEG logo is left out: the sheet is printed without it, not a 500', async ({ svc, tenant: t }) => {
    const png = new PNG({ width: 60, height: 20 });
    for (let i = 0; i < 60 * 20; i++) png.data.set([11, 83, 148, 255], i * 4);
    const good = PNG.sync.write(png);
    const badIdat = Buffer.from(good);
    const at = badIdat.indexOf('IDAT');
    for (let i = at + 6; i < at + 30; i++) badIdat[i]! ^= 0x5a;
    const b = await batch(svc.base, t.apiKey, { count: 2 });
    const cases: [string, Buffer][] = [
      ['png', Buffer.concat([good.subarray(0, 8), Buffer.from('not a png at all, only its signature')])],
      ['png', badIdat],
      ['jpeg', Buffer.from([0xff, 0xd8, 0xff, 0x00, 1, 2, 3, 4, 5, 6, 7, 8])],
    ];
    for (const [type, bytes] of cases) {
      const logo = `data:image/${type};base64,${bytes.toString('base64')}`;
      expect((await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { logo } } })).status).toBe(200);
      for (const layout of ['a4', 'receipt']) {
        const res = await getSheet(svc.base, t.apiKey, { batch_id: b.batch_id, layout });
        expect(res.status, `${type} ${layout}`).toBe(200);
        expect(res.body.toString('latin1')).not.toContain('/Subtype /Image');
        expect(await pdfText(savePdf(`corrupt-logo-${layout}`, res.body))).toContain(b.vouchers[0]!.code);
      }
    }
  });
});
