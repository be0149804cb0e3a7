import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInterface } from 'node:readline';
import { from as copyFrom } from 'pg-copy-streams';
import { createLogger, Engine, loadConfig, projectPath } from '../engine/index.js';
import { queuePutVoucher } from '../engine/vouchers/voucher-redis.js';
import type { VoucherRow } from '../engine/vouchers/voucher.js';
import { localStack, say, spawnReady, Teardown, withCpu, type CpuUse, serviceNodeOptions } from './bench-kit.js';

/**
 * Scenario: voucher documents (issue 20). One part per document kind, each
 * against a floor in the same run; BENCH_PARTS names the parts run
 * (default `import,pdf`).
 *
 * pdf: bench/voucher-pdf.ts in a process of its own (its own service and
 * stores): 1,000 vouchers to an A4 PDF through the service against pdfkit
 * drawing the same sheets in a bare script; target 0.7. Its summary line is
 * carried into this one.
 *
 * import: a CSV file of BENCH_ROWS (100,000) vouchers through the real
 * service's HTTP import (POST /v1/vouchers/import, streamed from disk),
 * against a FLOOR that reads the same file, COPYs the same rows into the same
 * table (vouchers) and loads them into Redis with the same script in one
 * pipeline, with no checks and no report. Target: the import's rows/s at
 * least 0.5 of the floor's. Memory: the service's resident set is sampled
 * during the import, and its growth over the idle service's compared across
 * BENCH_ROWS and BENCH_BIG_ROWS (1,000,000; 0 skips) rows: a streamed import
 * does not grow with the file.
 *
 * Everything is on loopback and thrown away (localStack). Details go to
 * stderr; stdout gets one summary line. Exit 2 when a target is missed.
 */

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const BIG_ROWS = Number(process.env.BENCH_BIG_ROWS ?? 1_000_000);
const PARTS = (process.env.BENCH_PARTS ?? 'import,pdf').split(',');
const TARGET_RATIO = 0.5;
const DEADLINE_MS = 240_000 + BIG_ROWS / 10;
const undo = new Teardown();

interface ImportFigures {
  rows: number;
  importRps: number;
  floorRps: number;
  ratio: number;
  cpu: CpuUse;
  rssBaseMiB: number;
  rssGrowthMiB: number;
  bigRows: number;
  bigImportRps: number;
  bigRssGrowthMiB: number;
}

/** A CSV file of `rows` vouchers (prefix-unique codes), written to disk as a stream. */
async function writeCsv(path: string, prefix: string, rows: number): Promise<number> {
  async function* lines(): AsyncGenerator<string> {
    yield 'code,max_uses,expires_at,bandwidth_profile,notes\n';
    let chunk = '';
    for (let i = 0; i < rows; i++) {
      chunk += `${prefix}${i.toString(36).toUpperCase().padStart(6, '0')},${1 + (i % 5)},2031-12-31,${i % 3 === 0 ? 'basic' : ''},bench row ${i}\n`;
      if (chunk.length > 64 * 1024) { yield chunk; chunk = ''; }
    }
    yield chunk;
  }
  await pipeline(Readable.from(lines()), createWriteStream(path));
  return readFileSync(path).byteLength;
}

/** The service's resident set, MiB. */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** POSTs the file to the import, streamed; the largest RSS of the service meanwhile. */
async function importOver(base: string, apiKey: string, path: string, pid: number, rows: number): Promise<{ ms: number; peakRss: number }> {
  let peakRss = rssMiB(pid);
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, rssMiB(pid)); }, 50);
  const at = performance.now();
  try {
    const res = await fetch(`${base}/v1/vouchers/import`, {
      method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'text/csv; charset=utf-8' },
      body: Readable.toWeb(createReadStream(path, { highWaterMark: 64 * 1024 })) as ReadableStream, duplex: 'half',
    } as RequestInit);
    const report = await res.json() as { imported: number; invalid: number; invalid_rows: unknown[] };
    if (res.status !== 200 || report.imported !== rows) throw new Error(`import answered ${res.status} ${JSON.stringify(report).slice(0, 300)}`);
    return { ms: performance.now() - at, peakRss: Math.max(peakRss, rssMiB(pid)) };
  } finally {
    clearInterval(sampler);
  }
}

/** The floor: the same file, COPY into vouchers, one Redis pipeline of put-voucher; no checks, no report. */
async function floor(engine: Engine, tenantId: string, path: string): Promise<number> {
  const at = performance.now();
  const rows: VoucherRow[] = [];
  const client = await engine.pool.connect();
  try {
    const copy = client.query(copyFrom('COPY vouchers (id, tenant_id, code, max_uses, expires_at, notes, source) FROM STDIN'));
    const created = new Date();
    async function* copyLines(): AsyncGenerator<string> {
      let first = true;
      let n = 0;
      let out = '';
      for await (const line of createInterface({ input: createReadStream(path) })) {
        if (first) { first = false; continue; }
        const [code, maxUses, , , notes] = line.split(',') as [string, string, string, string, string];
        const fcode = code; // the same codes, in a tenant of its own
        const id = `vch_floor${(n++).toString(36).padStart(11, '0')}`;
        const expires = new Date('2032-01-01T00:00:00Z');
        rows.push({
          id, tenant_id: tenantId, code: fcode, max_uses: Number(maxUses), current_uses: 0, expires_at: expires, bandwidth_profile: null,
          daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null,
          ssids: [], notes, source: 'csv', batch_id: null, valid_from: null, valid_until: null, created_at: created,
        });
        out += `${id}\t${tenantId}\t${fcode}\t${maxUses}\t${expires.toISOString()}\t${notes}\tcsv\n`;
        if (out.length > 64 * 1024) { yield out; out = ''; }
      }
      yield out;
    }
    await pipeline(Readable.from(copyLines()), copy);
  } finally {
    client.release();
  }
  const p = engine.redis.pipeline();
  for (const r of rows) queuePutVoucher(p, r);
  await p.exec();
  return performance.now() - at;
}

async function importPart(): Promise<ImportFigures> {
  const stack = await localStack('voucher-documents', undo);
  const env: NodeJS.ProcessEnv = {
    ...stack.env, VOUCHER_IMPORT_MAX_BYTES: String(1024 * 1024 * 1024), RADIUS_HOST: '127.0.0.1', RADIUS_AUTH_PORT: '0', RADIUS_ACCT_PORT: '0',
  };
  const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false });
  await engine.start();
  undo.push(() => engine.close());
  const tenant = await engine.tenants.create('Bench Venue');
  await engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
  const { apiKey } = await engine.tenants.createApiKey(tenant.id);
  const floorTenant = await engine.tenants.create('Bench Floor');

  const file = join(stack.dir, 'vouchers.csv');
  const bytes = await writeCsv(file, 'A', ROWS);
  say(`import: ${ROWS} rows, ${(bytes / 1048576).toFixed(1)} MiB`);
  const service = await spawnReady(undo, 'service', [...serviceNodeOptions(), projectPath('dist', 'scripts', 'serve.js')], env);
  const base = `http://127.0.0.1:${service.ready.ports.main}`;
  const pid = service.child.pid!;
  // Warm-up: a small file, so the first measured import does not pay for JIT and connections.
  const warm = join(stack.dir, 'warm.csv');
  await writeCsv(warm, 'W', 5000);
  await importOver(base, apiKey, warm, pid, 5000);
  const rssBase = rssMiB(pid);

  const [imp, cpu] = await withCpu({ server: pid, ...stack.pids() }, () => importOver(base, apiKey, file, pid, ROWS));
  const floorMs = await floor(engine, floorTenant.id, file);
  const importRps = ROWS / (imp.ms / 1000);
  const floorRps = ROWS / (floorMs / 1000);
  say(`import: ${Math.round(importRps)} rows/s (${(imp.ms / 1000).toFixed(2)} s; CPU % of a core: service ${cpu.server}, redis ${cpu.redis}, postgres ${cpu.postgres}, rest ${cpu.rest}, idle ${cpu.idle}%)`);
  say(`floor:  ${Math.round(floorRps)} rows/s (${(floorMs / 1000).toFixed(2)} s); ratio ${(importRps / floorRps).toFixed(2)}`);
  say(`memory: service RSS ${rssBase.toFixed(0)} MiB idle, peak ${imp.peakRss.toFixed(0)} MiB during ${ROWS} rows`);

  let bigImportRps = 0, bigGrowth = 0;
  if (BIG_ROWS > 0) {
    const big = join(stack.dir, 'big.csv');
    const bigBytes = await writeCsv(big, 'B', BIG_ROWS);
    const before = rssMiB(pid);
    const r = await importOver(base, apiKey, big, pid, BIG_ROWS);
    bigImportRps = BIG_ROWS / (r.ms / 1000);
    bigGrowth = r.peakRss - before;
    say(`memory: ${BIG_ROWS} rows (${(bigBytes / 1048576).toFixed(1)} MiB): RSS ${before.toFixed(0)} -> peak ${r.peakRss.toFixed(0)} MiB; ${Math.round(bigImportRps)} rows/s`);
  }
  return {
    rows: ROWS, importRps, floorRps, ratio: importRps / floorRps, cpu, rssBaseMiB: rssBase, rssGrowthMiB: imp.peakRss - rssBase,
    bigRows: BIG_ROWS, bigImportRps, bigRssGrowthMiB: bigGrowth,
  };
}

async function main(): Promise<number> {
  undo.guard('voucher-documents', DEADLINE_MS);
  try {
    const out: string[] = [];
    let ok = true;
    if (PARTS.includes('import')) {
      const f = await importPart();
      ok &&= f.ratio >= TARGET_RATIO;
      out.push(`import ${f.rows} rows: ${Math.round(f.importRps)} rows/s vs floor ${Math.round(f.floorRps)} rows/s = ${f.ratio.toFixed(2)} (target >= ${TARGET_RATIO}); ` +
        `RSS growth ${f.rssGrowthMiB.toFixed(0)} MiB at ${f.rows}` + (f.bigRows ? `, ${f.bigRssGrowthMiB.toFixed(0)} MiB at ${f.bigRows} (${Math.round(f.bigImportRps)} rows/s)` : ''));
    }
    if (PARTS.includes('pdf')) {
      const pdf = spawnSync(process.execPath, [projectPath('dist', 'bench', 'voucher-pdf.js')], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
      const line = pdf.stdout.trim().split('\n').at(-1) ?? '';
      if (pdf.status === 1 || !line) throw new Error(`the pdf part failed (exit ${pdf.status})`);
      ok &&= pdf.status === 0;
      out.push(line.replace(/^voucher-pdf: /, 'pdf: '));
    }
    process.stdout.write(`voucher-documents: ${out.join(' | ')} ${ok ? 'PASS' : 'FAIL'}\n`);
    return ok ? 0 : 2;
  } finally {
    await undo.run();
  }
}

main().then((code) => process.exit(code), (err: unknown) => {
  say(`voucher-documents: ${(err as Error).stack ?? String(err)}`);
  void undo.run().finally(() => process.exit(1));
});
