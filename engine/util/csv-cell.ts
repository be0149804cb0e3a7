/**
 * One CSV cell (RFC 4180), safe to open in a spreadsheet: the one place text
 * becomes a CSV field, for every export.
 *
 * Formula injection (OWASP, "CSV Injection"): a cell that opens with `=`,
 * `+`, `-`, `@`, a tab or a carriage return is run as a formula by Excel,
 * LibreOffice and Google Sheets, and a guest controls some of this text (a
 * name, an identity, what a gateway reported). Such a cell gets a leading `'`,
 * which spreadsheets show as text. A plain signed number (`+905321234567`,
 * an E.164 phone) is left alone: it cannot be a formula, and the 5651 log
 * must name the number as it is. Then a field with a comma, a quote or a
 * line break is quoted, its quotes doubled.
 */
export function csvCell(v: string | null): string {
  if (v === null || v === '') return '';
  const c = v.charCodeAt(0);
  const risky = c === 0x3d /* = */ || c === 0x2b /* + */ || c === 0x2d /* - */ || c === 0x40 /* @ */ || c === 0x09 || c === 0x0d;
  const text = risky && !SIGNED_NUMBER.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const SIGNED_NUMBER = /^[+-]\d+(?:\.\d+)?$/;
