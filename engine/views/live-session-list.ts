import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { GRANT, type GrantHash } from '../redis/records.js';
import { maskUsername, publicSessionId } from '../sessions/session-service.js';

/** `sessions/active` pages: at most this many sessions a page, and no offset past LIVE_OFFSET_MAX (docs/dashboard-api.md). */
export const LIVE_PAGE_MAX = 200;
export const LIVE_PAGE_DEFAULT = 50;
export const LIVE_OFFSET_MAX = 10_000;

/** One live session in the spec's "Console shape (live panel)", with its id and site. */
export interface ConsoleSession {
  id: string;
  hotspot_id: string;
  mac_address: string;
  ip_address: string | null;
  /** Masked as the sessions API masks it. */
  username: string | null;
  auth_method: string;
  ssid: string | null;
  ap_name: string | null;
  start_time: string;
  /** Elapsed, HH:MM:SS (hours past 24 keep counting). */
  duration: string;
  bytes_in: number;
  bytes_out: number;
  /** dBm, as accounting last reported it; null when the NAS never said. */
  signal_strength: number | null;
}

export interface LiveSessionPage {
  data: ConsoleSession[];
  /** Live sessions of the tenant: the summary's active_sessions. */
  total: number;
  limit: number;
  offset: number;
  /** The offset of the next page, null on the last (or past LIVE_OFFSET_MAX). */
  next_offset: number | null;
}

/** Seconds as HH:MM:SS. */
export function hhmmss(sec: number): string {
  const s = Math.max(0, Math.floor(sec));
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(Math.floor(s / 3600))}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/**
 * A page of the tenant's live sessions, read from the same live sets the
 * counts come from (keys.live: grants whose end is after `now`), so the list
 * and `active_sessions` are one figure: the sites in the directory's order,
 * within a site the sessions ending soonest first. Three pipelined reads of
 * at most `limit` keys each (the page's session ids, their MACs, their
 * grants); nothing scans the tenant's sessions. A session that ended between
 * the reads is left out of its page.
 */
export async function readLiveSessionPage(
  redis: Redis, tenantId: string, hotspotIds: readonly string[], counts: readonly number[], now: number, limit: number, offset: number,
): Promise<LiveSessionPage> {
  const total = counts.reduce((a, b) => a + b, 0);
  const slices: { hs: string; from: number; count: number }[] = [];
  let before = 0;
  for (const [i, hs] of hotspotIds.entries()) {
    const n = counts[i] ?? 0;
    const from = Math.max(offset - before, 0);
    const to = Math.min(offset + limit - before, n);
    if (to > from) slices.push({ hs, from, count: to - from });
    before += n;
  }
  const ids = await exec<string[]>(redis, slices.map((s) => ['zrangebyscore', keys.live(tenantId, s.hs), `(${now}`, '+inf', 'LIMIT', s.from, s.count]));
  const sids = ids.flat();
  const refs = await exec<string | null>(redis, sids.map((sid) => ['get', keys.sessionRef(tenantId, sid)]));
  const at: { sid: string; hs: string; mac: string }[] = [];
  refs.forEach((ref, i) => {
    const [hs, mac] = (ref ?? '').split(' ');
    if (hs && mac) at.push({ sid: sids[i]!, hs, mac });
  });
  const grants = await exec<GrantHash>(redis, at.map((a) => ['hgetall', keys.grant(tenantId, a.hs, a.mac)]));
  const data: ConsoleSession[] = [];
  grants.forEach((g, i) => {
    const a = at[i]!;
    if (g[GRANT.sid] !== a.sid) return; // ended meanwhile (or the device signed in again)
    const started = Number(g[GRANT.created] ?? now);
    const signal = g[GRANT.signal];
    data.push({
      id: publicSessionId(a.sid), hotspot_id: a.hs, mac_address: a.mac, ip_address: g[GRANT.ip] || null,
      username: maskUsername(g[GRANT.user] || null), auth_method: g[GRANT.method] ?? 'voucher', ssid: g[GRANT.ssid] || null,
      ap_name: g[GRANT.apName] || null, start_time: new Date(started).toISOString(), duration: hhmmss((now - started) / 1000),
      bytes_in: Number(g[GRANT.bytesIn] ?? 0), bytes_out: Number(g[GRANT.bytesOut] ?? 0),
      signal_strength: signal === undefined || signal === '' || !Number.isFinite(Number(signal)) ? null : Math.round(Number(signal)),
    });
  });
  const next = offset + limit;
  return { data, total, limit, offset, next_offset: next < total && next <= LIVE_OFFSET_MAX ? next : null };
}

/** One pipeline of the commands; a failed one fails the read. */
async function exec<T>(redis: Redis, commands: (string | number)[][]): Promise<T[]> {
  if (commands.length === 0) return [];
  const replies = (await redis.pipeline(commands).exec()) ?? [];
  return replies.map(([err, v]) => {
    if (err) throw err;
    return v as T;
  });
}
