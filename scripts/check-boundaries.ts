import { join } from 'node:path';
import { projectRoot } from '../engine/index.js';
import { folderCycles, importGraph, KNOWN_FOLDER_TANGLES } from './import-graph.js';

/**
 * Architecture checks run by `npm test`:
 *  - http/ and radius/ reach the engine only through engine/index.ts;
 *  - engine/ never imports http/, radius/, scripts/ or bench/;
 *  - no import cycles among engine/, http/ and radius/ modules;
 *  - no cycles among engine/'s folders (each pair imports one way at most).
 * Prints every violation and exits 1 when there is one.
 */
const root = projectRoot();
const graph = importGraph(root, ['engine', 'http', 'radius']);
const problems: string[] = [];

for (const [rel, deps] of graph) {
  const area = rel.split('/')[0]!;
  for (const trel of deps) {
    const tarea = trel.split('/')[0]!;
    if (area === 'engine' && tarea !== 'engine') problems.push(`${rel}: engine/ must not import ${trel}`);
    if ((area === 'http' || area === 'radius') && tarea === 'engine' && trel !== 'engine/index.ts') {
      problems.push(`${rel}: import ${trel} through engine/index.ts instead`);
    }
  }
}

// Depth-first search for cycles among modules.
const state = new Map<string, 1 | 2>();
const stack: string[] = [];
function visit(f: string): void {
  state.set(f, 1);
  stack.push(f);
  for (const d of graph.get(f) ?? []) {
    if (!graph.has(d)) continue;
    if (state.get(d) === 1) {
      problems.push(`import cycle: ${stack.slice(stack.indexOf(d)).concat(d).join(' -> ')}`);
    } else if (!state.has(d)) visit(d);
  }
  stack.pop();
  state.set(f, 2);
}
for (const f of graph.keys()) if (!state.has(f)) visit(f);

problems.push(...folderCycles(graph, KNOWN_FOLDER_TANGLES));

if (problems.length) {
  process.stderr.write('Architecture check failed:\n' + problems.map((p) => '  ' + p).join('\n') + '\n');
  process.exit(1);
}
process.stdout.write(`architecture check: ${graph.size} modules, boundaries kept, no cycles (modules or ${join('engine', '*')} folders)\n`);
