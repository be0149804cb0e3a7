import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { spawnService, testEnv } from '../support/fixture.js';

const run = promisify(execFile);

/**
 * NAS_DICTIONARY_DIR (issue 24's Contract): the service reads an operator's
 * dictionaries at start, after ours; a bad file stops it before anything
 * starts, with one clear line naming the setting, the file and the line, and
 * a non-zero exit. Runs dist/scripts/serve.js (build first).
 */
describe('NAS_DICTIONARY_DIR at start-up', () => {
  const root = mkdtempSync(join(tmpdir(), 'nas-dict-dir-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const start = (dir: string) => run(process.execPath, [projectPath('dist', 'scripts', 'serve.js')], {
    env: { ...process.env, ...testEnv({ NAS_DICTIONARY_DIR: dir }) }, timeout: 30_000,
  }).then(() => null, (e: { code?: number; stderr?: string }) => e);

  it('a malformed file: exit non-zero, naming the setting, the file and its line', async () => {
    const dir = join(root, 'bad');
    mkdirSync(dir);
    writeFileSync(join(dir, 'dictionary.acme'), 'VENDOR Acme 99999\nBEGIN-VENDOR Acme\nATTRIBUTE Acme-Tier 1 strnig\nEND-VENDOR Acme\n');
    const err = await start(dir);
    expect(err).not.toBeNull();
    expect(typeof err!.code).toBe('number');
    expect(err!.code).not.toBe(0);
    expect(err!.stderr).toContain('NAS_DICTIONARY_DIR');
    expect(err!.stderr).toContain('dictionary.acme:3: unknown type strnig');
    // One problem, one line (after the heading every configuration error has).
    expect((err!.stderr ?? '').trim().split('\n').filter((l) => l.includes('NAS_DICTIONARY_DIR'))).toHaveLength(1);
  });

  it('a file that renumbers one of our attributes is refused the same way', async () => {
    const dir = join(root, 'renumber');
    mkdirSync(dir);
    writeFileSync(join(dir, 'dictionary.mine'), 'VENDOR Mikrotik 14988\nBEGIN-VENDOR Mikrotik\nATTRIBUTE Mikrotik-Rate-Limit 99 string\nEND-VENDOR Mikrotik\n');
    const err = await start(dir);
    expect(err?.code).not.toBe(0);
    expect(err!.stderr).toContain('dictionary.mine:3: Mikrotik-Rate-Limit redefined');
  });

  it('a directory that does not exist is a configuration error', async () => {
    const err = await start(join(root, 'nowhere'));
    expect(err?.code).not.toBe(0);
    expect(err!.stderr).toMatch(/NAS_DICTIONARY_DIR=".*nowhere" is not a readable directory/);
  });

  it('a good directory: the service starts and answers', async () => {
    const dir = join(root, 'good');
    mkdirSync(dir);
    writeFileSync(join(dir, 'dictionary.acme'), 'VENDOR Acme 99999\nBEGIN-VENDOR Acme\nATTRIBUTE Acme-Tier 1 string\nEND-VENDOR Acme\n');
    const svc = await spawnService({ ...process.env, ...testEnv({ NAS_DICTIONARY_DIR: dir }) });
    try {
      expect((await fetch(`${svc.base}/healthz`)).status).toBe(200);
    } finally {
      await svc.stop();
    }
  });
});
