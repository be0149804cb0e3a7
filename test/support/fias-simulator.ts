import { createServer, type Server, type Socket } from 'node:net';
import { FrameDecoder, encode, field, record, stamp, type FiasRecord } from '../../engine/pms/fias/fias-codec.js';

/** A guest as the simulated PMS holds it. */
/** `noNumber`: the PMS sends this guest's records without G# (the engine keys it by room); `reservation` is then the simulator's own label. */
export interface SimGuest { reservation: string; room: string; name: string; firstName?: string; share?: boolean; noNumber?: boolean }

const number = (g: SimGuest): Record<string, string> => (g.noNumber ? {} : { 'G#': g.reservation });

/**
 * A scriptable Oracle Opera FIAS interface on loopback, for tests of
 * engine/pms/: it plays the PMS side of the link (answers LS with LS until
 * the link is described, then keep-alive LS with LA; LA after the
 * interface's LA; DS, one GI per guest, DE after DR) and lets a test check
 * guests in and out, move them, cut the link and change the guest list while
 * it is cut. Like a FIAS interface it takes one connection at a time. Like
 * a PMS, it keeps the records of a short gap (a link that was up, closed by
 * the engine: a lease changing hands) and sends them once the next link is
 * up (docs/pms.md: no resync after a short gap); a cut loses them, and only a
 * resync tells the engine.
 */
export class FiasSimulator {
  readonly guests = new Map<string, SimGuest>();
  /** Every record the engine sent, in order, with the connection it came on (1, 2, ...). */
  readonly received: { conn: number; r: FiasRecord }[] = [];
  /** Connections accepted so far. */
  connections = 0;
  /** Connections closed at once because one was open already (or the PMS was cut). */
  refused = 0;
  /** Links that reached LA (configured). */
  linkUps = 0;
  private socket: Socket | null = null;
  private configured = false;
  private refusing = false;
  /** While true the PMS holds its answers (no LA to keep-alives): a silent, half-dead link. */
  mute = false;
  private waiters: (() => void)[] = [];
  /** Records of a gap, sent once the next link is up. */
  private queued: FiasRecord[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FiasSimulator> {
    const server = createServer();
    const sim = new FiasSimulator(server);
    server.on('connection', (s) => sim.accept(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sim;
  }

  get port(): number {
    const a = this.server.address();
    if (!a || typeof a === 'string') throw new Error('not listening');
    return a.port;
  }

  /** The link is configured and open now. */
  get linked(): boolean {
    return this.socket !== null && this.configured;
  }

  private accept(s: Socket): void {
    if (this.refusing || this.socket) {
      this.refused++;
      s.destroy();
      this.wake();
      return;
    }
    const conn = ++this.connections;
    this.socket = s;
    this.configured = false;
    const decoder = new FrameDecoder();
    s.on('data', (chunk: Buffer) => {
      for (const r of decoder.push(chunk)) this.handle(conn, r);
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      if (this.socket === s) {
        this.socket = null;
        this.configured = false;
      }
      this.wake();
    });
    this.wake();
  }

  private handle(conn: number, r: FiasRecord): void {
    this.received.push({ conn, r });
    this.wake();
    if (this.mute) return;
    const now = Date.now();
    switch (r.type) {
      case 'LS':
        // Before the link is described, LS starts it; after, it is a keep-alive.
        this.send(this.configured ? record('LA', stamp(now)) : record('LS', stamp(now)));
        return;
      case 'LA':
        if (!this.configured) {
          this.configured = true;
          this.linkUps++;
          this.send(record('LA', stamp(now)));
          for (const q of this.queued.splice(0)) this.send(q);
        }
        return;
      case 'DR':
        this.send(record('DS', stamp(now)));
        for (const g of this.guests.values()) this.send(gi(g));
        this.send(record('DE', stamp(now)));
        return;
      case 'LE':
        this.socket?.end();
        return;
      default:
    }
  }

  /** Writes raw bytes (a test of framing may split them as it likes). */
  sendRaw(b: Buffer): void {
    this.socket?.write(b);
  }

  private send(r: FiasRecord): void {
    this.socket?.write(encode(r));
  }

  /** A change of the guest list: sent now, kept for the next link in a short gap, lost while cut or before any link. */
  private post(r: FiasRecord): void {
    if (this.linked) this.send(r);
    else if (this.linkUps > 0 && !this.refusing) this.queued.push(r);
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits (event-driven) until `cond` holds, re-checked at every frame and connection change. */
  async waitFor(cond: () => boolean, timeoutMs = 15_000, what = 'simulator condition'): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!cond()) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`${what} not met in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  /** Records of one type the engine sent (optionally on connections after `afterConn`). */
  sent(type: string, afterConn = 0): FiasRecord[] {
    return this.received.filter((x) => x.conn > afterConn && x.r.type === type).map((x) => x.r);
  }

  /** Checks a guest in; the PMS sends GI when the link is up (a cut link: the list changes silently). */
  checkIn(g: SimGuest): void {
    this.guests.set(g.reservation, g);
    this.post(gi(g));
  }

  /** Checks a reservation out (GO with G# and RN). */
  checkOut(reservation: string): void {
    const g = this.guests.get(reservation);
    if (!g) throw new Error(`no guest ${reservation}`);
    this.guests.delete(reservation);
    this.post(record('GO', { ...number(g), RN: g.room, GS: g.share ? 'Y' : 'N', ...stamp(Date.now()) }));
  }

  /** Moves a reservation to another room (GC with RO, the old room). */
  move(reservation: string, room: string): void {
    const g = this.guests.get(reservation);
    if (!g) throw new Error(`no guest ${reservation}`);
    const old = g.room;
    g.room = room;
    this.post(record('GC', { ...number(g), RN: room, RO: old, GN: g.name, ...stamp(Date.now()) }));
  }

  /** Cuts the link and refuses connections until restore(): the PMS's side goes away. */
  cut(): void {
    this.refusing = true;
    this.queued = [];
    this.socket?.destroy();
  }

  restore(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function gi(g: SimGuest): FiasRecord {
  return record('GI', {
    ...number(g), RN: g.room, GN: g.name, GF: g.firstName ?? '', GS: g.share ? 'Y' : 'N', ...stamp(Date.now()),
  });
}

