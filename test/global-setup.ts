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

export async function setup(project: TestProject): Promise<void> {
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
