import type { MessagePort } from 'node:worker_threads';
import { loadPdfFonts, type PdfFonts } from '../workers/pdf-fonts.js';
import { streamPdf } from '../workers/pdf-stream.js';
import { drawReport, newReportDocument, type ReportPdfJob } from './report-pdf-draw.js';

/** A report task: the figures in plain data and the port its bytes go back on. */
export interface ReportPdfTask extends ReportPdfJob {
  port: MessagePort;
}

// Read on the thread's first task and kept for the next ones; they die with the thread at its idle timeout.
let fonts: PdfFonts | null = null;

/**
 * The piscina task that draws a PDF report off the request thread (layout,
 * charts, font subsetting, deflate); the bytes stream back page by page
 * (engine/workers/pdf-stream.ts).
 */
export default async function drawReportPdf(task: ReportPdfTask): Promise<void> {
  const { port, ...job } = task;
  fonts ??= loadPdfFonts();
  const f = fonts;
  await streamPdf(port, () => newReportDocument(job, f), (doc, afterPage) => drawReport(doc, job, afterPage));
}
