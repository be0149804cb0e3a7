import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

const run = promisify(execFile);
// jsqr is CommonJS whose types declare an ES default export: at run time the module itself is the function.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;

/** Where the sheets and their page images go (test-artifacts/ is git-ignored; look at them). */
export const SHEETS = join('test-artifacts', 'voucher-sheets');

/** GET a sheet with an API key: the status, headers and the whole body (a test's sheets are small). */
export async function getSheet(base: string, apiKey: string, query: Record<string, string>, path = '/v1/vouchers/pdf'): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(`${base}${path}?${new URLSearchParams(query)}`, { headers: { 'x-api-key': apiKey } });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** Saves a PDF under SHEETS as `<name>.pdf` and returns its path. */
export function savePdf(name: string, pdf: Buffer): string {
  mkdirSync(SHEETS, { recursive: true });
  const file = join(SHEETS, `${name}.pdf`);
  writeFileSync(file, pdf);
  return file;
}

/** One page as PNG with Debian's pdftoppm, saved beside the PDF as `<name>-p<page>.png`. */
export async function pageImage(pdfFile: string, page: number, dpi = 150): Promise<PNG> {
  const prefix = pdfFile.replace(/\.pdf$/, `-p${page}`);
  await run('pdftoppm', ['-r', String(dpi), '-png', '-singlefile', '-f', String(page), '-l', String(page), pdfFile, prefix]);
  return PNG.sync.read(readFileSync(`${prefix}.png`));
}

/** The document's text with pdftotext (layout kept), all pages. */
export async function pdfText(pdfFile: string): Promise<string> {
  return (await run('pdftotext', ['-layout', '-enc', 'UTF-8', pdfFile, '-'])).stdout;
}

/** The QR code's text in a rectangle of the image (pixels; default the whole image), or null when none is found. */
export function decodeQr(png: PNG, box?: { x: number; y: number; w: number; h: number }): string | null {
  const b = box ?? { x: 0, y: 0, w: png.width, h: png.height };
  const out = new Uint8ClampedArray(b.w * b.h * 4);
  for (let row = 0; row < b.h; row++) {
    const from = ((b.y + row) * png.width + b.x) * 4;
    out.set(png.data.subarray(from, from + b.w * 4), row * b.w * 4);
  }
  return jsQR(out, b.w, b.h)?.data ?? null;
}

/** The pixel box of an A4 sheet's cell (2 columns x 4 rows inside a 20 pt margin) at `dpi`. */
export function a4Cell(index: number, dpi = 150): { x: number; y: number; w: number; h: number } {
  const s = dpi / 72;
  const cw = (595.28 - 40) / 2;
  const ch = (841.89 - 40) / 4;
  return { x: Math.floor((20 + (index % 2) * cw) * s), y: Math.floor((20 + Math.floor(index / 2) * ch) * s), w: Math.floor(cw * s), h: Math.floor(ch * s) };
}
