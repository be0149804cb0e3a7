import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalServices, type LocalServices } from '../scripts/local-services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    databaseUrl: string;
    redisPort: number;
    pgPort: number;
  }
}

/**
 * Throw-away Redis and PostgreSQL on free loopback ports for the whole run,
 * in a temporary folder removed afterwards. redis-server is installed from
 * Debian's packages when missing (as root).
 */
let services: LocalServices | undefined;
let dir = '';

/**
 * Debian's programs the browser, document and gateway tests drive (Chromium
 * for the pages, poppler's pdftoppm/pdftotext for the PDFs, FreeRADIUS's radclient as a NAS, radsecproxy as a RadSec peer, Prometheus's promtool for the alert rules, openNDS with dnsmasq, a DHCP client and the legacy iptables for the
 * real gateway), installed when missing and we are root, as CI's fresh
 * machine needs. Elsewhere those tests say what is missing.
 */
const TOOLS: Record<string, string> = {
  chromium: 'chromium', opennds: 'opennds', dnsmasq: 'dnsmasq', dhclient: 'isc-dhcp-client', 'iptables-legacy': 'iptables', curl: 'curl', python3: 'python3',
  pdftoppm: 'poppler-utils', pdftotext: 'poppler-utils',
  radclient: 'freeradius-utils', radsecproxy: 'radsecproxy',
  // Checks the Prometheus alert rules (deploy/prometheus/); only the tool is used, no server is started.
  promtool: 'prometheus',
  'systemd-analyze': 'systemd',
};

function ensureTools(log: (l: string) => void): void {
  const has = (bin: string): boolean => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
  const missing = [...new Set(Object.entries(TOOLS).filter(([bin]) => !has(bin)).map(([, pkg]) => pkg))];
  if (missing.length === 0 || process.getuid?.() !== 0 || !has('apt-get')) return;
  log(`installing from Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: 'inherit', env });
}

export async function setup(project: TestProject): Promise<void> {
  ensureTools((l) => process.stdout.write(`[setup] ${l}\n`));
  dir = mkdtempSync(join(tmpdir(), 'gw-test-'));
  services = await startLocalServices({ dir, ephemeral: true, database: 'gw_test', log: (l) => process.stdout.write(`[setup] ${l}\n`) });
  project.provide('redisUrl', services.redisUrl);
  project.provide('databaseUrl', services.databaseUrl);
  project.provide('redisPort', services.redisPort);
  project.provide('pgPort', services.pgPort);
}

export async function teardown(): Promise<void> {
  await services?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
