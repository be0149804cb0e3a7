import type { MessagePort } from 'node:worker_threads';
import { loadPdfFonts, type PdfFonts } from '../workers/pdf-fonts.js';
import { streamPdf } from '../workers/pdf-stream.js';
import { drawSheets, newSheetDocument, type SheetJob } from './voucher-sheet-draw.js';

/** A sheet task: the document's plain data and the port its bytes go back on. */
export interface SheetTask extends SheetJob {
  port: MessagePort;
}

// Read on the thread's first task and kept for the next ones (piscina keeps a
// thread for many tasks); they die with the thread at its idle timeout.
let fonts: PdfFonts | null = null;

/**
 * The piscina task that draws a voucher document off the request thread:
 * QR encoding, text layout, font subsetting and deflate all happen here;
 * the bytes stream back page by page (engine/workers/pdf-stream.ts).
 */
export default async function drawVoucherSheet(task: SheetTask): Promise<void> {
  const { port, ...job } = task;
  fonts ??= loadPdfFonts();
  const f = fonts;
  await streamPdf(port, () => newSheetDocument(job, f), (doc, afterPage) => drawSheets(doc, job, afterPage));
}
