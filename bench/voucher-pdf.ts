import { request } from 'node:http';
import pg from 'pg';
import { createLogger, DEFAULT_MODULES, Engine, loadConfig, projectPath } from '../engine/index.js';
import { drawSheets, newSheetDocument, type SheetJob } from '../engine/vouchers/voucher-sheet-draw.js';
import { loadPdfFonts } from '../engine/workers/pdf-fonts.js';
import type { VoucherRow } from '../engine/vouchers/voucher.js';
import { termsInWords } from '../engine/vouchers/voucher-sheet-text.js';
import { localStack, say, spawnReady, Teardown, serviceNodeOptions } from './bench-kit.js';

/**
 * Scenario: 1,000 vouchers (one console batch) to an A4 PDF through the real
 * service (GET /v1/vouchers/pdf: the tenant-scoped query, the piscina thread,
 * the credit-window stream, HTTP) against a floor: this bench process itself
 * drawing the same sheets with the same pdfkit code (voucher-sheet-draw.ts)
 * from the same rows, no thread, no stream, no HTTP. The two alternate for
 * ROUNDS rounds so a neighbour's burst does not land on one only; the
 * figure is the median of each. Target: service rate >= 0.7 of the floor's.
 * One summary line on stdout; exit 0 pass, 2 target missed, 1 errors.
 * Knobs: BENCH_VOUCHERS (1000), BENCH_ROUNDS (3).
 */

const COUNT = Number(process.env.BENCH_VOUCHERS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET = 0.7;
const HOST = '127.0.0.1';

const undo = new Teardown();
undo.guard('voucher-pdf', 110_000);

/** The whole answer, counted, not kept. */
function fetchPdf(port: number, path: string, apiKey: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port, path, headers: { 'x-api-key': apiKey } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => { bytes += c.length; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The floor: the same rows, words and drawing code, in this process. */
async function bare(db: pg.Client, tenantId: string, batchId: string, hotspotId: string, base: string): Promise<number> {
  const { rows } = await db.query<VoucherRow>(
    'SELECT * FROM vouchers WHERE tenant_id = $1 AND batch_id = $2 AND deleted_at IS NULL ORDER BY created_at, id', [tenantId, batchId]);
  const job: SheetJob = {
    layout: 'a4', lang: 'tr', message: null, logo: null,
    vouchers: rows.map((r) => ({
      code: r.code, url: `${base}/portal?${new URLSearchParams({ hotspot_id: hotspotId, code: r.code })}`, lines: termsInWords(r, 'tr', 'Europe/Istanbul'),
    })),
  };
  const doc = newSheetDocument(job, loadPdfFonts());
  let bytes = 0;
  doc.on('data', (c: Buffer) => { bytes += c.length; });
  const ended = new Promise<void>((r) => doc.on('end', r));
  await drawSheets(doc, job);
  await ended;
  return bytes;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<number> {
  try {
    const stack = await localStack('voucher-pdf', undo);
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const base = `http://${HOST}:${port}`;
    const env: NodeJS.ProcessEnv = { ...stack.env, HTTP_HOST: HOST, HTTP_PORT: String(port), RADIUS_ENABLED: 'false', PORTAL_PUBLIC_URL: base };
    const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false, actors: false });
    let tenantId: string; let apiKey: string; let hotspotId: string; let batchId: string;
    try {
      await engine.start();
      const tenant = await engine.tenants.create('Bench stadium', [...DEFAULT_MODULES]);
      tenantId = tenant.id;
      apiKey = (await engine.tenants.createApiKey(tenant.id)).apiKey;
      hotspotId = (await engine.hotspots.create(tenant.id, { name: 'Gate A', timezone: 'Europe/Istanbul' })).id;
      const rows = await engine.vouchers.createBatch(tenant.id, {
        count: COUNT, format: { charset: 'alphanumeric', length: 9, group_size: 0, separator: '-', letter_case: 'upper', prefix: '' },
        max_uses: 1, expires_at: new Date('2026-12-31T20:59:00Z'), bandwidth_profile: null, daily_quota_mb: null, session_quota_mb: null,
        duration_minutes: 120, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
      }, 'bench');
      batchId = rows[0]!.batch_id!;
    } finally {
      await engine.close();
    }
    const service = await spawnReady(undo, 'service', [...serviceNodeOptions(), projectPath('dist', 'scripts', 'serve.js')], env);
    if (service.ready.ports.main !== port) throw new Error(`service on ${service.ready.ports.main}, expected ${port}`);
    const db = new pg.Client(stack.local.databaseUrl);
    await db.connect();
    undo.push(() => db.end());

    const path = `/v1/vouchers/pdf?batch_id=${batchId}&lang=tr`;
    const first = await fetchPdf(port, path, apiKey); // warm-up: the thread starts and reads its fonts
    if (first.status !== 200) throw new Error(`service answered ${first.status}`);
    await bare(db, tenantId, batchId, hotspotId, base); // warm-up of the floor
    const svcRates: number[] = [];
    const bareRates: number[] = [];
    let svcBytes = 0; let bareBytes = 0;
    for (let r = 0; r < ROUNDS; r++) {
      let t0 = performance.now();
      const got = await fetchPdf(port, path, apiKey);
      if (got.status !== 200) throw new Error(`service answered ${got.status}`);
      svcRates.push(COUNT / ((performance.now() - t0) / 1000));
      svcBytes = got.bytes;
      t0 = performance.now();
      bareBytes = await bare(db, tenantId, batchId, hotspotId, base);
      bareRates.push(COUNT / ((performance.now() - t0) / 1000));
      say(`  round ${r + 1}: service ${svcRates.at(-1)!.toFixed(0)} vouchers/s (${svcBytes} B), bare pdfkit ${bareRates.at(-1)!.toFixed(0)} vouchers/s (${bareBytes} B)`);
    }
    const s = median(svcRates);
    const b = median(bareRates);
    const ratio = s / b;
    const verdict = ratio >= TARGET ? 'PASS' : 'FAIL';
    process.stdout.write(`voucher-pdf: ${COUNT} vouchers A4, service ${s.toFixed(0)} vouchers/s vs bare pdfkit ${b.toFixed(0)} vouchers/s, ` +
      `ratio ${ratio.toFixed(2)} (target >= ${TARGET}) ${verdict} | medians of ${ROUNDS} alternating rounds | PDF ${svcBytes} B service, ${bareBytes} B bare\n`);
    return ratio >= TARGET ? 0 : 2;
  } finally {
    await undo.run();
  }
}

main().then((code) => { process.exitCode = code; }, (err: Error) => {
  say(`voucher-pdf failed: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
