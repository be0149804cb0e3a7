import PDFDocument from 'pdfkit';
import { registerPdfFonts, type PdfFonts } from '../workers/pdf-fonts.js';
import { ACCENT, barList, chartTitle, columnChart, fit, INK, MUTED, RULE, type Box } from './report-pdf-charts.js';
import type { ReportFigures } from './report-document.js';
import {
  bytes, count, dateInWords, hourText, instantInWords, rangeInWords, REPORT_WORDS, reportNotes, share, shortDate, type ReportPdfLang,
} from './report-pdf-text.js';

export type { ReportPdfLang } from './report-pdf-text.js';

/** What a report is made of: plain data, so it crosses to a worker thread as is. */
export interface ReportPdfJob {
  lang: ReportPdfLang;
  /** The zone the cover's "generated" time is shown in (the venue's, or the tenant's for several). */
  timeZone: string;
  from: string;
  to: string;
  days: number;
  /** ms since the epoch. */
  generatedAt: number;
  tenantName: string;
  /** The venues' names (none: the tenant has no venue yet; its name stands on the cover). */
  sites: string[];
  figures: ReportFigures;
}

const PAGE = { w: 595.28, h: 841.89, margin: 48 };
const CONTENT_W = PAGE.w - 2 * PAGE.margin;
const FOOTER_Y = PAGE.h - 32;
const ROW_H = 15;

/** A new document, fonts registered, nothing drawn yet; listen to it before drawing. */
export function newReportDocument(job: ReportPdfJob, fonts: PdfFonts): PDFKit.PDFDocument {
  const w = REPORT_WORDS[job.lang];
  const doc = new PDFDocument({
    autoFirstPage: false, margin: 0, compress: true, lang: job.lang === 'tr' ? 'tr-TR' : 'en-GB',
    info: { Title: `${w.title}: ${siteLine(job)}, ${rangeInWords(job.lang, job.from, job.to)}`, Producer: 'guest-wifi-engine', Creator: 'guest-wifi-engine' },
  });
  registerPdfFonts(doc, fonts);
  return doc;
}

/** The venues in one line: up to three names, then "and N more". */
function siteLine(job: ReportPdfJob): string {
  if (job.sites.length === 0) return job.tenantName;
  const shown = job.sites.slice(0, 3).join(', ');
  return job.sites.length > 3 ? `${shown} ${REPORT_WORDS[job.lang].more(job.sites.length - 3)}` : shown;
}

/**
 * Draws the whole report and ends the document: page 1 the cover, the KPI
 * cards and the notes; page 2 the charts; then the tables (the per-day one
 * runs over as many pages as it needs). An empty period is page 1 alone,
 * saying there was no session. `afterPage` runs after each page (the worker
 * waits there for the reader).
 */
export async function drawReport(doc: PDFKit.PDFDocument, job: ReportPdfJob, afterPage: () => Promise<void> = async () => undefined): Promise<void> {
  let page = 0;
  const newPage = (): void => {
    doc.addPage({ size: [PAGE.w, PAGE.h], margin: 0 });
    page++;
    footer(doc, job, page);
  };
  newPage();
  let y = cover(doc, job);
  y = kpiCards(doc, job, y + 24);
  notes(doc, job, y + 28);
  await afterPage();
  if (job.figures.sessions === 0) {
    doc.end();
    return;
  }
  newPage();
  charts(doc, job);
  await afterPage();
  newPage();
  y = smallTables(doc, job, PAGE.margin);
  y += 24;
  // The per-day table: a new page whenever the next row would reach the footer.
  const w = REPORT_WORDS[job.lang];
  const cols = dayColumns(job.lang);
  doc.font('bold').fontSize(12).fillColor(INK).text(w.tables.daily, PAGE.margin, y, { lineBreak: false });
  y = tableHeader(doc, cols, y + 20);
  for (const d of job.figures.daily) {
    if (y + ROW_H > FOOTER_Y - 16) {
      await afterPage();
      newPage();
      y = tableHeader(doc, cols, PAGE.margin);
    }
    y = tableRow(doc, cols, [dateInWords(job.lang, d.date, true), count(job.lang, d.sessions),
      d.sessions > 0 ? w.minutes(d.avgDurationMinutes) : '–', bytes(job.lang, d.bytesIn), bytes(job.lang, d.bytesOut)], y);
  }
  await afterPage();
  doc.end();
}

function footer(doc: PDFKit.PDFDocument, job: ReportPdfJob, page: number): void {
  const w = REPORT_WORDS[job.lang];
  doc.moveTo(PAGE.margin, FOOTER_Y - 6).lineTo(PAGE.w - PAGE.margin, FOOTER_Y - 6).lineWidth(0.5).strokeColor(RULE).stroke();
  doc.font('sans').fontSize(7.5).fillColor(MUTED);
  doc.text(fit(doc, `${siteLine(job)} · ${rangeInWords(job.lang, job.from, job.to)}`, CONTENT_W - 70), PAGE.margin, FOOTER_Y, { lineBreak: false });
  doc.text(w.page(page), PAGE.w - PAGE.margin - 60, FOOTER_Y, { width: 60, align: 'right', lineBreak: false });
}

/** The cover block: a band with the title, the venues, the period in words, when it was made. Returns the y below it. */
function cover(doc: PDFKit.PDFDocument, job: ReportPdfJob): number {
  const w = REPORT_WORDS[job.lang];
  doc.rect(0, 0, PAGE.w, 150).fill(ACCENT);
  doc.font('bold').fontSize(26).fillColor('#ffffff').text(w.title, PAGE.margin, 56, { width: CONTENT_W, lineBreak: false });
  doc.font('sans').fontSize(12).fillColor('#e6eef8');
  doc.text(fit(doc, job.tenantName, CONTENT_W), PAGE.margin, 96, { lineBreak: false });
  let y = 178;
  const field = (label: string, value: string, size: number): void => {
    doc.font('sans').fontSize(9).fillColor(MUTED).text(label.toLocaleUpperCase(w.locale), PAGE.margin, y, { lineBreak: false });
    doc.font('bold').fontSize(size).fillColor(INK);
    const h = doc.heightOfString(value, { width: CONTENT_W });
    doc.text(value, PAGE.margin, y + 13, { width: CONTENT_W });
    y += 13 + h + 12;
  };
  const sites = job.sites.length === 0 ? [job.tenantName] : job.sites;
  field(sites.length > 1 ? w.venues : w.venue, sites.join(', '), sites.length > 3 ? 12 : 18);
  field(w.period, `${rangeInWords(job.lang, job.from, job.to)} (${w.days(job.days)})`, 14);
  doc.font('sans').fontSize(9).fillColor(MUTED)
    .text(`${w.generated}: ${instantInWords(job.lang, job.generatedAt, job.timeZone)} · ${w.zone}: ${job.timeZone}`, PAGE.margin, y, { width: CONTENT_W, lineBreak: false });
  return y + 12;
}

/** Six cards in two rows of three. Returns the y below them. */
function kpiCards(doc: PDFKit.PDFDocument, job: ReportPdfJob, top: number): number {
  const w = REPORT_WORDS[job.lang];
  const f = job.figures;
  doc.font('bold').fontSize(12).fillColor(INK).text(w.glance, PAGE.margin, top, { lineBreak: false });
  const cards: [string, string][] = [
    [w.kpi.sessions, count(job.lang, f.sessions)],
    [w.kpi.devices, count(job.lang, f.uniqueDevices)],
    [w.kpi.duration, f.sessions > 0 ? w.minutes(f.avgDurationMinutes) : '–'],
    [w.kpi.peak, f.peakHour === null ? '–' : hourText(f.peakHour)],
    [w.kpi.dataIn, bytes(job.lang, f.bytesIn)],
    [w.kpi.dataOut, bytes(job.lang, f.bytesOut)],
  ];
  const gap = 12;
  const cw = (CONTENT_W - 2 * gap) / 3;
  const ch = 62;
  cards.forEach(([label, value], i) => {
    const x = PAGE.margin + (i % 3) * (cw + gap);
    const y = top + 22 + Math.floor(i / 3) * (ch + gap);
    doc.roundedRect(x, y, cw, ch, 6).lineWidth(0.8).fillAndStroke('#f4f7fb', '#d5dfeb');
    doc.rect(x, y + 8, 3, ch - 16).fill(ACCENT);
    doc.font('sans').fontSize(9).fillColor(MUTED);
    doc.text(fit(doc, label, cw - 20), x + 12, y + 11, { lineBreak: false });
    doc.font('bold').fontSize(20).fillColor(INK);
    doc.text(fit(doc, value, cw - 20), x + 12, y + 28, { lineBreak: false });
  });
  return top + 22 + 2 * ch + gap;
}

function notes(doc: PDFKit.PDFDocument, job: ReportPdfJob, top: number): void {
  const w = REPORT_WORDS[job.lang];
  doc.font('bold').fontSize(12).fillColor(INK).text(w.notes, PAGE.margin, top, { lineBreak: false });
  let y = top + 22;
  doc.font('sans').fontSize(10.5).fillColor(INK);
  for (const line of reportNotes(job.lang, job.figures, job.days)) {
    const h = doc.heightOfString(line, { width: CONTENT_W - 14 });
    if (y + h > FOOTER_Y - 16) break;
    doc.circle(PAGE.margin + 3, y + 6, 2).fill(ACCENT);
    doc.fillColor(INK).text(line, PAGE.margin + 14, y, { width: CONTENT_W - 14 });
    y += h + 8;
  }
}

function charts(doc: PDFKit.PDFDocument, job: ReportPdfJob): void {
  const w = REPORT_WORDS[job.lang];
  const f = job.figures;
  const total = f.sessions;
  let y = PAGE.margin;
  chartTitle(doc, w.charts.daily, PAGE.margin, y);
  // About eight date labels whatever the length: every step-th day, the first and the last.
  const step = Math.max(1, Math.ceil(f.daily.length / 8));
  const last = f.daily.length - 1;
  columnChart(doc, { x: PAGE.margin, y: y + 20, w: CONTENT_W, h: 190 }, f.daily.map((d) => d.sessions), f.daily.map((d) => shortDate(job.lang, d.date)),
    (n) => count(job.lang, Math.round(n)), (i) => (i % step === 0 && last - i >= step / 2) || i === last);
  y += 240;
  chartTitle(doc, w.charts.hours, PAGE.margin, y);
  columnChart(doc, { x: PAGE.margin, y: y + 20, w: CONTENT_W, h: 150 }, f.hours, f.hours.map((_, h) => hourText(h)),
    (n) => count(job.lang, Math.round(n)), (i) => i % 3 === 0, f.peakHour);
  y += 200;
  const half = (CONTENT_W - 24) / 2;
  const box = (x: number): Box => ({ x, y: y + 22, w: half, h: 6 * 22 });
  chartTitle(doc, w.charts.methods, PAGE.margin, y);
  barList(doc, box(PAGE.margin), f.methods.map((m) => ({ label: w.methods[m.method], value: m.sessions, text: share(job.lang, m.sessions, total) })));
  chartTitle(doc, w.charts.devices, PAGE.margin + half + 24, y);
  barList(doc, box(PAGE.margin + half + 24), f.devices.map((d) => ({ label: w.deviceTypes[d.type], value: d.sessions, text: share(job.lang, d.sessions, total) })));
}

interface Column { x: number; w: number; title: string; align: 'left' | 'right' }

function columns(spec: [string, number, 'left' | 'right'][], x0: number): Column[] {
  let x = x0;
  return spec.map(([title, w, align]) => {
    const c = { x, w, title, align };
    x += w;
    return c;
  });
}

function dayColumns(lang: ReportPdfLang): Column[] {
  const t = REPORT_WORDS[lang].tables;
  return columns([[t.date, 175, 'left'], [t.sessions, 80, 'right'], [t.avg, 90, 'right'], [t.dataIn, 77, 'right'], [t.dataOut, 77, 'right']], PAGE.margin);
}

function tableHeader(doc: PDFKit.PDFDocument, cols: Column[], y: number): number {
  const x0 = cols[0]!.x;
  const last = cols[cols.length - 1]!;
  doc.rect(x0, y, last.x + last.w - x0, ROW_H + 2).fill('#e9eef5');
  doc.font('bold').fontSize(8.5).fillColor(INK);
  for (const c of cols) doc.text(fit(doc, c.title, c.w - 8), c.x + 4, y + 4.5, { width: c.w - 8, align: c.align, lineBreak: false });
  return y + ROW_H + 2;
}

function tableRow(doc: PDFKit.PDFDocument, cols: Column[], cells: string[], y: number): number {
  doc.font('sans').fontSize(8.5).fillColor(INK);
  cols.forEach((c, i) => doc.text(fit(doc, cells[i] ?? '', c.w - 8), c.x + 4, y + 4, { width: c.w - 8, align: c.align, lineBreak: false }));
  const x0 = cols[0]!.x;
  const last = cols[cols.length - 1]!;
  doc.moveTo(x0, y + ROW_H).lineTo(last.x + last.w, y + ROW_H).lineWidth(0.4).strokeColor(RULE).stroke();
  return y + ROW_H;
}

/** The per-method and per-device-type tables side by side. Returns the y below them. */
function smallTables(doc: PDFKit.PDFDocument, job: ReportPdfJob, top: number): number {
  const w = REPORT_WORDS[job.lang];
  const t = w.tables;
  const f = job.figures;
  const half = (CONTENT_W - 24) / 2;
  const left = columns([[t.method, half - 96, 'left'], [t.sessions, 56, 'right'], [t.share, 40, 'right']], PAGE.margin);
  const right = columns([[t.device, half - 96, 'left'], [t.sessions, 56, 'right'], [t.share, 40, 'right']], PAGE.margin + half + 24);
  doc.font('bold').fontSize(12).fillColor(INK).text(t.methods, left[0]!.x, top, { lineBreak: false });
  doc.font('bold').fontSize(12).fillColor(INK).text(t.devices, right[0]!.x, top, { lineBreak: false });
  let yl = tableHeader(doc, left, top + 20);
  let yr = tableHeader(doc, right, top + 20);
  for (const m of f.methods) yl = tableRow(doc, left, [w.methods[m.method], count(job.lang, m.sessions), share(job.lang, m.sessions, f.sessions)], yl);
  for (const d of f.devices) yr = tableRow(doc, right, [w.deviceTypes[d.type], count(job.lang, d.sessions), share(job.lang, d.sessions, f.sessions)], yr);
  return Math.max(yl, yr);
}
