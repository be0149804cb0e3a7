import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * deploy/systemd/guestwifi.service (issue 24 item 1), checked by systemd's own
 * tools offline: `systemd-analyze verify` (syntax, directives, the command) and
 * `systemd-analyze security --offline` (its exposure score). No systemd runs
 * as PID 1 in this container, so the unit is not started here; the command it
 * starts is what test/e2e/install-dist.test.ts runs. systemd-analyze comes
 * from Debian's `systemd` package (test/global-setup.ts installs it).
 */
const root = join(import.meta.dirname, '..', '..');
const UNIT = readFileSync(join(root, 'deploy', 'systemd', 'guestwifi.service'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'gw-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The unit under `name` in a folder of its own; ExecStart's node is this machine's, wherever it is installed. */
function placed(text: string, name = 'guestwifi.service'): string {
  const file = join(dir, name);
  writeFileSync(file, text.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `));
  return file;
}

function analyze(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('systemd-analyze', args, { encoding: 'utf8', cwd: dir });
  if (r.error) throw new Error(`systemd-analyze did not run (${r.error.message}); Debian: apt-get install systemd`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Lines about this unit: verify also reads the units it names (After=), and complains about theirs. */
const about = (out: string, name: string): string[] => out.split('\n').filter((l) => l.includes(name));

describe('the systemd unit', () => {
  it('passes systemd-analyze verify without a complaint', () => {
    const r = analyze(['verify', placed(UNIT)]);
    expect(about(r.out, 'guestwifi.service')).toEqual([]);
    expect(r.status).toBe(0);
  });

  it('verify does complain about a broken copy (the check bites)', () => {
    const broken = UNIT.replace(/^ProtectSystem=strict$/m, 'ProtectSystem=stricter').replace(/^Type=simple$/m, 'Type=simpel');
    const r = analyze(['verify', placed(broken, 'guestwifi-broken.service')]);
    // verify exits 0 on parse warnings: the lines naming the unit are the verdict.
    expect(about(r.out, 'guestwifi-broken.service').join('\n')).toMatch(/service type[\s\S]*protect system/i);
  });

  it('is hardened: exposure at most 2.0 ("OK") by systemd-analyze security', () => {
    const r = analyze(['security', '--offline=true', '--no-pager', placed(UNIT)]);
    const m = /Overall exposure level for guestwifi\.service: (\d+\.\d)/.exec(r.out);
    expect(m, r.out).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(2.0);
  });

  it('holds the settings the install guide relies on', () => {
    for (const line of ['EnvironmentFile=/etc/guestwifi/env', 'DynamicUser=yes', 'CapabilityBoundingSet=', 'NoNewPrivileges=yes',
      'ProtectSystem=strict', 'PrivateTmp=yes', 'SystemCallFilter=@system-service', 'MemoryDenyWriteExecute=no',
      'ExecStart=/usr/bin/node --experimental-async-context-frame /opt/guestwifi/dist/scripts/serve.js']) {
      expect(UNIT.split('\n')).toContain(line);
    }
    expect(UNIT).not.toMatch(/^ReadWritePaths=/m);
  });
});
