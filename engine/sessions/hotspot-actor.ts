import type { Logger } from '../logger.js';
import { localDay } from '../util/local-day.js';
import type { MirroredAccept } from './auth-mirror.js';
import { applyReport, changesNothing } from './accounting-copy.js';
import { decide, secondsLeft } from './decide.js';
import type { AccessDecision, NasCommandResult } from './ports.js';
import type { AcctMsg, AuthMsg, DisconnectMsg, ExtendMsg, LiveView, NasCommand } from './messages.js';
import type { EndReason, LiveSession, SessionStore } from './session-store.js';
import type { TimerWheel } from './timer-wheel.js';

/** How long past its idle deadline a session may stay: NAS interim updates arrive minutes apart. */
export const IDLE_GRACE_MS = 120_000;
/**
 * How long a timed-out session that a NAS carries waits for that NAS's own
 * Accounting-Stop (it enforces the Session-Timeout we sent, a moment after
 * our clock) before we end it ourselves. The Stop brings the bytes since the
 * last interim update, for the session's totals and the device's daily quota;
 * ended first, the session would ignore them. Either way it ends at its time.
 */
export const STOP_GRACE_MS = 10_000;
/**
 * How often an actor asks Redis for overdue sessions it holds no copy of
 * (signed in but not yet seen by the NAS, or started through another
 * process): such a session ends at most this late. One ZRANGEBYSCORE per
 * hotspot, touching only the overdue ids.
 */
const SWEEP_MS = 5_000;
/**
 * How long an Access-Request may trust the daily usage an actor last read. Usage only grows through
 * accounting, which checks the quota atomically in Redis and returns the new total; the re-read covers
 * the device's traffic at the tenant's other hotspots, whose actors report to the same counter.
 */
const DAILY_FRESH_MS = 10_000;

/** What an actor needs from the thread that hosts it. */
export interface ActorContext {
  store: SessionStore;
  wheel: TimerWheel<TimedSession>;
  now(): number;
  /** Sends a Disconnect/CoA through the main thread's NAS client. */
  nas(cmd: Omit<NasCommand, 't' | 'id'>): Promise<NasCommandResult>;
  log: Logger;
  /** Where the thread's accepts are published for the main thread (AuthMirrorWriter); absent in tools that host actors alone. */
  mirror?: {
    publish(hsKey: string, mac: string, a: MirroredAccept): void;
    remove(hsKey: string, mac: string): void;
    removeHotspot(hsKey: string): void;
  };
}

/** A live session filed in the thread's wheel, with the actor that owns it. */
export interface TimedSession extends LiveSession {
  actor: HotspotActor;
}

/** Who a Disconnect or CoA is about: a tracked session, or a device reporting traffic with none. */
interface NasTarget {
  nasId: string;
  nasUser: string;
  mac: string;
  acctId: string;
  ip: string;
}

/**
 * The live sessions of one hotspot. Its memory is a copy of Redis (the
 * durable truth, written by atomic scripts); it answers Access-Requests from
 * memory, records accounting and quota through Redis, and ends sessions on
 * time-out, idle time, quota, device stop and operator action.
 *
 * Messages for one device are handled one after another (the host chains
 * them per MAC); devices are independent, so a busy hotspot is not limited
 * to one Redis round trip at a time.
 */
export class HotspotActor {
  private readonly byMac = new Map<string, TimedSession>();
  private readonly bySid = new Map<string, TimedSession>();
  private lastSweep = 0;
  /** The hotspot's key in the thread's auth mirror: `tenant/hotspot`. */
  private readonly key: string;
  /** Raised by dispose(): an accept decided before it (the actor reloaded meanwhile) is not published. */
  private generation = 0;
  /**
   * Set by release() (the lease went to another process, or the supervisor
   * gave up on this actor) until the next load(): a Redis read still in
   * flight then must not put a session back into memory, where its clock
   * would run and its accept be published by an actor that owns nothing.
   */
  private released = false;

  constructor(readonly tenant: string, readonly hs: string, readonly tz: string, private readonly ctx: ActorContext) {
    this.key = `${tenant}/${hs}`;
  }

  get size(): number {
    return this.byMac.size;
  }

  /** Loads every live session from Redis (a new actor, or one reloaded by its supervisor). */
  async load(): Promise<void> {
    this.dispose();
    this.released = false;
    const generation = this.generation;
    const live = await this.ctx.store.loadLive(this.tenant, this.hs);
    if (generation !== this.generation) return; // disposed again meanwhile
    for (const s of live) this.track(s);
    this.lastSweep = this.ctx.now();
  }

  /** Lets the hotspot go: forgets everything, and keeps nothing that reads still in flight bring back. */
  release(): void {
    this.released = true;
    this.dispose();
  }

  /** Forgets everything in memory (cancels timers); Redis keeps the truth. */
  dispose(): void {
    this.generation++;
    this.ctx.mirror?.removeHotspot(this.key);
    for (const s of this.byMac.values()) this.ctx.wheel.cancel(s);
    this.byMac.clear();
    this.bySid.clear();
  }

  async auth(m: AuthMsg): Promise<AccessDecision> {
    const generation = this.generation;
    const decision = await this.answer(m);
    // The main thread answers the device's next Access-Requests from this, while it holds (AuthMirrorWriter).
    if (this.ctx.mirror && m.mac && generation === this.generation) {
      const s = this.byMac.get(m.mac);
      if (decision.accept && s && s.sid === decision.sessionId) {
        this.ctx.mirror.publish(this.key, m.mac, {
          sid: s.sid, nasId: s.nasId, nasUser: s.nasUser, untilMs: s.untilMs,
          // A daily quota's usage is trusted as long as answer() would trust it before deciding again.
          validUntilMs: s.quotaMb > 0 ? Math.min(s.untilMs, s.dailyAtMs + DAILY_FRESH_MS) : s.untilMs,
          idleSec: decision.idleTimeout, downKbps: decision.downKbps, upKbps: decision.upKbps, quotaBytes: decision.quotaBytes,
          ssid: m.ssid ?? '',
        });
      } else {
        this.ctx.mirror.remove(this.key, m.mac);
      }
    }
    return decision;
  }

  /**
   * Brings what decide() reads up to date (the session from Redis, today's
   * usage), decides, then records what the NAS said of the session: the NAS
   * it is at, and, once accepted there, the SSID the NAS names (the network's
   * word replaces the portal's; one script for both).
   */
  private async answer(m: AuthMsg): Promise<AccessDecision> {
    const s = m.mac ? await this.find(m.mac) : null;
    const now = this.ctx.now();
    if (!s || s.untilMs <= now) return decide(m, s, now);
    if (s.quotaMb > 0) {
      const day = this.day(now);
      if (s.dailyDay !== day || now - s.dailyAtMs > DAILY_FRESH_MS) {
        s.daily = await this.ctx.store.dailyUsed(this.tenant, s.mac, day);
        s.dailyDay = day;
        s.dailyAtMs = now;
      }
    }
    const decision = decide(m, s, now);
    const nasChanged = s.nasId !== m.nasId || (m.userName !== '' && s.nasUser !== m.userName);
    const ssid = decision.accept && m.ssid && m.ssid !== s.ssid ? m.ssid : '';
    if (nasChanged || ssid) {
      s.nasId = m.nasId;
      if (m.userName) s.nasUser = m.userName;
      if (ssid) s.ssid = ssid;
      await this.ctx.store.rememberNas(this.tenant, this.hs, s.mac, s.sid, m.nasId, s.nasUser, ssid);
    }
    return decision;
  }

  async acct(m: AcctMsg): Promise<void> {
    const now = this.ctx.now();
    if (m.status === 'on' || m.status === 'off') {
      // RFC 2866 §5.1: the NAS restarted; every session it carried is gone.
      for (const s of [...this.byMac.values()]) if (s.nasId === m.nasId) await this.end(s, 'nas_reboot', '', false);
      return;
    }
    if (!m.mac) return;
    const known = await this.find(m.mac);
    // Nothing new: Redis holds all of it already (docs/sessions.md, "Accounting: what needs a script").
    if (known && m.status === 'interim' && changesNothing(known, m)) return;
    const day = this.day(now);
    const status = m.status === 'start' || m.status === 'stop' ? m.status : 'interim';
    const r = await this.ctx.store.account(this.tenant, this.hs, m.mac, day, now, m.acctSessionId,
      m.inOctets, m.outOctets, m.ip ?? '', m.apName ?? '', m.signal === undefined ? '' : String(m.signal), status);
    if (r.kind === 'none') {
      // Traffic from a device with no session here: an unauthorised device online. Cut it off.
      if (m.status !== 'stop') void this.tellNas('disconnect', { nasId: m.nasId, nasUser: m.userName, mac: m.mac, acctId: m.acctSessionId, ip: m.ip ?? '' });
      return;
    }
    const s = known && known.sid === r.sid ? known : await this.reload(m.mac);
    if (!s) return;
    // New totals, usage or NAS: the next Access-Request is answered afresh.
    this.ctx.mirror?.remove(this.key, s.mac);
    const { active, nasChanged, ssidChanged } = applyReport(s, m, r, day, now);
    if (active) this.schedule(s);
    if (r.kind === 'session_quota' || r.kind === 'daily_quota') {
      await this.end(s, r.kind, '', m.status !== 'stop' || !r.current);
    } else if (m.status === 'stop' && r.current) {
      // It ended when the NAS saw it end (Acct-Delay-Time before now), and never past its time.
      const at = Math.max(s.startedMs, Math.min(now - (m.delay ?? 0) * 1000, s.untilMs));
      await this.end(s, m.reason ?? 'user_request', '', false, at);
    } else if (nasChanged || ssidChanged) {
      // Into Redis as auth() does: a session only ever reported in accounting must still be
      // found by its NAS's Accounting-On after this actor reloads from Redis, and show the NAS's SSID.
      await this.ctx.store.rememberNas(this.tenant, this.hs, s.mac, s.sid, m.nasId, s.nasUser, ssidChanged ? s.ssid : '');
    }
  }

  async disconnect(m: DisconnectMsg): Promise<{ ended: boolean; atMs: number }> {
    const s = await this.findSid(m.sid);
    const at = this.ctx.now();
    if (!s) return { ended: false, atMs: at };
    return { ended: await this.end(s, m.reason, m.by, true), atMs: at };
  }

  async extend(m: ExtendMsg): Promise<{ untilMs: number } | null> {
    const s = await this.findSid(m.sid);
    if (!s) return null;
    const until = await this.ctx.store.extend(this.tenant, this.hs, s.mac, s.sid, this.ctx.now(), m.minutes, m.by);
    if (until === null) {
      this.forget(s);
      return null;
    }
    s.untilMs = until;
    this.ctx.mirror?.remove(this.key, s.mac);
    this.schedule(s);
    // Applied at once: the NAS gets the new Session-Timeout without a reconnect.
    void this.tellNas('coa', s, secondsLeft(until, this.ctx.now())).then((r) => {
      if (r.outcome !== 'ack') this.ctx.log.warn({ sid: s.sid, result: r }, 'CoA for an extension was not acknowledged');
    });
    return { untilMs: until };
  }

  async live(sid: string): Promise<LiveView | null> {
    const s = await this.findSid(sid);
    if (!s) return null;
    return {
      sid: s.sid, mac: s.mac, ip: s.ip, ssid: s.ssid, apName: s.apName, signal: s.signal,
      bytesIn: s.bytesIn, bytesOut: s.bytesOut, untilMs: s.untilMs, startedMs: s.startedMs, lastMs: s.lastMs,
    };
  }

  /**
   * A sign-in started a session outside the actor. A live session of the device it replaced the use script
   * has ended (end record and session.end event queued): forget it. Watch the new; with `coa`, tell the NAS.
   */
  async started(mac: string, replaced: string, coa = false): Promise<void> {
    if (replaced) {
      const old = this.bySid.get(replaced);
      if (old) this.forget(old);
      await this.ctx.store.keepRefAfterEnd(this.tenant, replaced);
    }
    const s = await this.reload(mac);
    if (coa && s) this.reauthorize(s);
  }

  /**
   * A CoA naming the device as a MAC-authentication NAS does (Calling-Station-Id, User-Name the bare MAC):
   * a NAS holding a walled-garden session for it opens access now, not at the next association. A NAK
   * (503: no such session) or a time-out is normal. docs/portal-gateways.md, "MAC authentication".
   */
  private reauthorize(s: TimedSession): void {
    const bare = s.mac.replace(/:/g, '').toLowerCase();
    const to = { nasId: s.nasId, nasUser: s.nasUser || bare, mac: s.mac, acctId: '', ip: '' };
    void this.tellNas('coa', to, secondsLeft(s.untilMs, this.ctx.now())).then((r) => {
      if (r.outcome !== 'ack') this.ctx.log.debug({ sid: s.sid, result: r }, 'CoA after a MAC-authentication sign-in not acknowledged');
    });
  }

  /** The wheel says this session's time (or idle deadline) has come. */
  async due(s: TimedSession): Promise<void> {
    if (this.bySid.get(s.sid) !== s) return;
    const now = this.ctx.now();
    if (now >= s.untilMs) {
      // The NAS enforces Session-Timeout itself (we sent it, and CoA on extension): no Disconnect
      // needed, and its Stop, if it comes in time, ends the session with its last counts.
      if (s.nasId && now < s.untilMs + STOP_GRACE_MS) {
        this.ctx.wheel.schedule(s, s.untilMs + STOP_GRACE_MS);
        return;
      }
      // It ended at its time, also when we only see it now (a restart after the engine was away).
      await this.end(s, 'session_timeout', '', false, s.untilMs);
    } else if (s.idleSec > 0 && now >= s.lastMs + s.idleSec * 1000 + IDLE_GRACE_MS) {
      await this.end(s, 'idle_timeout', '', true);
    } else {
      this.schedule(s);
    }
  }

  /** Ends overdue sessions this actor has no copy of (e.g. started through another process). */
  async sweep(): Promise<void> {
    const now = this.ctx.now();
    if (now - this.lastSweep < SWEEP_MS) return;
    this.lastSweep = now;
    for (const { sid, untilMs } of await this.ctx.store.overdue(this.tenant, this.hs, now)) {
      const s = this.bySid.get(sid) ?? null;
      if (s) {
        await this.due(s);
        continue;
      }
      const mac = await this.ctx.store.macOf(this.tenant, sid);
      const at = Math.min(now, untilMs);
      await this.ctx.store.end(this.tenant, this.hs, mac ?? '-', sid, at, 'session_timeout', '');
    }
  }

  /** Ends a session once; `atMs` is when it ended, now unless it ended earlier (a time-out seen late). */
  private async end(s: TimedSession, reason: EndReason, by: string, tellNas: boolean, atMs = this.ctx.now()): Promise<boolean> {
    this.forget(s);
    const at = Math.min(atMs, this.ctx.now());
    const ended = await this.ctx.store.end(this.tenant, this.hs, s.mac, s.sid, at, reason, by);
    if (!ended) return false;
    if (tellNas) {
      void this.tellNas('disconnect', s).then((r) => {
        // RFC 5176 §3.5: Error-Cause 503 (Session Context Not Found): the NAS has no such session; nothing to retry.
        if (r.outcome === 'timeout' || (r.outcome === 'nak' && r.errorCause !== 503)) {
          this.ctx.log.warn({ sid: s.sid, result: r }, 'Disconnect-Request not acknowledged');
        }
      });
    }
    return true;
  }

  /** Sends a Disconnect (sessionTimeout unused: 0) or a CoA carrying the new Session-Timeout, through the host. */
  private tellNas(command: 'disconnect' | 'coa', to: NasTarget, sessionTimeout = 0): Promise<NasCommandResult> {
    return this.ctx.nas({
      tenant: this.tenant, hs: this.hs, nasId: to.nasId, command, userName: to.nasUser, mac: to.mac,
      acctSessionId: to.acctId, ip: to.ip, sessionTimeout,
    });
  }

  private async find(mac: string): Promise<TimedSession | null> {
    return this.byMac.get(mac) ?? this.reload(mac);
  }

  private async findSid(sid: string): Promise<TimedSession | null> {
    const known = this.bySid.get(sid);
    if (known) return known;
    const mac = await this.ctx.store.macOf(this.tenant, sid);
    if (!mac) return null;
    const s = await this.reload(mac);
    return s && s.sid === sid ? s : null;
  }

  /** Reads a device's session from Redis into memory (replacing any stale copy). */
  private async reload(mac: string): Promise<TimedSession | null> {
    const old = this.byMac.get(mac);
    if (old) this.forget(old);
    const generation = this.generation;
    const s = await this.ctx.store.liveByMac(this.tenant, this.hs, mac);
    if (!s) return null;
    if (this.released) return null;
    // Reloaded meanwhile (load() read every live session afresh): its copy, not this older read.
    if (generation !== this.generation) return this.byMac.get(mac) ?? null;
    return this.track(s);
  }

  private track(s: LiveSession): TimedSession {
    const t = s as TimedSession;
    t.actor = this;
    this.byMac.set(t.mac, t);
    this.bySid.set(t.sid, t);
    this.schedule(t);
    return t;
  }

  private forget(s: TimedSession): void {
    this.ctx.mirror?.remove(this.key, s.mac);
    this.ctx.wheel.cancel(s);
    if (this.byMac.get(s.mac) === s) this.byMac.delete(s.mac);
    if (this.bySid.get(s.sid) === s) this.bySid.delete(s.sid);
  }

  private schedule(s: TimedSession): void {
    const idleAt = s.idleSec > 0 ? s.lastMs + s.idleSec * 1000 + IDLE_GRACE_MS : Infinity;
    this.ctx.wheel.schedule(s, Math.min(s.untilMs, idleAt));
  }

  private day(nowMs: number): string {
    return localDay(this.tz, nowMs);
  }
}
