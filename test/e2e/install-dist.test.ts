import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { operatorPath } from '../support/operator-path.js';
import { spawnService, testEnv, type ServiceProcess } from '../support/service.js';

const run = promisify(execFile);

/**
 * The build output is self-contained (issue 24 item 1): dist/ and
 * package.json/package-lock.json copied to an empty folder, the production
 * dependencies installed there (`npm ci --omit=dev`, from npm's cache when it
 * holds them), and the service started from that folder signs a guest in.
 * Nothing of the source tree is reachable from there: the Lua scripts,
 * migrations, dictionaries and portal templates must come from dist/.
 * Run `npm run -s build` first.
 */
describe('dist/ plus the production dependencies runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-install-'));
  let svc: ServiceProcess | undefined;
  afterAll(async () => {
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs with npm ci --omit=dev, starts from the copy and signs a guest in', async () => {
    cpSync(projectPath('dist'), join(dir, 'dist'), { recursive: true, filter: (src) => !src.includes(`${join('dist', 'bench')}`) });
    for (const f of ['package.json', 'package-lock.json']) cpSync(projectPath(f), join(dir, f));
    // --prefer-offline: npm's cache answers when it can (CI's machine installed the same lock moments before);
    // --ignore-scripts: no package needs an install script to run (uWebSockets.js ships its binaries).
    await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 16 << 20 });
    for (const dev of ['typescript', 'esbuild', 'preact', 'uplot', 'radius', 'vitest']) {
      expect(existsSync(join(dir, 'node_modules', dev)), `${dev} is a devDependency`).toBe(false);
    }
    // The runtime the service needs comes along: --omit=dev keeps the optional node-linux-<arch> (docs/runtime.md).
    expect((await run(join(dir, 'node_modules', '.bin', 'node'), ['--version'])).stdout.trim()).toBe(process.version);

    const env = { PATH: process.env.PATH, ...testEnv() };
    svc = await spawnService(env, { entry: join(dir, 'dist', 'scripts', 'serve.js'), cwd: dir });
    const cli = async (args: string[]): Promise<string> =>
      (await run(process.execPath, [join(dir, 'dist', 'scripts', 'cli.js'), ...args], { cwd: dir, env })).stdout;
    const { sessionId } = await operatorPath(svc.base, cli);
    expect(sessionId).toMatch(/\S/);
    // The CLI on a server reads the settings given and makes no .data/ (no local servers, no secret of its own).
    expect(existsSync(join(dir, '.data'))).toBe(false);
  }, 600_000);
});
