import { inflateSync } from 'node:zlib';
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import { registerPdfFonts, type PdfFonts } from '../workers/pdf-fonts.js';
import { SHEET_WORDS, type SheetLang, type SheetVoucher } from './voucher-sheet-text.js';

export const SHEET_LAYOUTS = ['a4', 'receipt'] as const;
export type SheetLayout = (typeof SHEET_LAYOUTS)[number];

/** What a document is made of: plain data, so it crosses to a worker thread as is. */
export interface SheetJob {
  layout: SheetLayout;
  lang: SheetLang;
  /** The tenant's optional text on every voucher (already length-checked). */
  message: string | null;
  /** The hotspot's logo, PNG or JPEG bytes (the only formats pdfkit embeds); null: none. */
  logo: Uint8Array | null;
  vouchers: SheetVoucher[];
}

const MM = 72 / 25.4;
const A4 = { w: 595.28, h: 841.89, margin: 20, cols: 2, rows: 4 };
/** An 80 mm roll prints about 72 mm; the rest is the printer's own margin. */
const RECEIPT = { w: 80 * MM, margin: 6 * MM };
const CODE_MAX_PT = { a4: 32, receipt: 30 };
const CODE_MIN_PT = 11;
const INK = '#111111';
const MUTED = '#444444';
const CUT = '#888888';

/** Vouchers per A4 page (the grid). */
export const A4_PER_PAGE = A4.cols * A4.rows;

/** A new document, fonts registered, nothing drawn yet; pipe or listen to it before drawing. */
export function newSheetDocument(job: SheetJob, fonts: PdfFonts): PDFKit.PDFDocument {
  const doc = new PDFDocument({
    autoFirstPage: false, margin: 0, compress: true, lang: job.lang === 'tr' ? 'tr-TR' : 'en-GB',
    info: { Title: SHEET_WORDS[job.lang].title, Producer: 'guest-wifi-engine', Creator: 'guest-wifi-engine' },
  });
  registerPdfFonts(doc, fonts);
  return doc;
}

/**
 * Draws every voucher of the job, page after page, and ends the document.
 * `afterPage` runs after each page is complete (the worker waits there for
 * the reader, so a slow client slows the drawing instead of filling memory).
 */
export async function drawSheets(doc: PDFKit.PDFDocument, job: SheetJob, afterPage: () => Promise<void> = async () => undefined): Promise<void> {
  const logo = openLogo(doc, job.logo);
  if (job.layout === 'a4') {
    for (let i = 0; i < job.vouchers.length; i += A4_PER_PAGE) {
      doc.addPage({ size: [A4.w, A4.h], margin: 0 });
      const page = job.vouchers.slice(i, i + A4_PER_PAGE);
      const cw = (A4.w - 2 * A4.margin) / A4.cols;
      const ch = (A4.h - 2 * A4.margin) / A4.rows;
      page.forEach((v, k) => drawA4Cell(doc, job, logo, v, A4.margin + (k % A4.cols) * cw, A4.margin + Math.floor(k / A4.cols) * ch, cw, ch));
      cutLines(doc, cw, ch, Math.ceil(page.length / A4.cols));
      await afterPage();
    }
  } else {
    for (const v of job.vouchers) {
      drawReceipt(doc, job, logo, v);
      await afterPage();
    }
  }
  doc.end();
}

/** Dashed lines along every cell edge of the rows in use. */
function cutLines(doc: PDFKit.PDFDocument, cw: number, ch: number, rows: number): void {
  doc.save().lineWidth(0.5).strokeColor(CUT).dash(4, { space: 3 });
  const x0 = A4.margin;
  const y0 = A4.margin;
  for (let r = 0; r <= rows; r++) doc.moveTo(x0, y0 + r * ch).lineTo(x0 + A4.cols * cw, y0 + r * ch).stroke();
  for (let c = 0; c <= A4.cols; c++) doc.moveTo(x0 + c * cw, y0).lineTo(x0 + c * cw, y0 + rows * ch).stroke();
  doc.undash().restore();
}

/** The largest size up to `max` at which the code fits `width` on one line in the mono face. */
function codeSize(doc: PDFKit.PDFDocument, code: string, width: number, max: number): number {
  doc.font('mono').fontSize(max);
  const w = doc.widthOfString(code);
  return w <= width ? max : Math.max(CODE_MIN_PT, Math.floor((max * width) / w));
}

/**
 * An image pdfkit has read once (doc.openImage): drawn again by reference, so
 * the document holds the logo once however many vouchers show it (pdfkit
 * caches only images named by a path; a Buffer would be embedded each time).
 */
type OpenedImage = { width: number; height: number };

/**
 * The logo read once for the document; null when there is none, or when its
 * bytes are no readable PNG/JPEG (a corrupt upload): the sheet is printed
 * without it rather than not at all.
 */
export function openLogo(doc: PDFKit.PDFDocument, bytes: Uint8Array | null): OpenedImage | null {
  if (!bytes) return null;
  try {
    const image = (doc as unknown as { openImage(src: Buffer): OpenedImage & { imgData?: Buffer } }).openImage(Buffer.from(bytes));
    // A PNG's pixels are inflated only when embedded, asynchronously, where a broken stream would be an uncaught
    // error: inflated once here instead (a logo is small), so a corrupt one is left out now.
    if (image.imgData) inflateSync(image.imgData);
    return image.width > 0 && image.height > 0 ? image : null;
  } catch {
    return null;
  }
}

/** doc.image with an opened image (pdfkit takes one in place of the bytes; its types do not say so). */
function drawLogo(doc: PDFKit.PDFDocument, logo: OpenedImage, x: number, y: number, options: PDFKit.Mixins.ImageOption): void {
  doc.image(logo as unknown as Buffer, x, y, options);
}

function drawA4Cell(doc: PDFKit.PDFDocument, job: SheetJob, logo: OpenedImage | null, v: SheetVoucher, x: number, y: number, w: number, h: number): void {
  const words = SHEET_WORDS[job.lang];
  const pad = 12;
  const inner = w - 2 * pad;
  let top = y + pad;
  if (logo) {
    // Beside the title, above the code line (which may span the whole cell): 16 pt tall at most.
    drawLogo(doc, logo, x + w - pad - 90, top - 2, { fit: [90, 16], align: 'right' });
  }
  doc.fillColor(INK).font('bold').fontSize(11).text(words.title, x + pad, top, { width: inner - 96, lineBreak: false });
  top += 20;
  const size = codeSize(doc, v.code, inner, CODE_MAX_PT.a4);
  doc.font('mono').fontSize(size).fillColor(INK).text(v.code, x + pad, top, { width: inner, characterSpacing: size >= 20 ? 1 : 0 });
  doc.font('sans').fontSize(7.5).fillColor(MUTED).text(words.scan, x + pad, doc.y + 2, { width: inner, height: 10, ellipsis: true });
  top = doc.y + 4;
  // The message spans the cell's foot (two lines at most); the QR code and the terms share what is above it.
  const msgH = job.message ? Math.min(doc.font('oblique').fontSize(8.5).heightOfString(job.message, { width: inner }), 22) : 0;
  const foot = y + h - pad - msgH - (msgH ? 4 : 0);
  const qr = Math.min(94, foot - top);
  drawQr(doc, v.url, x + w - pad - qr, top, qr);
  const textW = inner - qr - 8;
  doc.font('sans').fontSize(8.5).fillColor(INK)
    .text(v.lines.join('\n'), x + pad, top, { width: textW, height: Math.max(10, foot - top), ellipsis: true });
  if (job.message) {
    doc.font('oblique').fontSize(8.5).fillColor(INK).text(job.message, x + pad, y + h - pad - msgH, { width: inner, height: msgH, ellipsis: true });
  }
}

function drawReceipt(doc: PDFKit.PDFDocument, job: SheetJob, logo: OpenedImage | null, v: SheetVoucher): void {
  const words = SHEET_WORDS[job.lang];
  const x = RECEIPT.margin;
  const inner = RECEIPT.w - 2 * RECEIPT.margin;
  const qr = Math.min(150, inner);
  const size = codeSize(doc, v.code, inner, CODE_MAX_PT.receipt);
  // Measure first: each voucher is one page exactly as tall as its content, so a roll printer feeds no blank paper.
  const measure = (font: string, pt: number, s: string): number => doc.font(font).fontSize(pt).heightOfString(s, { width: inner, align: 'center' });
  const logoH = logo ? 40 : 0;
  const height = RECEIPT.margin + logoH + measure('bold', 12, words.title) + 6 + measure('mono', size, v.code) + 8 + qr + 6
    + measure('sans', 8, words.scan) + 4 + v.lines.reduce((s, l) => s + measure('sans', 9.5, l), 0)
    + (job.message ? 6 + measure('oblique', 9.5, job.message) : 0) + RECEIPT.margin + 8;
  doc.addPage({ size: [RECEIPT.w, height], margin: 0 });
  let top = RECEIPT.margin;
  if (logo) {
    drawLogo(doc, logo, x, top, { fit: [inner, 34], align: 'center' });
    top += logoH;
  }
  doc.fillColor(INK).font('bold').fontSize(12).text(words.title, x, top, { width: inner, align: 'center' });
  doc.font('mono').fontSize(size).text(v.code, x, doc.y + 6, { width: inner, align: 'center' });
  top = doc.y + 8;
  drawQr(doc, v.url, x + (inner - qr) / 2, top, qr);
  doc.font('sans').fontSize(8).fillColor(MUTED).text(words.scan, x, top + qr + 6, { width: inner, align: 'center' });
  doc.moveDown(0.3).fontSize(9.5).fillColor(INK);
  for (const line of v.lines) doc.text(line, x, doc.y, { width: inner, align: 'center' });
  if (job.message) doc.moveDown(0.5).font('oblique').text(job.message, x, doc.y, { width: inner, align: 'center' });
  // Where to tear or cut: the bottom edge of the voucher.
  doc.save().lineWidth(0.5).strokeColor(CUT).dash(4, { space: 3 }).moveTo(0, height - 2).lineTo(RECEIPT.w, height - 2).stroke().undash().restore();
}

/**
 * The QR code as vector squares (crisp at any printer resolution), with the
 * four-module quiet zone the standard asks for inside `size`. Error
 * correction M: a crease or a smudge on paper still scans.
 */
function drawQr(doc: PDFKit.PDFDocument, text: string, x: number, y: number, size: number): void {
  // One byte-mode segment: a URL is bytes anyway, and the mode search costs more than the encoding.
  const qr = QRCode.create([{ data: Buffer.from(text), mode: 'byte' }], { errorCorrectionLevel: 'M' });
  const n = qr.modules.size;
  const cell = size / (n + 8);
  const ox = x + 4 * cell;
  const oy = y + 4 * cell;
  const f = (v: number): string => v.toFixed(2);
  const ops: string[] = [];
  for (let r = 0; r < n; r++) {
    // One rectangle per run of dark modules: far fewer path operators than one per module.
    for (let c = 0; c < n;) {
      if (!qr.modules.data[r * n + c]) { c++; continue; }
      let e = c;
      while (e < n && qr.modules.data[r * n + e]) e++;
      ops.push(`${f(ox + c * cell)} ${f(oy + r * cell)} ${f((e - c) * cell)} ${f(cell)} re`);
      c = e;
    }
  }
  // Raw path operators in pdfkit's user space (what doc.rect writes), one fill for the whole symbol.
  doc.save().fillColor('#000000');
  doc.addContent(ops.join('\n'));
  doc.fill().restore();
}
