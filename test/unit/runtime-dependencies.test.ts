import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The split of package.json into run-time and build-time packages (issue 24
 * item 1): `npm ci --omit=dev` installs only `dependencies`, so everything the
 * built service loads must be there, and nothing else should be (a build tool
 * in `dependencies` ships in every image). Reads the build output, where type
 * imports are gone: run `npm run -s build` first.
 */
const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
/** What the service runs: dist/ of these folders. bench/ is a developer's tool. */
const RUNTIME_TREES = ['engine', 'http', 'radius', 'scripts'];
/** Build steps in dist/scripts, run by `npm run build` only (esbuild bundles the web apps). */
const BUILD_ONLY = new Set(['scripts/build-web.js']);

/** Static imports and re-exports, side-effect imports, import(), require() and require.resolve() of a bare name. */
const SPECIFIERS = [
  /^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"./][^'"]*)['"]/gm,
  /^\s*import\s*['"]([^'"./][^'"]*)['"]/gm,
  /\b(?:import|require|resolve)\(\s*['"]([^'"./][^'"]*)['"]/g,
];
const builtins = new Set(builtinModules);

function jsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? jsFiles(p) : p.endsWith('.js') ? [p] : [];
  });
}

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`; null for Node's own modules. */
function packageOf(spec: string): string | null {
  if (spec.startsWith('node:') || builtins.has(spec)) return null;
  const parts = spec.split('/');
  return spec.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** Every package the built service loads, with one file loading it. */
function runtimeImports(): Map<string, string> {
  const dist = join(root, 'dist');
  const out = new Map<string, string>();
  for (const file of RUNTIME_TREES.flatMap((t) => jsFiles(join(dist, t)))) {
    const rel = relative(dist, file);
    if (BUILD_ONLY.has(rel)) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of SPECIFIERS.flatMap((re) => [...text.matchAll(re)])) {
      const name = packageOf(m[1]!);
      if (name && !out.has(name)) out.set(name, rel);
    }
  }
  return out;
}

describe('run-time and build-time dependencies', () => {
  const used = runtimeImports();

  it('finds the build output to read', () => {
    expect(existsSync(join(root, 'dist', 'scripts', 'serve.js')), 'run `npm run -s build` first').toBe(true);
    expect(used.size).toBeGreaterThan(10);
  });

  it('every package the built service loads is a run-time dependency', () => {
    const missing = [...used].filter(([name]) => !(name in pkg.dependencies)).map(([name, file]) => `${name} (loaded by dist/${file})`);
    expect(missing).toEqual([]);
  });

  it('every run-time dependency is loaded by the built service: build tools and test-only packages are devDependencies', () => {
    const unused = Object.keys(pkg.dependencies).filter((name) => !used.has(name));
    expect(unused).toEqual([]);
    for (const buildTool of ['esbuild', 'typescript', 'preact', 'uplot', 'radius']) expect(pkg.devDependencies).toHaveProperty([buildTool]);
  });
});
