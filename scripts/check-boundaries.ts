import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../engine/index.js';

/**
 * Architecture checks run by `npm test`:
 *  - http/ and radius/ reach the engine only through engine/index.ts;
 *  - engine/ never imports http/, radius/, scripts/ or bench/;
 *  - no import cycles among engine/, http/ and radius/ modules.
 * Prints every violation and exits 1 when there is one.
 */
const root = projectRoot();
const AREAS = ['engine', 'http', 'radius'];

function tsFiles(dir: string): string[] {
  let out: string[] = [];
  let entries: string[] = [];
  try { entries = readdirSync(dir); } catch { return out; }
  for (const e of entries) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out = out.concat(tsFiles(p));
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = AREAS.flatMap((a) => tsFiles(join(root, a)));
const graph = new Map<string, string[]>();
const problems: string[] = [];
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm;

for (const file of files) {
  const src = readFileSync(file, 'utf8');
  const rel = relative(root, file);
  const area = rel.split('/')[0]!;
  const deps: string[] = [];
  for (const m of src.matchAll(IMPORT)) {
    const spec = (m[1] ?? m[2])!;
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    const trel = relative(root, target);
    const tarea = trel.split('/')[0]!;
    deps.push(target);
    if (area === 'engine' && tarea !== 'engine') problems.push(`${rel}: engine/ must not import ${trel}`);
    if ((area === 'http' || area === 'radius') && tarea === 'engine' && trel !== 'engine/index.ts') {
      problems.push(`${rel}: import ${trel} through engine/index.ts instead`);
    }
  }
  graph.set(file, deps);
}

// Depth-first search for cycles.
const state = new Map<string, 1 | 2>();
const stack: string[] = [];
function visit(f: string): void {
  state.set(f, 1);
  stack.push(f);
  for (const d of graph.get(f) ?? []) {
    if (!graph.has(d)) continue;
    if (state.get(d) === 1) {
      const cycle = stack.slice(stack.indexOf(d)).concat(d).map((p) => relative(root, p));
      problems.push(`import cycle: ${cycle.join(' -> ')}`);
    } else if (!state.has(d)) visit(d);
  }
  stack.pop();
  state.set(f, 2);
}
for (const f of graph.keys()) if (!state.has(f)) visit(f);

if (problems.length) {
  process.stderr.write('Architecture check failed:\n' + problems.map((p) => '  ' + p).join('\n') + '\n');
  process.exit(1);
}
process.stdout.write(`architecture check: ${files.length} modules, boundaries kept, no cycles\n`);
