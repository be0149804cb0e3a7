/**
 * The PDF report's charts, drawn as vectors with pdfkit's own paths: no
 * browser, no canvas, no image. Each takes a box in points and plain numbers.
 */

export const INK = '#1a1a1a';
export const MUTED = '#5a5a5a';
export const RULE = '#c8c8c8';
export const ACCENT = '#1f5fa8';
export const ACCENT_SOFT = '#9dbbe0';
export const HIGHLIGHT = '#d9822b';

export interface Box { x: number; y: number; w: number; h: number }

/**
 * `text` cut with an ellipsis to `width` in the current font (pdfkit's own
 * `ellipsis` still wraps a long word to a second line without a height).
 */
export function fit(doc: PDFKit.PDFDocument, text: string, width: number): string {
  if (doc.widthOfString(text) <= width) return text;
  let n = text.length;
  while (n > 1 && doc.widthOfString(`${text.slice(0, n)}…`) > width) n--;
  return `${text.slice(0, n).trimEnd()}…`;
}

/** A round top for an axis: 1, 2 or 5 times a power of ten, at least `max` (and at least 1). */
export function niceMax(max: number): number {
  if (max <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/** A chart's title above its box. */
export function chartTitle(doc: PDFKit.PDFDocument, title: string, x: number, y: number): void {
  doc.font('bold').fontSize(11).fillColor(INK).text(title, x, y, { lineBreak: false });
}

/**
 * Vertical bars, one per value, over a value axis with three grid lines;
 * `labels` are drawn under the bars whose index `labelAt` accepts;
 * `highlight` (an index) is drawn in the highlight colour.
 */
export function columnChart(
  doc: PDFKit.PDFDocument, box: Box, values: number[], labels: string[], fmt: (n: number) => string,
  labelAt: (i: number) => boolean, highlight: number | null = null,
): void {
  const axisW = 42;
  const labelH = 14;
  const plot = { x: box.x + axisW, y: box.y, w: box.w - axisW, h: box.h - labelH };
  const top = niceMax(Math.max(0, ...values));
  doc.font('sans').fontSize(7);
  for (const f of [0, 0.5, 1]) {
    const y = plot.y + plot.h - f * plot.h;
    doc.moveTo(plot.x, y).lineTo(plot.x + plot.w, y).lineWidth(0.5).strokeColor(RULE).stroke();
    doc.fillColor(MUTED).text(fmt(top * f), box.x, y - 3.5, { width: axisW - 4, align: 'right', lineBreak: false });
  }
  const n = Math.max(1, values.length);
  const slot = plot.w / n;
  const gap = slot > 4 ? slot * 0.2 : 0;
  values.forEach((v, i) => {
    const h = (v / top) * plot.h;
    if (h > 0) doc.rect(plot.x + i * slot + gap / 2, plot.y + plot.h - h, Math.max(0.4, slot - gap), h).fill(i === highlight ? HIGHLIGHT : ACCENT);
  });
  doc.fillColor(MUTED).fontSize(7);
  values.forEach((_, i) => {
    if (!labelAt(i)) return;
    // Centred under its bar, but kept inside the chart at both ends (the first and last day of a year).
    const cx = plot.x + i * slot + slot / 2;
    const [x, align] = cx - 30 < plot.x ? [plot.x, 'left' as const] : cx + 30 > plot.x + plot.w ? [plot.x + plot.w - 60, 'right' as const] : [cx - 30, 'center' as const];
    doc.text(labels[i] ?? '', x, plot.y + plot.h + 3, { width: 60, align, lineBreak: false });
  });
}

/**
 * Horizontal bars with their label on the left and count and share on the
 * right: the methods and the device types (a part-of-a-whole read at a glance
 * without a legend, unlike a pie).
 */
export function barList(doc: PDFKit.PDFDocument, box: Box, rows: { label: string; value: number; text: string }[]): void {
  const labelW = box.w * 0.42;
  const valueW = 64;
  const barW = box.w - labelW - valueW - 8;
  const rowH = Math.min(22, box.h / Math.max(1, rows.length));
  const top = Math.max(1, ...rows.map((r) => r.value));
  rows.forEach((r, i) => {
    const y = box.y + i * rowH;
    doc.font('sans').fontSize(8).fillColor(INK);
    doc.text(fit(doc, r.label, labelW - 6), box.x, y + rowH / 2 - 4, { lineBreak: false });
    doc.rect(box.x + labelW, y + rowH * 0.2, barW, rowH * 0.6).fill('#eef2f7');
    const w = (r.value / top) * barW;
    if (w > 0) doc.rect(box.x + labelW, y + rowH * 0.2, Math.max(0.8, w), rowH * 0.6).fill(ACCENT);
    doc.font('sans').fontSize(8).fillColor(MUTED).text(r.text, box.x + labelW + barW + 4, y + rowH / 2 - 4, { width: valueW, align: 'right', lineBreak: false });
  });
}
