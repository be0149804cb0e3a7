import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding package.json. Code runs both from source (vitest) and
 * from dist/ (the service, worker threads), so files that ship beside the
 * code (Lua scripts, SQL migrations, dictionaries) are found from the root,
 * not from the module's own location.
 */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** A path inside the project, e.g. `projectPath('engine', 'redis', 'lua')`. */
export function projectPath(...parts: string[]): string {
  return join(projectRoot(), ...parts);
}
