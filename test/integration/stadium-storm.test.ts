import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { benchLoopback } from '../support/loopback-nas.js';

/**
 * Issue 22 "Must show": exactly-once session records under the stadium storm with
 * a kill -9 of the service midway. The bench itself (dist/bench/stadium-storm.js,
 * built first) runs 300 guests over 3 s against the suite's Postgres and its own
 * Redis database (8), kills the service with SIGKILL 1.5 s in, restarts it and goes
 * on; some guests sign in by SMS code, every guest's NAS sends its Stop 1.5 s after
 * it arrives. The test reads the JSON lines and checks Postgres itself, for the
 * bench's tenant, rather than taking the bench's word. No latency is asserted.
 */

const dir = mkdtempSync(join(tmpdir(), 'storm-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Figures { n: number; p50: number | null; p90: number | null; p99: number | null; max: number | null }

function runBench(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [projectPath('dist', 'bench', file), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const runStorm = (args: string[]): ReturnType<typeof runBench> => runBench('stadium-storm.js', args);

const shapeOf = (f: Figures): string[] => Object.keys(f).sort();

describe('bench/stadium-storm', () => {
  it('keeps every session start and end exactly once, the chain valid, through a kill -9 midway; JSON lines per second', async () => {
    const lines = join(dir, 'storm.jsonl');
    const r = await runStorm(['--guests', '300', '--over', '3', '--otp-share', '0.1', '--interim', '0.5', '--stay', '1.5', '--tail', '2',
      '--kill-at', '1.5', '--json-lines', lines, '--redis-url', `${inject('redisUrl')}/8`, '--database-url', inject('databaseUrl'),
      // The NAS on a loopback address of its own: 127.0.0.1 is another file's NAS client in this Postgres.
      '--nas-address', benchLoopback()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^stadium-storm: 300 guests .* EXACTLY ONCE\n$/);
    expect(r.stderr).toMatch(/kill -9 the service at/);
    expect(r.stderr).toMatch(/service back after/);

    const records = readFileSync(lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const summary = records.pop()!;
    expect(records.length).toBeGreaterThan(2);
    records.forEach((rec, i) => {
      expect(rec.t).toBe(i + 1);
      for (const k of ['signin', 'page', 'access', 'acctStart', 'interim', 'stop']) expect(shapeOf(rec[k] as Figures)).toEqual(['max', 'n', 'p50', 'p90', 'p99']);
    });
    expect(records.reduce((n, rec) => n + Number(rec.arrivals ?? 0), 0)).toBe(300);

    expect(summary).toMatchObject({ summary: true, guests: 300, killed_at_s: 1.5, targets: null, check: { ok: true, chainValid: true, problems: [] } });
    const check = summary.check as { sessions: number; starts: number; ends: number; unanswered: number; replacedAfterLostVerify: number };
    const signedIn = summary.signed_in as number;
    expect(signedIn).toBeGreaterThan(0);
    // A code verify whose answer the kill took, then a new code: that device's first session was replaced (storm-check.ts).
    expect(check.sessions).toBe(signedIn + check.unanswered + check.replacedAfterLostVerify);
    expect(check.ends).toBeGreaterThan(0);
    expect(Object.keys(summary.latency_ms as object).sort()).toEqual(['access', 'acctStart', 'interim', 'page', 'signin', 'stop']);
    expect(Object.keys(summary.cpu_us_per_signin as object).sort()).toEqual(['bench', 'postgres', 'redis', 'service']);

    // Postgres itself, for the bench's tenant: one start per session, one end per ended session, nothing twice.
    const tenant = summary.tenant as string;
    expect(tenant).toMatch(/^tn_/);
    const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 1 });
    try {
      const q = async (sql: string): Promise<number> => (await pool.query<{ n: number }>(sql, [tenant])).rows[0]!.n;
      const sessions = await q('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1');
      const ended = await q('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1 AND ended_at IS NOT NULL');
      const starts = await q("SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start'");
      const distinctStarts = await q("SELECT count(DISTINCT session_id)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start'");
      const ends = await q("SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_end'");
      const distinctEnds = await q("SELECT count(DISTINCT session_id)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_end'");
      const devices = await q('SELECT count(DISTINCT mac)::int AS n FROM sessions WHERE tenant_id = $1');
      expect({ sessions, starts, distinctStarts, devices }).toEqual({ sessions: check.sessions, starts: sessions, distinctStarts: sessions, devices: sessions - check.replacedAfterLostVerify });
      expect({ ended, ends, distinctEnds }).toEqual({ ended: check.ends, ends: ended, distinctEnds: ended });
    } finally {
      await pool.end();
    }
  }, 300_000);

  it('refuses a target that is not loopback unless told, and --kill-at without its own service', async () => {
    const remote = await runStorm(['--target', '192.0.2.10', '--guests', '1']);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/not a loopback address.*--allow-remote/);
    const load = await runStorm(['--external', '--kill-at', '1', '--guests', '1', '--otp-share', '0']);
    expect(load.code).toBe(2);
    expect(load.stderr).toMatch(/--external needs --codes|--kill-at needs/);
    const radius = await runBench('radius-load.js', ['--target', '192.0.2.10']);
    expect(radius.code).toBe(2);
    expect(radius.stderr).toMatch(/not a loopback address.*--allow-remote/);
  });

  it('radius-load writes a JSON line per second, then its summary, and lists its options', async () => {
    const help = await runBench('radius-load.js', ['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/--target[\s\S]*--json-lines[\s\S]*--sources/);

    const lines = join(dir, 'radius-load.jsonl');
    const r = await runBench('radius-load.js', ['--self', '--target', '127.0.0.1', '--duration', '2.5', '--rate', '300', '--acct-ratio', '0.5', '--json-lines', lines]);
    expect(r.code, r.stderr).toBe(0);
    const sent = Number(/ sent=(\d+) /.exec(r.stdout)?.[1]);
    expect(sent).toBeGreaterThan(0);
    const all = readFileSync(lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    // The last line is the summary line's figures, as the storm ends its lines.
    const summary = all.at(-1)!;
    const answeredOut = Number(/ answered=(\d+) /.exec(r.stdout)?.[1]);
    expect(summary).toMatchObject({ summary: true, target: expect.stringMatching(/^127\.0\.0\.1:\d+\/\d+$/), sent, answered: answeredOut, bad: 0 });
    expect(shapeOf(summary.latency as Figures)).toEqual(['max', 'n', 'p50', 'p90', 'p99']);
    expect(summary.latency.n).toBe(answeredOut);
    const records = all.slice(0, -1);
    expect(records.length).toBeGreaterThanOrEqual(2);
    records.forEach((rec, i) => {
      expect(rec.t).toBe(i + 1);
      expect(shapeOf(rec.latency as Figures)).toEqual(['max', 'n', 'p50', 'p90', 'p99']);
    });
    expect(records.at(-1)!.partial).toBe(true);
    // Every request sent is in one second's counts, and every answer's latency in one second's figures.
    expect(records.reduce((n, rec) => n + (rec.sent_auth ?? 0) + (rec.sent_acct ?? 0), 0)).toBe(sent);
    const answered = Number(/ answered=(\d+) /.exec(r.stdout)?.[1]);
    expect(records.reduce((n, rec) => n + rec.latency.n, 0)).toBe(answered);
  });
});
