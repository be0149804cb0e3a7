import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Every module's relative imports, by project-relative path (`engine/signin/method.ts` -> [`engine/errors.ts`, ...]). */
export type ImportGraph = Map<string, string[]>;

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm;

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

/** The relative imports of every .ts module under `areas` (top-level folders of `root`). */
export function importGraph(root: string, areas: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of areas.flatMap((a) => tsFiles(join(root, a)))) {
    const deps: string[] = [];
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), (m[1] ?? m[2])!).replace(/\.js$/, '.ts');
      deps.push(relative(root, target));
    }
    graph.set(relative(root, file), deps);
  }
  return graph;
}

/**
 * Folder imports known to go both ways, left for later: the outbox sink
 * (store/) links records into the audit chain (audit/chain-writer.ts), and the
 * audit services read Postgres through store/postgres.ts. Nothing else may be
 * added here without untangling first.
 */
export const KNOWN_FOLDER_TANGLES: ReadonlySet<string> = new Set(['store -> audit']);

/** `engine/signin/otp/x.ts` -> `signin`; files directly in engine/ (the wiring, errors, ids) belong to no folder. */
function engineFolder(path: string): string | null {
  const parts = path.split('/');
  return parts[0] === 'engine' && parts.length > 2 ? parts[1]! : null;
}

/**
 * Cycles among the folders of engine/ (STYLE 15: two folders that import each
 * other are one concern split wrongly, or two concerns tangled). A folder
 * imports another when any module in it does; `allowed` edges ("store ->
 * audit") are left out, each a known tangle with its reason at the caller.
 * Each cycle is reported once, with one import that makes each of its edges.
 */
export function folderCycles(graph: ImportGraph, allowed: ReadonlySet<string> = new Set()): string[] {
  const edges = new Map<string, Map<string, string>>(); // folder -> folder it imports -> one import doing it
  for (const [file, deps] of graph) {
    const from = engineFolder(file);
    if (!from) continue;
    for (const dep of deps) {
      const to = engineFolder(dep);
      if (!to || to === from || allowed.has(`${from} -> ${to}`)) continue;
      let out = edges.get(from);
      if (!out) edges.set(from, (out = new Map()));
      if (!out.has(to)) out.set(to, `${file} -> ${dep}`);
    }
  }
  const found: string[] = [];
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 1);
    stack.push(f);
    for (const d of [...(edges.get(f)?.keys() ?? [])].sort()) {
      if (state.get(d) === 1) {
        const cycle = stack.slice(stack.indexOf(d)).concat(d);
        const via = cycle.slice(1).map((to, i) => edges.get(cycle[i]!)!.get(to)!);
        found.push(`engine folders import each other: ${cycle.join(' -> ')} (${via.join('; ')})`);
      } else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of [...edges.keys()].sort()) if (!state.has(f)) visit(f);
  return found;
}
