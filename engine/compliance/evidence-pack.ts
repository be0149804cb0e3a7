import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { ZipFile } from 'yazl';
import { ChainVerifier, type ChainBreak } from '../audit/chain.js';
import type { Pool } from '../store/postgres.js';
import { ACCESS_LOG_HEADER, AccessLog, accessLogLine } from './access-log.js';
import { chainLine, chainPages, gapAfter, linkBefore } from './chain-day.js';
import type { DayStamp, StampStatus, TimestampStore } from './timestamp-store.js';

export const PACK_FORMAT = '5651-evidence-pack/1';
/** The contract's maximum report span: 366 days per query. */
export const MAX_PACK_DAYS = 366;
/**
 * Days whose time-stamp is requested while the next days are written: the
 * authority's latency overlaps the database reads, and at most this many
 * small answers wait in memory.
 */
const STAMPS_IN_FLIGHT = 4;
/** Per-entry buffer between the row reader and the compressor. */
const ENTRY_BUFFER_BYTES = 256 * 1024;

export interface PackRequest {
  tenantId: string;
  tenantName: string;
  /** UTC days, YYYY-MM-DD, inclusive. */
  from: string;
  to: string;
  tsaUrl: string | null;
  generatedAt: string;
}

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface ManifestDay {
  date: string;
  sessions: number;
  chain: { records: number; first_seq: number | null; last_seq: number | null; valid: boolean; first_break: ChainBreak | null };
  timestamp: { status: StampStatus; file: string | null; gen_time: string | null; reused: boolean; error: { code: string; message: string } | null };
}

/** `manifest.json` (docs/evidence-pack.md). */
export interface Manifest {
  format: string;
  tenant: { id: string; name: string };
  range: { from: string; to: string };
  generated_at: string;
  tsa_url: string | null;
  files: ManifestFile[];
  days: ManifestDay[];
}

/** The UTC days from `from` to `to` inclusive. */
export function packDays(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * Writes a tenant's 5651 evidence pack as a ZIP, handing the archive's bytes
 * to `out` as they are produced and waiting for it before producing more:
 * nothing is ever whole in memory. Per UTC day: logs/D.csv (sessions
 * overlapping the day), chain/D.jsonl (that day's audit records, checked
 * against the chain rule on the way), tsa/D.csv.tsr (the RFC 3161 answer for
 * the CSV's SHA-256, when the authority granted one); then manifest.json with
 * every file's size and SHA-256 and each day's chain and time-stamp status.
 * A time-stamp failure is recorded in the manifest, never fatal.
 */
export async function buildEvidencePack(pool: Pool, stamps: TimestampStore, req: PackRequest, out: (chunk: Buffer) => Promise<void>): Promise<Manifest> {
  const zip = new ZipFile();
  const mtime = new Date(req.generatedAt);
  const files: ManifestFile[] = [];
  const days: ManifestDay[] = [];

  // Any failure (the consumer went away, yazl, a stream) stops every wait at once.
  let failure: Error | null = null;
  let rejectAborted!: (e: Error) => void;
  const aborted = new Promise<never>((_, reject) => { rejectAborted = reject; });
  aborted.catch(() => undefined);
  const fail = (e: Error): void => {
    if (failure) return;
    failure = e;
    rejectAborted(e);
  };
  zip.on('error', fail);
  const pumped = (async (): Promise<void> => {
    for await (const chunk of zip.outputStream) await out(chunk as Buffer);
  })();
  pumped.catch(fail);

  /** Streams one entry from text pieces, hashing what it writes; returns the content's SHA-256. */
  const entry = async (path: string, pieces: AsyncIterable<string>): Promise<Buffer> => {
    const pass = new PassThrough({ highWaterMark: ENTRY_BUFFER_BYTES });
    zip.addReadStream(pass, path, { mtime });
    const hash = createHash('sha256');
    let size = 0;
    for await (const text of pieces) {
      if (failure) throw failure;
      const b = Buffer.from(text, 'utf8');
      hash.update(b);
      size += b.length;
      if (!pass.write(b)) await Promise.race([once(pass, 'drain'), aborted]);
    }
    pass.end();
    const sha = hash.digest();
    files.push({ path, size, sha256: sha.toString('hex') });
    return sha;
  };

  const names = new Map((await pool.query<{ id: string; name: string }>(
    'SELECT id, name FROM hotspots WHERE tenant_id = $1', [req.tenantId])).rows.map((h) => [h.id, h.name]));
  const log = new AccessLog(pool, req.tenantId);
  let lastLink: { seq: number; hash: string } | null = null;

  async function* csv(day: string, stat: ManifestDay): AsyncGenerator<string> {
    yield ACCESS_LOG_HEADER;
    for await (const page of log.day(day)) {
      stat.sessions += page.length;
      yield page.map((r) => accessLogLine(r, names.get(r.hotspot_id) ?? '')).join('');
    }
  }

  async function* jsonl(day: string, stat: ManifestDay): AsyncGenerator<string> {
    let v: ChainVerifier | null = null;
    const c = stat.chain;
    for await (const page of chainPages(pool, req.tenantId, day)) {
      const first = page[0]!;
      // Each day is judged on its own: against the stored record before it, as the day API does.
      v ??= new ChainVerifier(lastLink && lastLink.seq < first.seq ? lastLink : await linkBefore(pool, req.tenantId, first.seq));
      for (const r of page) v.push(r);
      const last = page[page.length - 1]!;
      c.records += page.length;
      c.first_seq ??= first.seq;
      c.last_seq = last.seq;
      lastLink = { seq: last.seq, hash: last.hash_chain_value };
      yield page.map(chainLine).join('');
    }
    c.first_break = v?.firstBreak ?? (c.last_seq !== null ? await gapAfter(pool, req.tenantId, c.last_seq) : null);
    c.valid = c.first_break === null;
  }

  const pending: { stat: ManifestDay; stamp: Promise<DayStamp> }[] = [];
  const settle = async (): Promise<void> => {
    const p = pending.shift()!;
    const s = await Promise.race([p.stamp, aborted]);
    const file = s.tsr ? `tsa/${p.stat.date}.csv.tsr` : null;
    if (s.tsr && file) {
      // DER does not compress; stored as is.
      zip.addBuffer(s.tsr, file, { mtime, compress: false });
      files.push({ path: file, size: s.tsr.length, sha256: createHash('sha256').update(s.tsr).digest('hex') });
    }
    p.stat.timestamp = { status: s.status, file, gen_time: s.gen_time ?? null, reused: s.reused ?? false, error: s.error ?? null };
  };

  try {
    for (const day of packDays(req.from, req.to)) {
      const stat: ManifestDay = {
        date: day, sessions: 0,
        chain: { records: 0, first_seq: null, last_seq: null, valid: true, first_break: null },
        timestamp: { status: 'not_configured', file: null, gen_time: null, reused: false, error: null },
      };
      days.push(stat);
      const sha = await entry(`logs/${day}.csv`, csv(day, stat));
      const stamp = stamps.stamp(req.tenantId, day, sha).catch((err: Error): DayStamp => (
        { status: 'failed', error: { code: 'internal_error', message: err.message } }));
      pending.push({ stat, stamp });
      await entry(`chain/${day}.jsonl`, jsonl(day, stat));
      while (pending.length > STAMPS_IN_FLIGHT) await settle();
    }
    while (pending.length > 0) await settle();

    const manifest: Manifest = {
      format: PACK_FORMAT,
      tenant: { id: req.tenantId, name: req.tenantName },
      range: { from: req.from, to: req.to },
      generated_at: req.generatedAt,
      tsa_url: req.tsaUrl,
      files,
      days,
    };
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2) + '\n', 'utf8'), 'manifest.json', { mtime });
    zip.end();
    await Promise.race([pumped, aborted]);
    return manifest;
  } catch (err) {
    fail(err as Error);
    zip.outputStream.destroy();
    throw err;
  }
}
