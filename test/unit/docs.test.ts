import { readFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Errors } from '../../engine/errors.js';

const root = join(import.meta.dirname, '..', '..');
// Built from parts so this file does not cite itself.
const SPEC_CITE = new RegExp('spec ' + '\u00a7');
const read = (p: string): string => readFileSync(join(root, p), 'utf8');

/** Every `path/like/this.ts` or `folder/` in backticks that names a place in the tree. */
function citedPaths(markdown: string): string[] {
  const out: string[] = [];
  for (const m of markdown.matchAll(/`([a-z][\w.-]*\/[\w./-]*)`/g)) {
    const p = m[1]!;
    if (p.includes('://') || p.startsWith('dist/')) continue;
    out.push(p);
  }
  return out;
}

describe('documents a newcomer reads', () => {
  it('docs/architecture.md names only files and folders that exist', () => {
    const paths = citedPaths(read('docs/architecture.md'));
    expect(paths.length).toBeGreaterThan(15);
    const missing = paths.filter((p) => !existsSync(join(root, p)));
    expect(missing).toEqual([]);
  });

  it('the README error table lists every code of the catalogue', () => {
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('## Errors'));
    const codes = new Set(Object.values(Errors).map((make) => {
      // Each maker needs arguments of its own; the code does not depend on them.
      const e = (make as (...a: unknown[]) => { code: string })('x', [], 0, 0);
      return e.code;
    }));
    const missing = [...codes].filter((c) => !table.includes(`\`${c}\``));
    expect(missing).toEqual([]);
  });

  it('no wire error is made up where it is thrown: AppError is built only in the catalogues', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(join(root, dir))) {
        const rel = join(dir, name);
        if (statSync(join(root, rel)).isDirectory()) walk(rel);
        else if (rel.endsWith('.ts') && !rel.endsWith('errors.ts') && /new AppError\(/.test(read(rel))) offenders.push(rel);
      }
    };
    for (const top of ['engine', 'http', 'radius', 'scripts']) walk(top);
    expect(offenders).toEqual([]);
  });

  it('nothing cites the spec by section number: the contract is quoted or the OpenAPI document named', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(join(root, dir))) {
        if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
        const rel = join(dir, name);
        if (statSync(join(root, rel)).isDirectory()) walk(rel);
        else if (/\.(ts|lua|md|sql|html|json)$/.test(rel) && SPEC_CITE.test(read(rel))) offenders.push(rel);
      }
    };
    for (const top of ['engine', 'http', 'radius', 'scripts', 'web', 'docs', 'bench', 'test'].filter((d) => existsSync(join(root, d)))) walk(top);
    if (SPEC_CITE.test(read('README.md'))) offenders.push('README.md');
    expect(offenders).toEqual([]);
  });
});
