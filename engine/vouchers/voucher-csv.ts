import { pipeline, type Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import { Errors } from '../errors.js';

/**
 * The CSV rules of a voucher import (docs/vouchers-bulk.md): the exact
 * header, how a record's line number is counted, and what each field may
 * hold. Pure rules and a streaming reader; the writing is voucher-import.ts.
 */

export const CSV_HEADER = ['code', 'max_uses', 'expires_at', 'bandwidth_profile', 'notes'] as const;
/** A chosen code, as POST /v1/vouchers takes it (vouchers.schemas.ts voucherCreate). */
export const CODE_PATTERN = /^[A-Za-z0-9_-]{3,64}$/;
/** Longest notes field, in characters: the API's own limit for notes. */
export const NOTES_MAX = 2000;
/** Largest max_uses, the API's own limit. */
export const MAX_USES_MAX = 1_000_000;
/**
 * Longest record, in characters. A valid row is at most ~2,100 (a 64-character
 * code, notes of NOTES_MAX); a longer one is almost always an unterminated
 * quote swallowing the rest of the file, which would otherwise be held whole.
 */
export const MAX_RECORD_CHARS = 16_384;

export type ImportReason =
  | 'column_count' | 'csv_malformed' | 'code_invalid' | 'max_uses_invalid' | 'expires_at_invalid'
  | 'unknown_bandwidth_profile' | 'notes_invalid' | 'duplicate_in_file' | 'code_exists';

/** One invalid row of the report. */
export interface InvalidRow {
  line: number;
  reason: ImportReason;
  message: string;
}

/** A row that passed every rule that needs no store (profiles and conflicts are checked later). */
export interface CsvVoucher {
  line: number;
  code: string;
  max_uses: number | null;
  expires_at: Date | null;
  bandwidth_profile: string | null;
  notes: string | null;
}

/** What the reader yields: a record with its first line, or a record the parser could not read. */
export type CsvRecord = { line: number; fields: string[] } | { line: number; malformed: string };

/**
 * Reads a CSV stream record by record (csv-parse, streaming: memory is one
 * record plus the parser's buffer), checking the header first. A wrong
 * header throws csv_header_invalid before any record is yielded.
 *
 * Line numbers: the header is line 1 and a record's number is the line it
 * starts on. They are counted here from the records themselves (each line
 * break inside a quoted field adds one), because csv-parse counts a CRLF
 * inside quotes as two lines.
 */
export async function* readCsv(source: Readable): AsyncGenerator<CsvRecord> {
  const parser = parse({
    bom: true, relax_column_count: true, info: true, skip_empty_lines: true, skip_records_with_error: true, max_record_size: MAX_RECORD_CHARS,
  });
  const skipped: CsvRecord[] = [];
  // The parser's own count, to place a record it skipped (its count runs ahead by CRLFs inside quotes, so this is near, not exact).
  let drift = 0;
  let nextLine = 1;
  let emptySeen = 0;
  // A record too long or never closed: no boundary to resume from, so the file stops there. The input is cut off
  // (memory stays one chunk), the records read before it are still yielded, then the error names its first line.
  let unreadable = false;
  parser.on('skip', (err: CsvError) => {
    if (unreadable) return;
    if (err.code === 'CSV_MAX_RECORD_SIZE' || err.code === 'CSV_QUOTE_NOT_CLOSED') {
      unreadable = true;
      source.unpipe(parser);
      source.pause();
      if (!parser.writableEnded) parser.end();
      return;
    }
    const line = Math.max(nextLine, Number(err.lines ?? nextLine) - drift);
    skipped.push({ line, malformed: err.message.replace(/ at line \d+.*$/, '') });
    nextLine = line + 1;
  });
  // pipeline: an error of the source (too large, client gone), even one raised before this runs, ends the parse with it.
  pipeline(source, parser, () => undefined);
  let header = true;
  for await (const out of parser as AsyncIterable<{ record: string[]; info: { lines: number; empty_lines: number } }>) {
    while (skipped.length) yield skipped.shift()!;
    const { record, info } = out;
    const line = nextLine + (info.empty_lines - emptySeen);
    emptySeen = info.empty_lines;
    let breaks = 0;
    for (const f of record) if (f.length > 0 && (f.includes('\n') || f.includes('\r'))) breaks += f.match(/\r\n|\r|\n/g)!.length;
    nextLine = line + breaks + 1;
    drift = info.lines - (nextLine - 1);
    if (header) {
      header = false;
      checkHeader(record);
      continue;
    }
    yield { line, fields: record };
  }
  while (skipped.length) yield skipped.shift()!;
  if (header) checkHeader([]);
  if (unreadable) throw Errors.CSV_RECORD_UNREADABLE(nextLine, MAX_RECORD_CHARS);
}

function checkHeader(found: string[]): void {
  if (found.length === CSV_HEADER.length && found.every((f, i) => f === CSV_HEADER[i])) return;
  throw Errors.CSV_HEADER_INVALID(found.join(',').slice(0, 200), CSV_HEADER.join(','));
}

/** The zone a date-only `expires_at` is read in, and the window every row gets. */
export interface RowContext {
  timeZone: string;
  profiles: ReadonlySet<string>;
}

/** A record checked against every rule that needs no store; an InvalidRow names the first fault. */
export function checkRecord(line: number, fields: string[], ctx: RowContext): CsvVoucher | InvalidRow {
  if (fields.length !== CSV_HEADER.length) {
    return { line, reason: 'column_count', message: `The row has ${fields.length} fields; the header has ${CSV_HEADER.length}` };
  }
  const [code, maxUses, expires, profile, notes] = fields as [string, string, string, string, string];
  if (!CODE_PATTERN.test(code)) {
    return { line, reason: 'code_invalid', message: 'A code is 3 to 64 of A-Z, a-z, 0-9, _ and -' };
  }
  let max_uses: number | null = null;
  if (maxUses !== '') {
    if (!/^[0-9]{1,7}$/.test(maxUses) || Number(maxUses) < 1 || Number(maxUses) > MAX_USES_MAX) {
      return { line, reason: 'max_uses_invalid', message: `max_uses must be empty (unlimited) or a whole number from 1 to ${MAX_USES_MAX}` };
    }
    max_uses = Number(maxUses);
  }
  const expires_at = expires === '' ? null : parseExpiry(expires, ctx.timeZone);
  if (expires_at === undefined) {
    return { line, reason: 'expires_at_invalid', message: 'expires_at must be empty, a date YYYY-MM-DD, or an ISO 8601 timestamp with a zone' };
  }
  if (profile !== '' && !ctx.profiles.has(profile)) {
    return { line, reason: 'unknown_bandwidth_profile', message: 'No bandwidth profile of this name' };
  }
  if (notes.length > NOTES_MAX || notes.includes('\0')) {
    return { line, reason: 'notes_invalid', message: `notes hold at most ${NOTES_MAX} characters and no NUL character` };
  }
  return { line, code, max_uses, expires_at, bandwidth_profile: profile === '' ? null : profile, notes: notes === '' ? null : notes };
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A full timestamp with a zone (Z or ±hh:mm), as the export writes it. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * `expires_at` as an instant: a date is the END of that day in `timeZone`
 * (its last millisecond, 23:59:59.999 local), a timestamp is itself.
 * undefined: neither, or no such day.
 */
export function parseExpiry(text: string, timeZone: string): Date | undefined {
  const d = DATE_ONLY.exec(text);
  if (d) {
    const [y, m, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    const probe = new Date(Date.UTC(y, m - 1, day));
    if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== m - 1 || probe.getUTCDate() !== day || y < 1970) return undefined;
    return new Date(localMidnight(y, m - 1, day + 1, timeZone) - 1);
  }
  if (!TIMESTAMP.test(text)) return undefined;
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** The instant local midnight starts day (y, m0, d) in `timeZone` (d may run past the month's end). */
function localMidnight(y: number, m0: number, d: number, timeZone: string): number {
  const wall = Date.UTC(y, m0, d);
  // Two rounds: the offset at the guess, then at the corrected instant (a DST change on that day).
  let at = wall - offsetMs(wall, timeZone);
  at = wall - offsetMs(at, timeZone);
  return at;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at instant `t`, in ms (positive east of Greenwich). */
export function offsetMs(t: number, timeZone: string): number {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    if (formatters.size < 1000) formatters.set(timeZone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(t))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const asUtc = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return asUtc - Math.floor(t / 1000) * 1000;
}

