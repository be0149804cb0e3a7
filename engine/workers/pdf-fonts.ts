import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Fonts from the dejavu-fonts-ttf package, embedded (subset) in every PDF the engine draws: nothing is fetched. */
export interface PdfFonts { sans: Buffer; bold: Buffer; oblique: Buffer; mono: Buffer }

/**
 * Reads the fonts (once per worker thread: callers keep them). DejaVu Sans
 * carries ş ğ İ ı ç ö ü; DejaVu Sans Mono Bold draws 0 with a slashed dot,
 * 1, I and l with distinct serifs, so a guest copying a voucher code tells
 * them apart. Used by the voucher sheets and the PDF report.
 */
export function loadPdfFonts(): PdfFonts {
  // Resolved as a module is, so the fonts are found wherever npm put the package (a run-time dependency).
  const dir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');
  const f = (name: string): Buffer => readFileSync(join(dir, name));
  return { sans: f('DejaVuSans.ttf'), bold: f('DejaVuSans-Bold.ttf'), oblique: f('DejaVuSans-Oblique.ttf'), mono: f('DejaVuSansMono-Bold.ttf') };
}

/** Registers the fonts under the names the drawing code uses: sans, bold, oblique, mono. */
export function registerPdfFonts(doc: PDFKit.PDFDocument, fonts: PdfFonts): void {
  doc.registerFont('sans', fonts.sans);
  doc.registerFont('bold', fonts.bold);
  doc.registerFont('oblique', fonts.oblique);
  doc.registerFont('mono', fonts.mono);
}
