import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { SheetJob } from '../../engine/vouchers/voucher-sheet-draw.js';
import { PdfPrinter } from '../../engine/workers/pdf-printer.js';

/** A document far larger than the credit window (8 x 64 KB): its drawing waits for a reader that does not read. */
function bigSheet(): SheetJob {
  const vouchers = Array.from({ length: 4000 }, (_, i) => ({
    code: `BIG-${String(i).padStart(6, '0')}`, url: `http://127.0.0.1/portal?hotspot_id=hsp_x&code=BIG-${i}`, lines: ['Up to 3 uses', 'Use by 31 Dec 2026'],
  }));
  return { layout: 'a4', lang: 'en', message: null, logo: null, vouchers };
}

/**
 * The shared PDF printer (engine/workers/pdf-printer.ts) the voucher sheets
 * and the PDF report draw with, at their numbers (1 thread, 3 waiting): a
 * fifth document while four are taken is refused with service_unavailable
 * before any byte, and a place freed is a place taken again. Runs the built
 * voucher sheet worker (dist/).
 */
describe('PDF printer', () => {
  it('draws one document at a time, lets 3 wait, refuses the next with a 503, and takes one again once a place is free', async () => {
    const printer = new PdfPrinter<SheetJob>({ worker: ['engine', 'vouchers', 'voucher-sheet-worker.js'], what: 'The test printer', log: pino({ level: 'silent' }), threads: 1, queued: 3 });
    try {
      const job = bigSheet();
      // The first one's first block proves it holds the thread; unread, it stays there (the credit window).
      const first = printer.print(job, {});
      expect(((await first.next()).value as Buffer).subarray(0, 5).toString()).toBe('%PDF-');
      const waiting = [1, 2, 3].map(() => printer.print(job, {}));
      const refused = printer.print(job, {});
      await expect(refused.next()).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
      // The second's reader leaves before reading a byte: its drawing is cancelled all the same (it
      // would otherwise hold the thread, waiting for credits nobody sends).
      await waiting[0]!.return!(undefined);
      // The first's reader goes away: its drawing is cancelled, the next waiting one gets the thread.
      await first.return!(undefined);
      expect(((await waiting[1]!.next()).value as Buffer).subarray(0, 5).toString()).toBe('%PDF-');
      await waiting[1]!.return!(undefined);
      expect(((await waiting[2]!.next()).value as Buffer).subarray(0, 5).toString()).toBe('%PDF-');
      await waiting[2]!.return!(undefined);
      // Every place free again: four more are taken.
      const again = [1, 2, 3, 4].map(() => printer.print(job, {}));
      expect(((await again[0]!.next()).value as Buffer).subarray(0, 5).toString()).toBe('%PDF-');
      for (const a of again) await a.return!(undefined);
    } finally {
      await printer.close();
    }
  });
});
