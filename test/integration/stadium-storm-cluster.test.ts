import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { benchLoopback } from '../support/loopback-nas.js';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster.js';

/**
 * Issue 23 item 4, the storm's half: dist/bench/stadium-storm.js (built first)
 * on a 3-master Redis Cluster started here, with two service processes
 * (--processes 2: guests and NASes split over them, one hotspot each), the
 * second killed with SIGKILL midway and restarted. The bench's own check
 * (every start and end in Postgres exactly once, the chain valid) must pass;
 * 200 guests keep it near a minute on a busy machine. No latency is asserted.
 */
describe('the stadium storm on a Redis Cluster with two processes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'storm-cluster-'));
  let cluster: TestCluster;
  let bench: ChildProcess | undefined;
  beforeAll(async () => { cluster = await startRedisCluster(); }, 90_000);
  afterAll(async () => {
    // A bench still running (the test failed or timed out): SIGTERM makes it stop its services first.
    if (bench && bench.exitCode === null && bench.signalCode === null) {
      const gone = new Promise((r) => bench!.once('exit', r));
      bench.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
    }
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two processes share 200 guests; a kill -9 of one midway loses nothing: every start and end once, chain valid', async () => {
    const lines = join(dir, 'storm.jsonl');
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = bench = spawn(process.execPath, [projectPath('dist', 'bench', 'stadium-storm.js'),
        '--guests', '200', '--over', '2', '--otp-share', '0', '--interim', '0.5', '--stay', '1', '--tail', '2',
        '--processes', '2', '--kill-at', '1', '--json-lines', lines, '--redis-url', cluster.url, '--database-url', inject('databaseUrl'),
        // The NASes on loopback addresses of their own (127.0.0.1 is another file's NAS client in this Postgres).
        '--nas-address', benchLoopback()], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '', stderr = '';
      child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
      child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 service processes/);
    expect(r.stderr).toMatch(/kill -9 the service at/);
    expect(r.stdout).toMatch(/^stadium-storm: 200 guests .* EXACTLY ONCE\n$/);
    const summary = JSON.parse(readFileSync(lines, 'utf8').trim().split('\n').pop()!) as Record<string, any>;
    expect(summary).toMatchObject({ summary: true, guests: 200, processes: 2, killed_at_s: 1, check: { ok: true, chainValid: true, problems: [] } });
    expect(summary.signed_in).toBeGreaterThan(0);
    // A code verify whose answer the kill took, then a new code: that device's first session was replaced (storm-check.ts).
    expect(summary.check.sessions).toBe(summary.signed_in + summary.check.unanswered + summary.check.replacedAfterLostVerify);
    expect(summary.check.ends).toBeGreaterThan(0);
  }, 180_000);
});
