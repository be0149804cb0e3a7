import { connect, type Socket } from 'node:net';
import type { Logger } from '../../logger.js';
import type { OutboundPolicy } from '../../net/outbound-target.js';
import type { PmsAdapter, PmsGuest, PmsListener } from '../pms-adapter.js';
import { FrameDecoder, encode, field, record, stamp, type FiasRecord } from './fias-codec.js';

/** Where and how a FIAS link connects. */
export interface FiasLinkOptions {
  host: string;
  port: number;
  /** Idle time after which we probe the PMS with LS; it answers LA. */
  keepAliveMs: number;
  /** No frame from the PMS for this long: the link is dead, closed and opened again. */
  deadAfterMs: number;
  /** Reconnection back-off: from 1 s, doubling, up to this, with jitter. */
  maxBackoffMs: number;
  now: () => number;
}

/** The record types we ask the PMS for (one LR each) and the fields of each. */
const WANTED: Record<string, string> = {
  GI: 'G#RNGNGFGSDATI', GO: 'G#RNGSDATI', GC: 'G#RNROGNGFGSDATI', DS: 'DATI', DE: 'DATI',
};
/** Records queued unprocessed before the socket is paused (a resync of a large hotel arrives faster than Redis takes it). */
const HIGH_WATER = 256;

/**
 * An Oracle Opera FIAS link over TCP, as the interface (the PMS listens):
 *
 *   connect -> we send LS; the PMS answers LS -> we send LD, one LR per
 *   record type wanted, LA -> the PMS answers LA: the link is up. If a resync
 *   is wanted we then send DR; the PMS answers DS, a GI per in-house guest,
 *   DE. Then GI / GO / GC as they happen.
 *
 * Keep-alive: after keepAliveMs without sending, we send LS and the PMS
 * answers LA; an LS from the PMS (its own restart of the link) is answered
 * with the link description again. Dead link: no frame for deadAfterMs of
 * the time this process was running (a stall of ours is not the PMS's
 * silence), the socket is destroyed. Every close is followed by a
 * reconnection with exponential back-off and jitter. close() sends LE and
 * stops, and is no cut (the listener's linkDown is not called); nor is the
 * end of a connection that never came up (announcedUp).
 *
 * The host is checked by the outbound policy on every connection and the
 * socket connects to the very address checked (no second lookup).
 */
export class FiasLink implements PmsAdapter {
  private socket: Socket | null = null;
  private decoder = new FrameDecoder();
  private state: 'idle' | 'starting' | 'configuring' | 'up' = 'idle';
  private closed = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private lastHeard = 0;
  /** When the keep-alive timer last ran, and how long since lastHeard this process was not running it (tick()). */
  private lastTick = 0;
  private stalledMs = 0;
  private lastSent = 0;
  /** Records apply one after the other, in the PMS's order. */
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private resyncing = false;
  /**
   * This connection told the listener the link is up (linkUp). Only such a connection's end is a cut: one the PMS
   * closes before the handshake (a FIAS interface takes one connection at a time, and another process's may still
   * be open while the lease changes hands) never made the list trusted, so it must not make it untrusted.
   */
  private announcedUp = false;

  constructor(
    private readonly o: FiasLinkOptions,
    private readonly policy: OutboundPolicy,
    private readonly listener: PmsListener,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.closed || this.socket) return;
    void this.open();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.keepAliveTimer);
    const s = this.socket;
    if (!s) return;
    if (this.state !== 'idle' && s.writable) s.write(encode(record('LE', stamp(this.o.now()))));
    await new Promise<void>((resolve) => {
      s.once('close', () => resolve());
      s.end();
      setTimeout(() => s.destroy(), 1000).unref();
    });
    await this.chain;
  }

  private async open(): Promise<void> {
    let address: string;
    try {
      // The outbound check, on every connection: a name that now resolves to a refused address is not dialled.
      address = (await this.policy.resolve(this.o.host))[0]!.address;
    } catch (err) {
      this.log.warn({ host: this.o.host, err: (err as Error).message }, 'PMS host refused or unresolved');
      this.scheduleReconnect();
      return;
    }
    if (this.closed) return;
    const s = connect({ host: address, port: this.o.port });
    this.socket = s;
    this.decoder = new FrameDecoder();
    s.setNoDelay(true);
    s.on('connect', () => {
      this.state = 'starting';
      this.announcedUp = false;
      this.lastHeard = this.o.now();
      this.send(record('LS', stamp(this.o.now())));
      this.lastTick = this.o.now();
      this.stalledMs = 0;
      this.keepAliveTimer = setInterval(() => this.tick(), this.tickMs);
    });
    s.on('data', (chunk: Buffer) => {
      for (const r of this.decoder.push(chunk)) this.enqueue(r);
    });
    s.on('error', (err) => this.log.debug({ err: err.message }, 'PMS link socket error'));
    s.on('close', () => {
      clearInterval(this.keepAliveTimer);
      const wasUp = this.announcedUp;
      this.announcedUp = false;
      this.state = 'idle';
      this.socket = null;
      this.resyncing = false;
      // Our own close (the link handed to the process owning the hotspot, a changed link, a stop) is no cut:
      // the list stays as current as the PMS left it, trusted for PMS_STALE_AFTER_SEC while the next holder links.
      if (wasUp && !this.closed) this.enqueueTask(() => this.listener.linkDown('closed'));
      if (!this.closed) this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const base = Math.min(this.o.maxBackoffMs, 1000 * 2 ** Math.min(this.attempt, 16));
    this.attempt++;
    // Full jitter on half the delay: processes that lost one PMS together do not knock together.
    const delay = base / 2 + Math.random() * (base / 2);
    this.reconnectTimer = setTimeout(() => void this.open(), delay);
  }

  private get tickMs(): number {
    return Math.max(50, Math.min(this.o.keepAliveMs, this.o.deadAfterMs) / 4);
  }

  private tick(): void {
    const now = this.o.now();
    // A tick more than two periods late means this process did not run (a GC pause, a machine short of CPU): the
    // PMS's answers may be waiting unread, and that time is no silence of the PMS's.
    this.stalledMs += Math.max(0, now - this.lastTick - 2 * this.tickMs);
    this.lastTick = now;
    if (now - this.lastHeard - this.stalledMs > this.o.deadAfterMs) {
      this.log.warn({ host: this.o.host, silentMs: now - this.lastHeard, stalledMs: this.stalledMs }, 'PMS link dead (no frame within the dead-link time); reconnecting');
      this.socket?.destroy();
      return;
    }
    if (this.state === 'up' && now - this.lastSent >= this.o.keepAliveMs) this.send(record('LS', stamp(now)));
  }

  private send(r: FiasRecord): void {
    if (!this.socket?.writable) return;
    this.lastSent = this.o.now();
    this.socket.write(encode(r));
  }

  private enqueue(r: FiasRecord): void {
    this.lastHeard = this.o.now();
    this.stalledMs = 0;
    // Only a configured link's frames are heartbeats: before that, the gap since the link was last
    // alive must stay as it was, for the resync decision at LA.
    if (this.state === 'up') this.listener.alive();
    this.enqueueTask(() => this.handle(r));
  }

  private enqueueTask(task: () => Promise<void>): void {
    this.queued++;
    if (this.queued > HIGH_WATER) this.socket?.pause();
    this.chain = this.chain.then(task).catch((err: Error) => {
      // A record the store could not take (Redis down): the link restarts, and its resync decision decides again.
      this.log.error({ err: err.message }, 'PMS record not applied; restarting the link');
      this.socket?.destroy();
    }).finally(() => {
      this.queued--;
      if (this.queued <= HIGH_WATER / 2) this.socket?.resume();
    });
  }

  private async handle(r: FiasRecord): Promise<void> {
    switch (r.type) {
      case 'LS':
        // The PMS's answer to ours, or its own restart of the link: describe the link again.
        this.state = 'configuring';
        this.send(record('LD', { ...stamp(this.o.now()), 'V#': '1.0', IF: 'WW' }));
        for (const [type, fields] of Object.entries(WANTED)) this.send(record('LR', { RI: type, FL: fields }));
        this.send(record('LA', stamp(this.o.now())));
        return;
      case 'LA':
        if (this.state === 'configuring') {
          this.state = 'up';
          this.attempt = 0;
          this.announcedUp = true;
          const resync = await this.listener.resyncWanted();
          await this.listener.linkUp(resync);
          if (resync) this.send(record('DR', stamp(this.o.now())));
        }
        return;
      case 'LE':
        this.socket?.end();
        return;
      case 'DS':
        this.resyncing = true;
        await this.listener.resyncStart();
        return;
      case 'DE':
        if (this.resyncing) await this.listener.resyncEnd();
        this.resyncing = false;
        return;
    }
    if (this.state !== 'up') return;
    switch (r.type) {
      case 'GI': {
        const g = guestOf(r);
        if (!g) return;
        await (this.resyncing ? this.listener.resyncGuest(g) : this.listener.checkIn(g));
        return;
      }
      case 'GO': {
        const room = field(r, 'RN') ?? '';
        const reservation = field(r, 'G#') ?? '';
        if (room || reservation) await this.listener.checkOut({ reservation, room: normalRoom(room) });
        return;
      }
      case 'GC': {
        const rn = field(r, 'RN');
        const oldRoom = normalRoom(field(r, 'RO') ?? '');
        const given = field(r, 'G#');
        // A PMS that sends no reservation number keys a guest by its room (guestOf): the change names
        // the guest by its old room, and the key follows the guest to its new one, so a later
        // GO or GI naming that room finds it, and a new guest in the old room is a guest of its own.
        const reservation = given || roomKey(oldRoom || normalRoom(rn ?? ''));
        if (!reservation) return;
        const rekey = !given && rn ? roomKey(normalRoom(rn)) : '';
        const gn = field(r, 'GN');
        const gf = field(r, 'GF');
        const gs = field(r, 'GS');
        await this.listener.change({
          reservation, oldRoom, ...(rekey && rekey !== reservation ? { rekey } : {}),
          ...(rn ? { room: normalRoom(rn) } : {}), ...(gn !== undefined ? { name: gn } : {}),
          ...(gf !== undefined ? { firstName: gf } : {}), ...(gs !== undefined ? { share: gs === 'Y' } : {}),
        });
        return;
      }
      default:
        // Records we did not ask for (postings, wake-up calls...) are not ours to act on.
        return;
    }
  }
}

/** Room numbers as the guest types them: trimmed, upper case ("12a" is room "12A"). */
export function normalRoom(room: string): string {
  return room.trim().toUpperCase();
}

/** The reservation key of a guest whose PMS sends no reservation number (G#): its room. */
const roomKey = (room: string): string => (room ? `RN:${room}` : '');

function guestOf(r: FiasRecord): PmsGuest | null {
  const room = normalRoom(field(r, 'RN') ?? '');
  if (!room) return null;
  // A PMS that sends no reservation number: the room stands for it (no shares then).
  const reservation = field(r, 'G#') || roomKey(room);
  return { reservation, room, name: field(r, 'GN') ?? '', firstName: field(r, 'GF') ?? '', share: field(r, 'GS') === 'Y' };
}
