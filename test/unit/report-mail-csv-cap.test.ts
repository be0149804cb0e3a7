import { describe, expect, it } from 'vitest';
import { csvUpTo } from '../../engine/schedules/report-mail.js';

async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p, 'utf8');
}

describe('the session CSV a scheduled mail attaches, capped (REPORT_MAIL_MAX_CSV_BYTES)', () => {
  it('is whole when it ends by the cap, exactly at it included', async () => {
    const csv = 'a,b\n1,2\n3,4\n';
    expect(await csvUpTo(chunks('a,b\n', '1,2\n', '3,4\n'), csv.length)).toEqual({ bytes: Buffer.from(csv), whole: true, rows: 0 });
  });

  it('past the cap keeps the whole rows before it, never a line break inside a quoted field, and ends the source', async () => {
    let ended = false;
    async function* source(): AsyncGenerator<Buffer> {
      try {
        yield Buffer.from('id,ssid\n1,plain\n2,"two\nlines"\n');
        yield Buffer.from('3,"say ""hi""\n"\n4,last\n');
      } finally {
        ended = true;
      }
    }
    // The cap falls inside row 3's quoted field: its line break there is not a row's end.
    const cap = 'id,ssid\n1,plain\n2,"two\nlines"\n3,"say ""hi""\n'.length;
    const r = await csvUpTo(source(), cap);
    expect(r.whole).toBe(false);
    expect(r.bytes.toString('utf8')).toBe('id,ssid\n1,plain\n2,"two\nlines"\n');
    expect(r.rows).toBe(2);
    expect(ended).toBe(true);
  });
});
