import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../engine/index.js';
import { folderCycles, importGraph, KNOWN_FOLDER_TANGLES, type ImportGraph } from '../../scripts/import-graph.js';

/** The folder rule of scripts/check-boundaries.ts (run by npm test): engine/'s folders import one way at most. */
describe('engine folder cycles', () => {
  const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

  it('finds two folders that import each other, naming an import for each way', () => {
    // The tangle issue 19 removed: sign-in's CHAP check read a sessions type, and the sessions' RADIUS gateway used sign-in.
    const found = folderCycles(graph({
      'engine/signin/chap.ts': ['engine/sessions/ports.ts', 'engine/errors.ts'],
      'engine/sessions/radius-gateway.ts': ['engine/signin/chap.ts'],
    }));
    expect(found).toEqual([
      'engine folders import each other: sessions -> signin -> sessions '
      + '(engine/sessions/radius-gateway.ts -> engine/signin/chap.ts; engine/signin/chap.ts -> engine/sessions/ports.ts)',
    ]);
  });

  it('finds a longer cycle, and none when the edges go one way', () => {
    const three = graph({
      'engine/a/x.ts': ['engine/b/y.ts'], 'engine/b/y.ts': ['engine/c/z.ts'], 'engine/c/z.ts': ['engine/a/w.ts'], 'engine/a/w.ts': [],
    });
    expect(folderCycles(three)).toHaveLength(1);
    expect(folderCycles(three)[0]).toContain('a -> b -> c -> a');
    expect(folderCycles(graph({ 'engine/a/x.ts': ['engine/b/y.ts'], 'engine/b/y.ts': ['engine/c/z.ts'], 'engine/c/z.ts': [] }))).toEqual([]);
  });

  it('leaves out files directly in engine/ (the wiring and shared leaves) and allowed edges', () => {
    expect(folderCycles(graph({
      'engine/engine.ts': ['engine/signin/x.ts', 'engine/sessions/y.ts'],
      'engine/signin/x.ts': ['engine/errors.ts'], 'engine/sessions/y.ts': ['engine/errors.ts', 'engine/signin/x.ts'],
    }))).toEqual([]);
    const both = graph({ 'engine/store/s.ts': ['engine/audit/a.ts'], 'engine/audit/a.ts': ['engine/store/p.ts'] });
    expect(folderCycles(both)).toHaveLength(1);
    expect(folderCycles(both, new Set(['store -> audit']))).toEqual([]);
  });

  it('holds for the engine as it is: signin, sessions, hotspots and nas import one way each', () => {
    const g = importGraph(projectRoot(), ['engine']);
    expect(g.size).toBeGreaterThan(100);
    expect(folderCycles(g, KNOWN_FOLDER_TANGLES)).toEqual([]);
    expect([...KNOWN_FOLDER_TANGLES]).toEqual(['store -> audit']);
  });
});
