import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/index.js';

/**
 * The events stream has one trimmer (engine/events/event-trimmer.ts), which
 * never trims past what the webhook router has not read. A writer adding an
 * event with XADD ... MAXLEN would trim regardless, and lose webhook
 * deliveries owed (Redis 7.0 has no trimming that respects consumer
 * groups). So no writer of an event (an XADD whose first field is `type`,
 * docs/events.md's envelope) may carry MAXLEN or MINID.
 */
function files(dir: string, ext: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p, ext));
    else if (ext.some((e) => name.endsWith(e))) out.push(p);
  }
  return out;
}

describe('event writers do not trim the events stream', () => {
  it('no XADD of an event (first field "type") in engine/ trims', () => {
    const offenders: string[] = [];
    let writers = 0;
    for (const f of files(projectPath('engine'), ['.lua', '.ts'])) {
      // One call may span lines: look at each XADD with the text up to its first field.
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/XADD['"]?\s*[,(][^;]*?['"]\*['"]\s*,\s*(?:\n\s*)?([A-Za-z_.'"]+)/gi)) {
        const first = m[1]!;
        if (!/^['"]type['"]$|EVENT_FIELD\.type/.test(first)) continue;
        writers++;
        if (/MAXLEN|MINID/i.test(m[0])) offenders.push(`${f}: ${m[0].replace(/\s+/g, ' ').slice(0, 120)}`);
      }
    }
    expect(writers).toBeGreaterThanOrEqual(6);
    expect(offenders).toEqual([]);
  });
});
