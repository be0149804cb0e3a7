import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_NODE_OPTIONS } from '../../scripts/node-options.js';

/**
 * The Node.js options the service runs with (scripts/node-options.ts) are
 * spelt out where it is started in production and by `npm start`, before the
 * script, and the Node the release ships with takes them and does what they
 * are there for. The benches and test/support/service.ts import the list.
 */
const root = join(import.meta.dirname, '..', '..');
const read = (...path: string[]): string => readFileSync(join(root, ...path), 'utf8');

describe('the service\'s Node.js options', () => {
  it('are in the Dockerfile\'s CMD, the systemd unit\'s ExecStart and npm start, before the script', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'));
    expect(cmd, 'the Dockerfile has a CMD in exec form').not.toBeNull();
    expect(JSON.parse(cmd![1]!)).toEqual(['node', ...SERVICE_NODE_OPTIONS, 'dist/scripts/serve.js']);

    const exec = /^ExecStart=(.*)$/m.exec(read('deploy', 'systemd', 'guestwifi.service'));
    expect(exec?.[1]?.split(' ')).toEqual(['/usr/bin/node', ...SERVICE_NODE_OPTIONS, '/opt/guestwifi/dist/scripts/serve.js']);

    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;
    expect(start).toContain(['node', ...SERVICE_NODE_OPTIONS, 'dist/scripts/start.js'].join(' '));
  });

  it('are taken by this Node, which then carries a request\'s store through awaits and timers', () => {
    // Two stores entered at once, as two requests served together: each sees its own after an await and in a timer.
    const probe = `
      const { AsyncLocalStorage } = require('node:async_hooks');
      const als = new AsyncLocalStorage();
      const seen = [];
      const serve = (id) => als.run(id, async () => {
        await new Promise((r) => setImmediate(r));
        seen.push([id, als.getStore()]);
        await new Promise((r) => setTimeout(r, 5));
        seen.push([id, als.getStore()]);
      });
      Promise.all([serve('a'), serve('b')]).then(() => {
        process.stdout.write(JSON.stringify({ seen, outside: als.getStore() ?? null, argv: process.execArgv }));
      });`;
    const r = spawnSync(process.execPath, [...SERVICE_NODE_OPTIONS, '-e', probe], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { seen: [string, string][]; outside: string | null; argv: string[] };
    expect(out.argv.slice(0, SERVICE_NODE_OPTIONS.length)).toEqual([...SERVICE_NODE_OPTIONS]);
    expect(out.seen).toHaveLength(4);
    for (const [id, store] of out.seen) expect(store).toBe(id);
    expect(out.outside).toBeNull();
  });
});
