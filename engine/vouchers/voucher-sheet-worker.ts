import type { MessagePort } from 'node:worker_threads';
import { PortSink, ProducerCancelled } from '../workers/port-stream.js';
import { drawSheets, loadSheetFonts, newSheetDocument, type SheetFonts, type SheetJob } from './voucher-sheet-draw.js';

/** A sheet task: the document's plain data and the port its bytes go back on. */
export interface SheetTask extends SheetJob {
  port: MessagePort;
}

// Read on the thread's first task and kept for the next ones (piscina keeps a
// thread for many tasks); they die with the thread at its idle timeout.
let fonts: SheetFonts | null = null;

/**
 * The piscina task that draws a voucher document off the request thread:
 * QR encoding, text layout, font subsetting and deflate all happen here.
 * pdfkit emits bytes as it goes; they leave in blocks with a credit window
 * (engine/workers/port-stream.ts), and the drawing waits after each page
 * until the reader has taken enough, so memory holds about a page, never
 * the document.
 */
export default async function drawVoucherSheet(task: SheetTask): Promise<void> {
  const { port, ...job } = task;
  const sink = new PortSink(port);
  try {
    fonts ??= loadSheetFonts();
    const doc = newSheetDocument(job, fonts);
    const ended = new Promise<void>((resolve, reject) => {
      doc.on('end', resolve);
      doc.on('error', reject);
    });
    doc.on('data', (chunk: Buffer) => sink.write(chunk));
    // pdfkit hands its bytes over on the next turn of the loop, not inside the drawing calls: the
    // pause after each page lets them out before the next page is drawn.
    await drawSheets(doc, job, async () => {
      await new Promise<void>((r) => setImmediate(r));
      await sink.drain();
    });
    await ended;
    await sink.end();
  } catch (err) {
    if (!(err instanceof ProducerCancelled)) sink.fail(err);
  }
}
