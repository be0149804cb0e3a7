import { execPerSlot, type RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { tenantOfKey, type StreamRecord } from './outbox-reader.js';

/** Dead letters kept per tenant (approximately: MAXLEN ~). */
const DEAD_LETTER_MAXLEN = 100_000;

/**
 * Keeps refused records, with why and where from, in the tenant's
 * dead-letter stream. Called before they are acknowledged: a failure here
 * fails the batch, and the records are read again rather than lost. On a
 * cluster that can write a record twice (its slot's pipeline succeeded,
 * another slot's failed, and the whole batch comes back), so readers take
 * each outbox record once, by its `stream_id` (uniqueDeadLetters).
 */
export async function deadLetter(redis: Redis, refused: StreamRecord[]): Promise<void> {
  // The refused records may be of several tenants: one pipeline per slot on a cluster.
  const results = await execPerSlot(redis, refused, (e) => e.key, (p, e) => {
    const fields: string[] = ['stream_id', e.id, 'error', e.error ?? ''];
    for (const k in e.f) fields.push(k, e.f[k] ?? '');
    p.xadd(keys.outboxDead(tenantOfKey(e.key)), 'MAXLEN', '~', DEAD_LETTER_MAXLEN, '*', ...fields);
  });
  for (const [err] of results.flat()) if (err) throw err;
}

/** A record the sink moved to a tenant's dead-letter stream. */
export interface DeadLetter {
  /** Its id in the outbox stream (the time it was queued, in ms, is its first part). */
  streamId: string;
  type: string;
  sessionId: string;
  hotspotId: string;
  error: string;
}

/**
 * The tenant's dead letters of records queued in [fromMs, toMs): the day a
 * record belongs to, not the day Postgres refused it (later, after an
 * outage perhaps). A record is dead-lettered after it was queued, so the
 * dead-letter stream is read from fromMs on (it is short: normally empty,
 * at most DEAD_LETTER_MAXLEN).
 */
export async function deadLettersBetween(redis: Redis, tenantId: string, fromMs: number, toMs: number): Promise<DeadLetter[]> {
  const out: DeadLetter[] = [];
  for (const [, fields] of uniqueDeadLetters(await redis.xrange(keys.outboxDead(tenantId), String(fromMs), '+'))) {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
    const streamId = f.get('stream_id') ?? '';
    const queuedMs = Number(streamId.slice(0, streamId.indexOf('-')));
    if (!(queuedMs >= fromMs && queuedMs < toMs)) continue;
    out.push({ streamId, type: f.get('type') ?? '', sessionId: f.get('sid') ?? '', hotspotId: f.get('hs') ?? '', error: f.get('error') ?? '' });
  }
  return out;
}

/** Dead-letter entries with each outbox record once (its first entry): see deadLetter. */
export function uniqueDeadLetters(entries: [id: string, fields: string[]][]): [id: string, fields: string[]][] {
  const seen = new Set<string>();
  return entries.filter(([, fields]) => {
    let streamId = '';
    for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'stream_id') { streamId = fields[i + 1]!; break; }
    if (seen.has(streamId)) return false;
    seen.add(streamId);
    return true;
  });
}
