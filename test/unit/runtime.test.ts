import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, sep } from 'node:path';
import { promisify } from 'node:util';
import { isNativeAccelerationEnabled } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_NODE_MAJORS, checkRuntime, loadUws } from '../../http/uws.js';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const major = (v: string): number => Number(/^v?(\d+)\./.exec(v)?.[1]);

describe('the runtime (docs/runtime.md)', () => {
  it('the test command runs the suite on the Node 22 that npm ci installs, not the machine\'s own', () => {
    expect(major(process.version)).toBe(22);
    // vitest's workers are forks of the same binary: node_modules/node-linux-<arch>/bin/node.
    expect(process.execPath).toContain(`${sep}node_modules${sep}node-linux-${process.arch}${sep}bin${sep}node`);
  });

  it('every npm script (start, cli, test, benches) resolves `node` to that Node 22, even with only another Node on the PATH', async () => {
    // As on a machine that has only its system Node: none of node_modules/.bin on the PATH we pass.
    const PATH = (process.env.PATH ?? '').split(delimiter).filter((d) => !d.includes(`${sep}node_modules${sep}`)).join(delimiter);
    const { stdout } = await run('npm', ['run', '-s', 'env'], { cwd: root, env: { ...process.env, PATH }, timeout: 60_000 });
    const scriptPath = /^PATH=(.*)$/m.exec(stdout)?.[1] ?? '';
    const first = scriptPath.split(delimiter).map((d) => join(d, 'node')).find((p) => existsSync(p));
    expect(first).toBe(join(root, 'node_modules', '.bin', 'node'));
    const { stdout: version } = await run(first!, ['-p', 'process.version'], { timeout: 60_000 });
    expect(major(version.trim())).toBe(22);
  });

  it('engines in package.json names exactly the supported majors', () => {
    const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const majors = [...engines.matchAll(/\^(\d+)\./g)].map((m) => Number(m[1]));
    expect(majors).toEqual([...SUPPORTED_NODE_MAJORS]);
  });

  it('refuses Node 20 (upstream end of life) and any major not supported, in one line', () => {
    expect(() => checkRuntime('v20.20.2')).toThrow(/^Node\.js v20\.20\.2 is not supported: run on Node\.js 22 /);
    expect(() => checkRuntime('v18.20.0')).toThrow(/not supported/);
    // Not until its uWS binary loads here (glibc 2.38; docs/runtime.md).
    expect(() => checkRuntime('v24.22.3')).toThrow(/not supported/);
    expect(() => checkRuntime('v22.12.0')).not.toThrow();
  });

  it('loads the native uWebSockets.js binary for this ABI, and the build has one for each supported Node', () => {
    const uws = loadUws();
    expect(typeof uws.App).toBe('function');
    const require = createRequire(import.meta.url);
    const pkgDir = dirname(require.resolve('uWebSockets.js'));
    // The module loadUws returned is the .node addon itself, not a JavaScript wrapper.
    const loaded = Object.keys(require.cache).filter((k) => k.startsWith(pkgDir));
    expect(loaded).toEqual([join(pkgDir, `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`)]);
    // ABI 127 is Node 22; 137 (Node 24) is there for the move docs/runtime.md describes.
    for (const abi of [127, 137]) expect(existsSync(join(pkgDir, `uws_linux_${process.arch}_${abi}.node`))).toBe(true);
  });

  it('msgpackr runs with its native part on this runtime (the actors\' messages)', () => {
    expect(isNativeAccelerationEnabled).toBe(true);
  });
});
