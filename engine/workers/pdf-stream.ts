import type { MessagePort } from 'node:worker_threads';
import { PortSink, ProducerCancelled } from './port-stream.js';

/**
 * The body of a piscina task that draws a PDF off the request thread and
 * streams it back (the voucher sheets, the PDF report). pdfkit emits bytes
 * as it goes; they leave in blocks with a credit window (port-stream.ts),
 * and `draw` calls `afterPage` after each page, where the drawing waits
 * until the reader has taken enough: memory holds about a page, never the
 * document. A reader that went away ends the drawing quietly.
 */
export async function streamPdf(
  port: MessagePort, newDocument: () => PDFKit.PDFDocument,
  draw: (doc: PDFKit.PDFDocument, afterPage: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const sink = new PortSink(port);
  try {
    const doc = newDocument();
    const ended = new Promise<void>((resolve, reject) => {
      doc.on('end', resolve);
      doc.on('error', reject);
    });
    doc.on('data', (chunk: Buffer) => sink.write(chunk));
    // pdfkit hands its bytes over on the next turn of the loop, not inside the drawing calls: the
    // pause after each page lets them out before the next page is drawn.
    await draw(doc, async () => {
      await new Promise<void>((r) => setImmediate(r));
      await sink.drain();
    });
    await ended;
    await sink.end();
  } catch (err) {
    if (!(err instanceof ProducerCancelled)) sink.fail(err);
  }
}
