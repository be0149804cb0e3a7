import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { SERVICE_NODE_OPTIONS } from '../../scripts/node-options.js';
import { testEnv } from '../support/service.js';

/**
 * The README's first command: `npm start` (its script, dist/scripts/start.js,
 * as package.json runs it) prints how to try the service, and what it prints
 * works: the API key creates a voucher, the portal's verify signs a guest in
 * with it, and the portal page it names answers. Run against the suite's
 * Redis and Postgres (REDIS_URL and DATABASE_URL given: no local servers)
 * with its data under a folder of its own (LOCAL_DATA_DIR), so a developer's
 * .data/ is left alone.
 */
describe('npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-start-'));
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a demo tenant, its key and two curl lines, and they sign a guest in', async () => {
    const env = {
      ...process.env, ...testEnv(),
      // A Redis database of its own: an engine process dispatches, sinks and leases for every tenant in its Redis.
      REDIS_URL: `${inject('redisUrl')}/24`, LOCAL_DATA_DIR: dataDir,
      // The suite's fixed secrets are not given: npm start makes its own under LOCAL_DATA_DIR.
      JWT_SECRET: '', SECRETS_KEY: '', LOG_LEVEL: 'warn',
    };
    child = spawn(process.execPath, [...SERVICE_NODE_OPTIONS, projectPath('dist', 'scripts', 'start.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const printed: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start printed no instructions in 60 s:\n${printed.join('\n')}`)), 60_000);
      child!.once('exit', (code) => { clearTimeout(timer); reject(new Error(`npm start exited with ${code}:\n${printed.join('\n')}`)); });
      createInterface({ input: child!.stdout! }).on('line', (line) => {
        printed.push(line);
        if (line.includes('then open the portal page above')) { clearTimeout(timer); resolve(); }
      });
    });
    const text = printed.join('\n');
    expect(text).toContain('Guest Wi-Fi engine is running.');
    const field = (label: string): string => new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(text)?.[1] ?? '';
    const apiKey = field('API key');
    const portal = field('portal page');
    expect(apiKey).not.toBe('');
    expect(field('demo hotspot')).toMatch(/^hs_/);
    // Made under LOCAL_DATA_DIR, not in the project's .data/.
    expect(readFileSync(join(dataDir, 'secrets-key'), 'utf8').trim()).not.toBe('');
    expect(JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')).api_key).toBe(apiKey);

    // The two curl lines, as printed: their URL, headers and body.
    const curls = printed.filter((l) => l.trim().startsWith('curl '));
    expect(curls).toHaveLength(2);
    const answers = [];
    for (const line of curls) {
      const url = /(?:'|\s)(http:\/\/[^'\s]+)/.exec(line)![1]!;
      const headers = Object.fromEntries([...line.matchAll(/-H '([^:]+): ([^']*)'/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]));
      const body = /-d '([^']*)'/.exec(line)![1]!;
      const res = await fetch(url, { method: 'POST', headers, body });
      answers.push({ status: res.status, body: await res.json() as Record<string, unknown> });
    }
    expect(answers[0]!.status, JSON.stringify(answers[0]!.body)).toBe(201);
    expect(answers[1]!.status, JSON.stringify(answers[1]!.body)).toBe(200);
    expect(answers[1]!.body).toMatchObject({ status: 'authorized', session_id: expect.stringMatching(/^sess_/) });

    // The portal page it names is the guest's page.
    const page = await fetch(portal);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form');
  }, 120_000);
});
