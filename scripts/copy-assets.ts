import { cpSync, existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
// The root finder alone: the engine's barrel would load Redis and Postgres clients into a build step.
import { projectPath } from '../engine/util/project-root.js';

/**
 * Copies every file the service reads at run time into dist/, at the same
 * relative path, so `dist/` plus the production node_modules runs without the
 * source tree (engine/util/project-root.ts `assetPath`). Run by `npm run build`
 * after tsc. What is copied is every file in `ASSET_TREES` that is not
 * TypeScript: the Lua scripts and their includes, the SQL migrations, the
 * RADIUS dictionaries, the portal's templates, styles, script and messages.
 * A new asset in one of those folders ships without editing this list.
 */
export const ASSET_TREES = ['engine', 'http', 'radius', 'web/portal'] as const;

const isSource = (f: string): boolean => /\.(ts|tsx|mts|cts)$/.test(f);

function main(): void {
  let copied = 0;
  for (const tree of ASSET_TREES) {
    const from = projectPath(tree);
    if (!existsSync(from)) continue;
    // web/portal has no compiled output: replace it whole, so a file deleted from the source leaves dist/ too.
    if (tree === 'web/portal') rmSync(projectPath('dist', tree), { recursive: true, force: true });
    cpSync(from, projectPath('dist', tree), {
      recursive: true,
      filter: (src) => {
        if (statSync(src).isDirectory()) return true;
        if (isSource(src)) return false;
        copied++;
        return true;
      },
    });
  }
  process.stdout.write(`copy-assets: ${copied} files into ${join('dist')}/\n`);
}

main();
