import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GzipRuns } from '../../http/gzip-runs.js';
import { compileTemplate, renderRuns, renderTemplate } from '../../http/portal-template.js';

const STYLES = 'body{margin:0;font:16px system-ui}'.repeat(200);
const SCRIPT = 'document.querySelectorAll("form").forEach(function(f){f.hidden=false});'.repeat(150);

describe('GzipRuns', () => {
  it('makes a gzip member whose text is the runs joined, with multi-byte text, empty runs and a value over one stored block', () => {
    const z = new GzipRuns();
    const big = 'ğ'.repeat(40_000); // 80,000 bytes: two stored blocks
    const runs = [`<style>${STYLES}</style>Şişli kafe`, 'AA:BB:CC:DD:EE:01', '', '', `<script>${SCRIPT}</script>`, big, '</html>'];
    const page = z.gzip(runs);
    expect(gunzipSync(page).toString()).toBe(runs.join(''));
    // gzip(1), a second reader, checks the CRC-32 and the size in the trailer too.
    expect(execFileSync('gzip', ['-dc'], { input: page }).toString()).toBe(runs.join(''));
  });

  it('combines the kept runs\' CRC-32s into the page\'s for any lengths (the reader checks it)', () => {
    const z = new GzipRuns();
    let seed = 7;
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let page = 0; page < 40; page++) {
      const runs = Array.from({ length: 1 + next(9) }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(next(i % 2 ? 300 : 70_000)) + (page % 3 ? 'ş' : ''));
      expect(gunzipSync(z.gzip(runs)).toString()).toBe(runs.join(''));
    }
  });

  it('deflates a repeating run once and sends the guest\'s values stored', () => {
    const z = new GzipRuns();
    const first = z.gzip([STYLES, 'mac=AA:BB:CC:DD:EE:01', SCRIPT]);
    const kept = z.keptBytes;
    const second = z.gzip([STYLES, 'mac=AA:BB:CC:DD:EE:02', SCRIPT]);
    expect(z.keptBytes).toBe(kept); // nothing new kept: both runs were known
    expect(gunzipSync(second).toString()).toBe(`${STYLES}mac=AA:BB:CC:DD:EE:02${SCRIPT}`);
    // The value is stored: the two pages differ in one byte of it, and have the same length.
    expect(second.length).toBe(first.length);
    expect(second.toString('latin1')).toContain('mac=AA:BB:CC:DD:EE:02');
    expect(second.length).toBeLessThan((STYLES.length + SCRIPT.length) / 10);
  });

  it('keeps what its budget allows, the oldest runs going first, and still answers a run larger than the budget', () => {
    const z = new GzipRuns(20_000);
    for (let i = 0; i < 50; i++) {
      const run = `${i} ${STYLES}`;
      expect(gunzipSync(z.gzip([run])).toString()).toBe(run);
      expect(z.keptBytes).toBeLessThanOrEqual(20_000);
    }
    expect(z.keptBytes).toBeGreaterThan(0);
    const huge = SCRIPT.repeat(4);
    expect(gunzipSync(z.gzip([huge])).toString()).toBe(huge);
    expect(z.keptBytes).toBeLessThanOrEqual(20_000);
  });
});

describe('renderRuns', () => {
  const nodes = compileTemplate('<p>{{title}}</p>{{#forms}}<input value="{{mac}}">{{/forms}}<a href="{{url}}">{{{raw}}}</a>');
  const view = { title: 'Kafe & Bar', forms: true, mac: '"x"', url: '?a=1&b=2', raw: '<b>' };

  it('breaks at the per-request values, escaped as the page carries them, and joins to the template\'s render', () => {
    const runs = renderRuns(nodes, view, new Set(['mac', 'url']));
    expect(runs).toEqual(['<p>Kafe &amp; Bar</p><input value="', '&quot;x&quot;', '"><a href="', '?a=1&amp;b=2', '"><b></a>']);
    expect(runs.join('')).toBe(renderTemplate(nodes, view));
  });

  it('makes a long raw value a run of its own', () => {
    const long = 'x'.repeat(2000);
    const runs = renderRuns(compileTemplate('<style>{{{css}}}</style><p>{{mac}}</p>'), { css: long, mac: 'm' }, new Set(['mac']));
    expect(runs).toEqual(['<style>', '', long, '', '</style><p>', 'm', '</p>']);
  });

  it('leaves a per-request value in a hidden section out', () => {
    expect(renderRuns(nodes, { ...view, forms: false }, new Set(['mac']))).toEqual([renderTemplate(nodes, { ...view, forms: false })]);
  });
});
