import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import type { PmsGuest } from './pms-adapter.js';
import { surnameMatches } from './surname.js';

/** A guest as stored: short names, one JSON per reservation. */
interface Stored { rn: string; gn: string; gf: string; gs: 0 | 1 }

/** How long a checked-out reservation's sessions stay known (check-out-pms-guest-3.lua): the same check-out again ends them. */
export const CHECKED_OUT_KEEP_MS = 10 * 60_000;

const toStored = (g: PmsGuest): Stored => ({ rn: g.room, gn: g.name, gf: g.firstName, gs: g.share ? 1 : 0 });
const fromStored = (reservation: string, s: Stored): PmsGuest => ({ reservation, room: s.rn, name: s.gn, firstName: s.gf, share: s.gs === 1 });

/** The link's state as every process reads it (keys.pmsState). */
export interface PmsLinkState {
  /** Last frame from the PMS, ms; 0 never. */
  aliveAt: number;
  up: boolean;
  /** End of the last complete database resync, ms; 0 never. */
  syncedAt: number;
  /** A resync was asked for and its DE has not come. */
  resyncing: boolean;
}

/** A check-out's outcome: the sessions to end. */
export interface CheckedOut { reservation: string; sessions: string[] }

/**
 * One hotel's in-house guests in Redis, so a sign-in never waits on the
 * PMS: by reservation (the JSON hash) and by room (a set of reservations:
 * several for a share), with the sessions room sign-in started for each
 * reservation. Only the process holding the link's lease writes guests, one
 * record at a time, so plain MULTI blocks suffice; the two steps a sign-in
 * races (attach a session, check a guest out) are scripts that exclude each
 * other.
 */
export class PmsGuestStore {
  constructor(private readonly redis: Redis) {}

  /** The reservation in `room` whose name matches `surname`, or null. Reads only Redis. */
  async find(tenantId: string, hotspotId: string, room: string, surname: string): Promise<PmsGuest | null> {
    const ids = (await this.redis.smembers(keys.pmsRoom(tenantId, hotspotId, room))).sort();
    if (ids.length === 0) return null;
    const raw = await this.redis.hmget(keys.pmsGuests(tenantId, hotspotId), ...ids);
    for (let i = 0; i < ids.length; i++) {
      const j = raw[i];
      if (!j) continue;
      const g = fromStored(ids[i]!, JSON.parse(j) as Stored);
      if (g.room === room && surnameMatches(surname, g.name)) return g;
    }
    return null;
  }

  async get(tenantId: string, hotspotId: string, reservation: string): Promise<PmsGuest | null> {
    const j = await this.redis.hget(keys.pmsGuests(tenantId, hotspotId), reservation);
    return j ? fromStored(reservation, JSON.parse(j) as Stored) : null;
  }

  /** Every in-house guest (a resync's reconciliation; the link's status). */
  async all(tenantId: string, hotspotId: string): Promise<PmsGuest[]> {
    const h = await this.redis.hgetall(keys.pmsGuests(tenantId, hotspotId));
    return Object.entries(h).map(([id, j]) => fromStored(id, JSON.parse(j) as Stored));
  }

  async count(tenantId: string, hotspotId: string): Promise<number> {
    return this.redis.hlen(keys.pmsGuests(tenantId, hotspotId));
  }

  /**
   * Writes a guest: a new one added, a changed one rewritten (moved between
   * room sets when its room changed, its sessions kept: they follow the
   * reservation), an unchanged one untouched. Returns what it did.
   */
  async put(tenantId: string, hotspotId: string, g: PmsGuest): Promise<'added' | 'changed' | 'moved' | 'unchanged'> {
    const before = await this.get(tenantId, hotspotId, g.reservation);
    const next = JSON.stringify(toStored(g));
    if (before && JSON.stringify(toStored(before)) === next) return 'unchanged';
    const m = this.redis.multi().hset(keys.pmsGuests(tenantId, hotspotId), g.reservation, next);
    if (before && before.room !== g.room) m.srem(keys.pmsRoom(tenantId, hotspotId, before.room), g.reservation);
    m.sadd(keys.pmsRoom(tenantId, hotspotId, g.room), g.reservation);
    await m.exec();
    return !before ? 'added' : before.room !== g.room ? 'moved' : 'changed';
  }

  /**
   * Moves a reservation to another key, its room-set entry and its sessions
   * with it (a guest keyed by its room that moved rooms). One MULTI, so an
   * attach (attach-pms-session-2.lua) runs wholly before it (its session moves
   * too) or after it (the old key is gone: the sign-in ends its session).
   */
  async rekey(tenantId: string, hotspotId: string, from: string, to: string): Promise<void> {
    const g = await this.get(tenantId, hotspotId, from);
    if (!g) return;
    const room = keys.pmsRoom(tenantId, hotspotId, g.room);
    const [oldS, newS] = [keys.pmsSessions(tenantId, hotspotId, from), keys.pmsSessions(tenantId, hotspotId, to)];
    await this.redis.multi()
      .hdel(keys.pmsGuests(tenantId, hotspotId), from).hset(keys.pmsGuests(tenantId, hotspotId), to, JSON.stringify(toStored({ ...g, reservation: to })))
      .srem(room, from).sadd(room, to)
      .sunionstore(newS, newS, oldS).del(oldS)
      .exec();
  }

  /**
   * Checks one reservation out; its sessions to end, or null when it was not in house. The same check-out again
   * within CHECKED_OUT_KEEP_MS (a resent command, a repeated GO) hands back the same sessions, to end again harmlessly.
   */
  async checkOut(tenantId: string, hotspotId: string, reservation: string): Promise<CheckedOut | null> {
    for (let tries = 0; tries < 5; tries++) {
      // Gone already: the script still hands back the sessions of a check-out moments ago (room '' is never read then).
      const room = (await this.get(tenantId, hotspotId, reservation))?.room ?? '';
      const a = await this.redis.checkOutPmsGuestV2(keys.pmsGuests(tenantId, hotspotId), keys.pmsRoom(tenantId, hotspotId, room),
        keys.pmsSessions(tenantId, hotspotId, reservation), reservation, room, CHECKED_OUT_KEEP_MS);
      if (a[0] === 'gone') return null;
      if (a[0] === 'out') return { reservation, sessions: a.slice(1) };
    }
    throw new Error(`check-out of ${reservation} kept racing a move`);
  }

  /** The reservations in a room (a check-out that names only the room). */
  async inRoom(tenantId: string, hotspotId: string, room: string): Promise<string[]> {
    return this.redis.smembers(keys.pmsRoom(tenantId, hotspotId, room));
  }

  /** Ties a started session to its reservation; false when the reservation was checked out meanwhile. */
  async attach(tenantId: string, hotspotId: string, reservation: string, sid: string): Promise<boolean> {
    return (await this.redis.attachPmsSessionV1(keys.pmsGuests(tenantId, hotspotId), keys.pmsSessions(tenantId, hotspotId, reservation), reservation, sid)) === 1;
  }

  /** The sessions tied to a reservation (tests, status). */
  async sessionsOf(tenantId: string, hotspotId: string, reservation: string): Promise<string[]> {
    return this.redis.smembers(keys.pmsSessions(tenantId, hotspotId, reservation));
  }

  // --- Database resync (DS ... DE) ---

  async resyncBegin(tenantId: string, hotspotId: string): Promise<void> {
    await this.redis.del(keys.pmsResync(tenantId, hotspotId));
  }

  async resyncSeen(tenantId: string, hotspotId: string, reservation: string): Promise<void> {
    await this.redis.sadd(keys.pmsResync(tenantId, hotspotId), reservation);
  }

  /** The in-house reservations the resync did not send: gone while the link was down. Clears the resync's set. */
  async resyncMissing(tenantId: string, hotspotId: string): Promise<string[]> {
    const [held, seen] = await Promise.all([
      this.redis.hkeys(keys.pmsGuests(tenantId, hotspotId)), this.redis.smembers(keys.pmsResync(tenantId, hotspotId)),
    ]);
    const s = new Set(seen);
    await this.redis.del(keys.pmsResync(tenantId, hotspotId));
    return held.filter((r) => !s.has(r));
  }

  // --- Link state ---

  async state(tenantId: string, hotspotId: string): Promise<PmsLinkState> {
    const h = await this.redis.hgetall(keys.pmsState(tenantId, hotspotId));
    return { aliveAt: Number(h.alive_at ?? 0), up: h.up === '1', syncedAt: Number(h.synced_at ?? 0), resyncing: h.resyncing === '1' };
  }

  async setState(tenantId: string, hotspotId: string, s: Partial<PmsLinkState>): Promise<void> {
    const f: Record<string, string> = {};
    if (s.aliveAt !== undefined) f.alive_at = String(s.aliveAt);
    if (s.up !== undefined) f.up = s.up ? '1' : '0';
    if (s.syncedAt !== undefined) f.synced_at = String(s.syncedAt);
    if (s.resyncing !== undefined) f.resyncing = s.resyncing ? '1' : '0';
    await this.redis.hset(keys.pmsState(tenantId, hotspotId), f);
  }

  /** Forgets a hotel's list and state (its link deleted). Sessions keep running to their own end. */
  async drop(tenantId: string, hotspotId: string): Promise<void> {
    const guests = await this.all(tenantId, hotspotId);
    const del = [keys.pmsGuests(tenantId, hotspotId), keys.pmsState(tenantId, hotspotId), keys.pmsResync(tenantId, hotspotId)];
    for (const g of guests) del.push(keys.pmsRoom(tenantId, hotspotId, g.room), keys.pmsSessions(tenantId, hotspotId, g.reservation));
    for (let i = 0; i < del.length; i += 500) await this.redis.del(...del.slice(i, i + 500));
  }
}
