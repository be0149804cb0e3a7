import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding package.json. Code runs both from source (vitest) and
 * from dist/ (the service, worker threads); what the build writes (dist/web,
 * the worker threads' entry files) is found from here as `dist/...`.
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

/** A path inside the project, e.g. `projectPath('dist', 'web', 'console')`. */
export function projectPath(...parts: string[]): string {
  return join(projectRoot(), ...parts);
}

/**
 * The root of the tree this code runs from: the project root when run from
 * source (vitest), `dist/` when run from the build. This module sits at
 * `<root>/engine/util/`, so the root is two folders up.
 */
export function codeRoot(): string {
  return dirname(dirname(dirname(fileURLToPath(import.meta.url))));
}

/**
 * A file that ships beside the code and is read at run time (Lua scripts, SQL
 * migrations, RADIUS dictionaries, the portal's templates), e.g.
 * `assetPath('engine', 'redis', 'lua')`. The build copies each into dist/ at
 * the same relative path (scripts/copy-assets.ts), so the service needs
 * `dist/` and its production node_modules only, never the source tree.
 */
export function assetPath(...parts: string[]): string {
  return join(codeRoot(), ...parts);
}
