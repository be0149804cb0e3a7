import { execPerSlot, type RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { OutboundPolicy } from '../net/outbound-target.js';
import { keys } from '../redis/keys.js';
import { FiasLink } from './fias/fias-link.js';
import type { PmsAdapter, PmsGuest, PmsListener } from './pms-adapter.js';
import { endOrQueue, type EndSession } from './pms-ends.js';
import type { PmsGuestStore } from './pms-guest-store.js';
import type { PmsLinkConfig, PmsLinkStore } from './pms-link-store.js';

/** The PMS_* settings (engine/config.ts). */
export interface PmsSettings {
  /** PMS_KEEPALIVE_SEC: idle time before we probe the PMS (LS, answered LA). */
  keepAliveMs: number;
  /** Dead-link time: no frame for three keep-alive periods. */
  deadAfterMs: number;
  /** PMS_STALE_AFTER_SEC: how long the in-house list is trusted after the link was last heard. */
  staleAfterMs: number;
  /** PMS_LEASE_MS: the link's lease; renewed every third of it. */
  leaseMs: number;
  /** PMS_RECONNECT_MAX_SEC: the reconnection back-off's ceiling. */
  maxBackoffMs: number;
  /** PMS_HOLD_LINKS: this process may hold FIAS connections (false: it only serves sign-ins and ends queued check-outs). */
  holdLinks: boolean;
}


interface Held { config: PmsLinkConfig; adapter: PmsAdapter }

/**
 * Holds the PMS links of the hotels this process has the lease of. Every
 * process runs one: every third of the lease time it renews the leases it
 * holds and lets go of those it lost (on Redis alone, on a timer of its own:
 * renew()), and reads the configured links from Postgres, takes the lease of
 * any link nobody holds (a FIAS interface accepts one connection, so exactly
 * one process connects) and lets go of those deleted or changed (a changed
 * link is opened again with its new settings: scan()). A process that dies
 * stops renewing; another takes the link over when the lease lapses.
 *
 * A link goes to the process that owns the hotspot's actor (keys.lease)
 * when there is one: that process asks for it (keys.pmsWant) and the holder
 * hands it over at its next scan. A check-out's Disconnect-Requests are sent
 * by the actor that holds the sessions; from any other process they are
 * forwarded to it (ActorForwarder, at most once), as an operator's
 * disconnect sent there is, and queued when that fails (endOrQueue).
 *
 * The records each link delivers become the in-house list (PmsGuestStore)
 * and, for a check-out, the end of the reservation's sessions.
 */
export class PmsLinks {
  private readonly held = new Map<string, Held>();
  private configured = new Map<string, PmsLinkConfig>();
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | null = null;
  private renewing: Promise<void> | null = null;
  /** The renewals and a scan's changes to the held links, one after another (serial()). */
  private turn: Promise<unknown> = Promise.resolve();
  /** Links saved through this process's API and not yet taken (saved()). */
  private readonly savedHere = new Set<string>();
  private stopped = false;

  constructor(
    private readonly store: PmsLinkStore,
    private readonly guests: PmsGuestStore,
    private readonly redis: Redis,
    private readonly outbound: OutboundPolicy,
    private readonly endSession: EndSession,
    private readonly settings: PmsSettings,
    private readonly nodeId: string,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    metrics.gauge('pms_links_held', 'PMS links this process holds the lease of', () => this.held.size);
    metrics.counter('pms_records_total', 'PMS guest records applied, by kind', 'kind');
    metrics.counter('pms_checkout_ends_total', 'Sessions a PMS check-out ended, by outcome', 'outcome');
  }

  start(): void {
    const every = Math.max(200, Math.floor(this.settings.leaseMs / 3));
    this.timer = setInterval(() => {
      void this.renew();
      void this.scan();
    }, every);
    this.timer.unref();
    void this.scan();
  }

  /** Whether a hotspot has a link (this process's last scan): the portal shows the room form then. */
  hasLink(hotspotId: string): boolean {
    return this.configured.get(hotspotId)?.enabled === true;
  }

  /** What this process's last scan knows of a hotspot's link; 'unknown': none, or set since that scan. */
  linkOf(hotspotId: string): 'enabled' | 'disabled' | 'unknown' {
    const c = this.configured.get(hotspotId);
    return !c ? 'unknown' : c.enabled ? 'enabled' : 'disabled';
  }

  /**
   * A link saved through this process: it starts here at once. The other processes leave a link saved less
   * than a lease period ago to the process that saved it (which scans at once), so two processes do not race
   * for a new link and hand it over moments later, with records sent meanwhile lost to the reconnection; if
   * the saver stopped, they take it after that period.
   */
  async saved(hotspotId: string): Promise<void> {
    if (this.settings.holdLinks) this.savedHere.add(hotspotId);
    // A scan under way may have read the links before this one was saved: the one that counts starts after it.
    await this.scanning;
    await this.scan();
  }

  /** One scan now (the API calls it after a change, so the link starts without waiting for the timer). */
  scan(): Promise<void> {
    this.scanning ??= this.scanOnce().catch((err: Error) => this.log.warn({ err: err.message }, 'PMS link scan failed'))
      .finally(() => { this.scanning = null; });
    return this.scanning;
  }

  /**
   * Renews the leases of the links held, one renewal at a time. Not part of a scan: a scan waits for Postgres, and a
   * slow or absent Postgres must not let a held link's lease lapse while this process still holds the connection
   * (another process would connect to the one FIAS interface, and the records sent meanwhile would be lost).
   */
  private renew(): Promise<void> {
    this.renewing ??= this.serial(() => this.renewOnce()).catch((err: Error) => this.log.warn({ err: err.message }, 'PMS link lease renewal failed'))
      .finally(() => { this.renewing = null; });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    for (const [hs, h] of [...this.held]) {
      if (this.stopped) return;
      const t = h.config.tenant_id;
      const ok = await this.redis.holdPmsLeaseV1(keys.pmsLease(t, hs), this.nodeId, 'hold', this.settings.leaseMs);
      const want = ok === 1 ? await this.redis.get(keys.pmsWant(t, hs)) : null;
      if (ok !== 1) {
        this.log.warn({ hotspot: hs }, 'PMS link lease lost to another process; letting the link go');
        await this.letGo(hs, h, false);
      } else if (want && want !== this.nodeId) {
        // The process that owns the hotspot's sessions asks for the link: its actor sends the check-outs' Disconnect-Requests.
        this.log.info({ hotspot: hs, to: want }, 'PMS link handed to the process that owns the hotspot');
        await this.letGo(hs, h);
      }
    }
  }

  /**
   * Runs the renewals and a scan's changes to the held links one after another, so neither lets go of or takes a
   * link under the other (a renewal of a link a scan has just let go would hold its lease with no connection).
   * Neither waits for Postgres in there: the scan reads the links before its turn.
   */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async scanOnce(): Promise<void> {
    if (this.stopped) return;
    const all = await this.store.all();
    this.configured = new Map(all.map((c) => [c.hotspot_id, c]));
    await this.serial(() => this.follow(all));
    await this.drainEnds(all);
  }

  /** Lets go of the held links deleted, disabled or changed, and takes the lease of those nobody holds. */
  private async follow(all: PmsLinkConfig[]): Promise<void> {
    for (const [hs, h] of [...this.held]) {
      const c = this.configured.get(hs);
      if (!c || !c.enabled || c.updated_at !== h.config.updated_at) await this.letGo(hs, h);
    }
    if (!this.settings.holdLinks) return;
    for (const c of all) {
      if (!c.enabled || this.stopped || this.held.has(c.hotspot_id)) continue;
      if (!this.savedHere.has(c.hotspot_id) && Date.now() - Date.parse(c.updated_at) < this.settings.leaseMs) continue;
      const t = c.tenant_id;
      const hs = c.hotspot_id;
      const [actorOwner, want] = await this.redis.mget(keys.lease(t, hs), keys.pmsWant(t, hs));
      if (actorOwner === this.nodeId) await this.redis.set(keys.pmsWant(t, hs), this.nodeId, 'PX', this.settings.leaseMs);
      // Another process owns the hotspot and asked for the link: leave it free for that one.
      else if (want && want !== this.nodeId) continue;
      const ok = await this.redis.holdPmsLeaseV1(keys.pmsLease(t, hs), this.nodeId, 'hold', this.settings.leaseMs);
      if (ok === 1) {
        this.savedHere.delete(hs);
        this.take(c);
      }
    }
  }

  private take(c: PmsLinkConfig): void {
    const adapter = new FiasLink({
      host: c.host, port: c.port, keepAliveMs: this.settings.keepAliveMs, deadAfterMs: this.settings.deadAfterMs,
      maxBackoffMs: this.settings.maxBackoffMs, now: this.now,
    }, this.outbound, this.listenerFor(c), this.log.child({ hotspot: c.hotspot_id }));
    this.held.set(c.hotspot_id, { config: c, adapter });
    this.log.info({ hotspot: c.hotspot_id, host: c.host, port: c.port }, 'PMS link taken');
    adapter.start();
  }

  private async letGo(hs: string, h: Held, release = true): Promise<void> {
    this.held.delete(hs);
    await h.adapter.close();
    if (release) await this.redis.holdPmsLeaseV1(keys.pmsLease(h.config.tenant_id, hs), this.nodeId, 'release', 0);
  }

  /** Ends every link this process holds (LE sent) and gives the leases back, so another process takes over at once. */
  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all([this.scanning, this.renewing]);
    await Promise.all([...this.held].map(([hs, h]) => this.letGo(hs, h).catch(() => undefined)));
  }

  /** What one hotel's records do. */
  private listenerFor(c: PmsLinkConfig): PmsListener {
    const t = c.tenant_id;
    const hs = c.hotspot_id;
    let lastAliveWrite = 0;
    const count = (kind: string): void => this.metrics.inc('pms_records_total', kind);
    const checkOut = async (reservation: string): Promise<void> => {
      const out = await this.guests.checkOut(t, hs, reservation);
      if (out) await this.endSessions(t, hs, out.sessions);
    };
    return {
      resyncWanted: async () => {
        const s = await this.guests.state(t, hs);
        return s.syncedAt === 0 || s.resyncing || this.now() - s.aliveAt > c.resync_after_gap_sec * 1000;
      },
      linkUp: async (resync) => {
        // resyncing is set before alive_at moves, so a list that waits for its resync is never trusted in between.
        await this.guests.setState(t, hs, { ...(resync ? { resyncing: true } : {}), up: true, aliveAt: this.now() });
        this.log.info({ hotspot: hs, resync }, 'PMS link up');
      },
      alive: () => {
        const now = this.now();
        // One write a second at most: a resync's thousands of frames are one heartbeat.
        if (now - lastAliveWrite < 1000) return;
        lastAliveWrite = now;
        void this.redis.hset(keys.pmsState(t, hs), 'alive_at', String(now)).catch(() => undefined);
      },
      linkDown: async (why) => {
        await this.guests.setState(t, hs, { up: false });
        this.log.warn({ hotspot: hs, why }, 'PMS link down');
      },
      checkIn: async (g) => {
        count('check_in');
        await this.guests.put(t, hs, g);
      },
      checkOut: async ({ reservation, room }) => {
        count('check_out');
        // A PMS that names only the room checks out everybody in it.
        const ids = reservation ? [reservation] : await this.guests.inRoom(t, hs, room);
        for (const r of ids) await checkOut(r);
      },
      change: async (ch) => {
        count(ch.oldRoom && ch.room && ch.oldRoom !== ch.room ? 'move' : 'change');
        // A guest keyed by its room moves under its new room's key, its sessions with it.
        if (ch.rekey) await this.guests.rekey(t, hs, ch.reservation, ch.rekey);
        const id = ch.rekey ?? ch.reservation;
        const before = await this.guests.get(t, hs, id);
        if (!before) {
          // A change for a guest we never saw (checked in while we were away, no resync yet): take it as a check-in.
          if (ch.room) await this.guests.put(t, hs, { reservation: id, room: ch.room, name: ch.name ?? '', firstName: ch.firstName ?? '', share: ch.share ?? false });
          return;
        }
        const next: PmsGuest = {
          reservation: id, room: ch.room ?? before.room, name: ch.name ?? before.name,
          firstName: ch.firstName ?? before.firstName, share: ch.share ?? before.share,
        };
        // The live sessions follow the reservation to its new room: they are tied to it, not to the room.
        await this.guests.put(t, hs, next);
      },
      resyncStart: async () => {
        count('resync_start');
        await this.guests.setState(t, hs, { resyncing: true });
        await this.guests.resyncBegin(t, hs);
      },
      resyncGuest: async (g) => {
        count('resync_guest');
        await this.guests.put(t, hs, g);
        await this.guests.resyncSeen(t, hs, g.reservation);
      },
      resyncEnd: async () => {
        // Reconciled by difference: who the PMS no longer lists left while the link was down.
        const gone = await this.guests.resyncMissing(t, hs);
        for (const r of gone) await checkOut(r);
        await this.guests.setState(t, hs, { resyncing: false, syncedAt: this.now(), aliveAt: this.now() });
        this.log.info({ hotspot: hs, checkedOut: gone.length }, 'PMS database resync done');
      },
    };
  }

  /** Ends a checked-out reservation's sessions, or queues them for the actor's owner (endOrQueue). */
  private async endSessions(tenantId: string, hotspotId: string, sids: string[]): Promise<void> {
    const r = await endOrQueue(this.redis, this.endSession, tenantId, hotspotId, sids,
      (sid, err) => this.log.debug({ sid, err: err.message }, 'check-out end handed to the process owning the hotspot'));
    if (r.ended > 0) this.metrics.inc('pms_checkout_ends_total', 'ended', r.ended);
    if (r.alreadyEnded > 0) this.metrics.inc('pms_checkout_ends_total', 'already_ended', r.alreadyEnded);
    if (r.queued.length > 0) this.metrics.inc('pms_checkout_ends_total', 'queued', r.queued.length);
  }

  /** Drains the end queues of the hotels whose actor this process owns (each scan). */
  private async drainEnds(all: PmsLinkConfig[]): Promise<void> {
    if (all.length === 0) return;
    // One GET per hotel, not an MGET: the keys are of several tenants, so of several cluster slots (a pipeline per slot there).
    const lease = (c: PmsLinkConfig): string => keys.lease(c.tenant_id, c.hotspot_id);
    const owners = (await execPerSlot(this.redis, all, lease, (p, c) => p.get(lease(c)))).map((r) => r[0]?.[1]);
    for (let i = 0; i < all.length; i++) {
      const c = all[i]!;
      if (owners[i] !== this.nodeId) continue;
      const k = keys.pmsEnds(c.tenant_id, c.hotspot_id);
      const sids = await this.redis.lpop(k, 500);
      if (!sids || sids.length === 0) continue;
      const failed: string[] = [];
      for (const sid of sids) {
        try {
          const ended = await this.endSession(c.tenant_id, c.hotspot_id, sid);
          this.metrics.inc('pms_checkout_ends_total', ended ? 'ended' : 'already_ended');
        } catch (err) {
          this.log.warn({ sid, err: (err as Error).message }, 'queued check-out end failed; kept for the next scan');
          failed.push(sid);
        }
      }
      if (failed.length) await this.redis.rpush(k, ...failed);
    }
  }
}
