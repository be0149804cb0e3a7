import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/index.js';

/**
 * `stadium-storm --stub` (issue 22 item 4's follow-up): the storm's generator alone, aimed at
 * storm-stub.ts, so its CPU per guest can be measured and profiled without the service beside
 * it. The bench (dist/, built first) must play the whole schedule against the stand-in (pages,
 * voucher and SMS-code sign-ins through the fake carrier, Access-Request, Start, interims), count
 * every answer, and report its own CPU per guest; no Redis, no Postgres, no verdict on the targets.
 */

const dir = mkdtempSync(join(tmpdir(), 'storm-stub-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runStorm(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [projectPath('dist', 'bench', 'stadium-storm.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bench/stadium-storm --stub', () => {
  it('plays the whole schedule against the stand-in, every request answered, and gives the generator\'s CPU per guest', async () => {
    const lines = join(dir, 'stub.jsonl');
    const r = await runStorm(['--stub', '--guests', '400', '--over', '2', '--otp-share', '0.1', '--interim', '0.5', '--tail', '1', '--json-lines', lines]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^stadium-storm: 400 guests .* STUB \(generator only; no errors\)\n$/);
    const records = readFileSync(lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const summary = records.pop()!;
    expect(summary).toMatchObject({ summary: true, stub: true, signed_in: 400, errors: {}, targets: null, check: null, bad_replies: 0 });
    const lat = summary.latency_ms as Record<string, { n: number }>;
    // Every guest's page, sign-in, Access-Request and Start answered; interims every 0.5 s once its Start is answered.
    expect({ signin: lat.signin!.n, page: lat.page!.n, access: lat.access!.n, acctStart: lat.acctStart!.n }).toEqual({ signin: 400, page: 400, access: 400, acctStart: 400 });
    expect(lat.interim!.n).toBeGreaterThan(0);
    // The per-second lines add up to the summary's counts.
    expect(records.reduce((n, rec) => n + (rec.signin?.n ?? 0), 0)).toBe(400);
    expect(records.reduce((n, rec) => n + (rec.interim?.n ?? 0), 0)).toBe(lat.interim!.n);
    const cpu = summary.cpu_us_per_signin as Record<string, number | null>;
    expect(cpu.bench).toBeGreaterThan(0);
    expect(typeof cpu.service).toBe('number'); // the stand-in's own (clock ticks: may round to 0)
    expect(cpu.redis).toBeNull();
  }, 120_000);
});
