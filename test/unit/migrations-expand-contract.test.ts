import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { projectPath } from '../../engine/index.js';

/**
 * docs/upgrades.md: an old release keeps running beside the new one during a
 * rolling upgrade, so a migration may only expand. A statement that breaks the
 * release before it (a drop, a rename, a type change, NOT NULL) must be marked
 * `-- contract: <why no running release needs it>` on its line or the line before.
 */
const dir = projectPath('engine', 'store', 'migrations');
const BREAKING: [RegExp, string][] = [
  [/\bDROP\s+(TABLE|COLUMN|VIEW|MATERIALIZED\s+VIEW|FUNCTION|TYPE|SCHEMA)\b/i, 'drops what the old release may use'],
  [/\bALTER\s+TABLE\s+\S+\s+DROP\s+(?!CONSTRAINT|INDEX)\w+/i, 'drops a column'],
  [/\bRENAME\b/i, 'renames'],
  [/\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i, 'changes a type'],
  [/\bSET\s+NOT\s+NULL\b/i, 'makes a column required'],
  [/\bADD\s+(COLUMN\s+)?\S+\s+[^,;]*\bNOT\s+NULL\b(?![^,;]*\bDEFAULT\b)/i, 'adds a required column without a default'],
];
/** Contract statements in migrations written before the rule (docs/upgrades.md). */
const BEFORE_THE_RULE = 27;

export function unmarkedContracts(sql: string): string[] {
  const lines = sql.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    const code = line.replace(/--.*$/, '');
    const hit = BREAKING.find(([re]) => re.test(code));
    if (!hit) return;
    const marked = /--\s*contract:\s*\S/.test(line) || /^\s*--\s*contract:\s*\S/.test(lines[i - 1] ?? '');
    if (!marked) found.push(`line ${i + 1} ${hit[1]}: ${line.trim()}`);
  });
  return found;
}

describe('migrations only expand unless a contract step is marked', () => {
  test('every migration after 027 is expand-only or marks its contract statements', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.sql') && Number(f.slice(0, 3)) > BEFORE_THE_RULE);
    const offences = files.flatMap((f) => unmarkedContracts(readFileSync(`${dir}/${f}`, 'utf8')).map((o) => `${f} ${o}`));
    expect(offences).toEqual([]);
  });

  test('the check finds what breaks an older release and lets marked or additive statements pass', () => {
    expect(unmarkedContracts('ALTER TABLE sessions DROP COLUMN ssid;')).toHaveLength(1);
    expect(unmarkedContracts('ALTER TABLE a RENAME COLUMN b TO c;')).toHaveLength(1);
    expect(unmarkedContracts('ALTER TABLE a ALTER COLUMN b TYPE bigint;')).toHaveLength(1);
    expect(unmarkedContracts('ALTER TABLE a ALTER COLUMN b SET NOT NULL;')).toHaveLength(1);
    expect(unmarkedContracts('ALTER TABLE a ADD COLUMN b text NOT NULL;')).toHaveLength(1);
    expect(unmarkedContracts('DROP TABLE old_things;')).toHaveLength(1);
    expect(unmarkedContracts('-- contract: unused since 1.4\nALTER TABLE a DROP COLUMN b;')).toEqual([]);
    expect(unmarkedContracts('ALTER TABLE a ADD COLUMN b text NOT NULL DEFAULT \'\';')).toEqual([]);
    expect(unmarkedContracts('ALTER TABLE a ADD COLUMN b text;\nCREATE INDEX a_b ON a (b);')).toEqual([]);
    expect(unmarkedContracts('ALTER TABLE a DROP CONSTRAINT IF EXISTS a_key;')).toEqual([]);
  });

  test('the migrations before the rule are known: their contract statements are listed', () => {
    const old = readdirSync(dir).filter((f) => f.endsWith('.sql') && Number(f.slice(0, 3)) <= BEFORE_THE_RULE);
    const found = old.flatMap((f) => unmarkedContracts(readFileSync(`${dir}/${f}`, 'utf8')).map(() => f));
    expect([...new Set(found)]).toEqual(['005_lean_writes.sql']);
  });
});
