import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import { keys } from '../redis/keys.js';
import type { NasPortFields, NasPresencePort } from './radius-gateway.js';
import type { NasRecord } from '../sessions/ports.js';

/** At most one write per NAS (and per port) per this long, per process: a busy NAS sends hundreds of packets a second. */
export const PRESENCE_THROTTLE_MS = 15_000;
/** How often the batch of sightings is written. */
const FLUSH_MS = 1_000;
/** Ports remembered per NAS in one process: a NAS numbering NAS-Port per session must not grow memory without end. */
const MAX_PORTS_PER_NAS = 4_096;
/** A NAS's port map expires this long after its last write: ports of a NAS gone for good disappear. */
const PORTS_TTL_SEC = 7 * 86_400;
/** NASes (and ports) per command of a flush: bounded, so no command spreads an unbounded argument list. */
const NAS_PER_CALL = 500;

/** One port of a NAS as keys.nasPorts holds it (JSON), and the dashboard shows it. */
export interface NasPortRecord {
  /** The key: NAS-Port-Id, else Called-Station-Id, else NAS-Port. */
  port: string;
  nas_port: number | null;
  nas_port_id: string | null;
  called_station_id: string | null;
  /** The access point accounting names on this port (NAS-Identifier: the name keys.liveByAp counts by), or null. */
  ap: string | null;
  last_seen_at: string;
}

interface PortWrite { nasId: string; record: NasPortRecord }
interface TenantBatch { seen: Map<string, { hotspotId: string; at: number }>; ports: Map<string, PortWrite> }
interface PortMemo { at: number; ap: string | null }

/**
 * Which NAS clients speak, and through which ports. Called for every RADIUS
 * packet, so `saw` never awaits and mostly returns after one map lookup:
 * a NAS is written at most once per PRESENCE_THROTTLE_MS per process, in a
 * batch flushed every second (one script call per tenant). A NAS heard from
 * after more than `silentMs` of silence gets `nas.online` (mark-nas-seen-2.lua).
 */
export class NasPresence implements NasPresencePort {
  private batch = new Map<string, TenantBatch>();
  private readonly lastSeen = new Map<string, number>();
  private readonly lastPort = new Map<string, Map<string, PortMemo>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
    private readonly silentMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Writes what is pending; resolves when written (or failed, which is logged). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  saw(nas: NasRecord, m: NasPortFields): void {
    const now = this.now();
    const last = this.lastSeen.get(nas.id);
    if (last === undefined || now - last >= PRESENCE_THROTTLE_MS) {
      this.lastSeen.set(nas.id, now);
      this.tenantBatch(nas.tenantId).seen.set(nas.id, { hotspotId: nas.hotspotId, at: now });
    }
    const port = portOf(m);
    if (!port) return;
    let ports = this.lastPort.get(nas.id);
    if (!ports) this.lastPort.set(nas.id, (ports = new Map()));
    const memo = ports.get(port);
    const ap = m.apName || memo?.ap || null;
    // A port is written again when its throttle ran out, or at once when accounting names its access point for the first time.
    if (memo && now - memo.at < PRESENCE_THROTTLE_MS && memo.ap === ap) return;
    if (!memo && ports.size >= MAX_PORTS_PER_NAS) return;
    ports.set(port, { at: now, ap });
    this.tenantBatch(nas.tenantId).ports.set(`${nas.id} ${port}`, {
      nasId: nas.id,
      record: {
        port, nas_port: m.nasPort ?? null, nas_port_id: m.nasPortId || null, called_station_id: m.calledStationId || null, ap,
        last_seen_at: new Date(now).toISOString(),
      },
    });
  }

  /** Writes the batch gathered so far; one flush at a time, so a slow Redis does not pile them up. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private tenantBatch(tenantId: string): TenantBatch {
    let b = this.batch.get(tenantId);
    if (!b) this.batch.set(tenantId, (b = { seen: new Map(), ports: new Map() }));
    return b;
  }

  private async write(): Promise<void> {
    if (this.batch.size === 0) return;
    const batch = this.batch;
    this.batch = new Map();
    // One pipeline per tenant: a tenant's keys share its hash tag, so under Redis Cluster each goes to one node.
    await Promise.all([...batch].map(([tenantId, b]) => this.writeTenant(tenantId, b)));
  }

  private async writeTenant(tenantId: string, b: TenantBatch): Promise<void> {
    try {
      const p = this.redis.pipeline();
      // At most NAS_PER_CALL NASes a call: a venue with thousands of access points as NASes must not spread
      // tens of thousands of arguments through one command.
      let args: (string | number)[] = [];
      for (const [nasId, s] of b.seen) {
        args.push(nasId, s.hotspotId, s.at);
        if (args.length === NAS_PER_CALL * 3) {
          p.markNasSeenV1(keys.nasSeen(tenantId), keys.events(tenantId), this.silentMs, 0, ...args);
          args = [];
        }
      }
      if (args.length > 0) p.markNasSeenV1(keys.nasSeen(tenantId), keys.events(tenantId), this.silentMs, 0, ...args);
      const byNas = new Map<string, string[]>();
      for (const { nasId, record } of b.ports.values()) {
        const fields = byNas.get(nasId) ?? [];
        fields.push(record.port, JSON.stringify(record));
        byNas.set(nasId, fields);
      }
      for (const [nasId, fields] of byNas) {
        const key = keys.nasPorts(tenantId, nasId);
        for (let i = 0; i < fields.length; i += NAS_PER_CALL * 2) p.hset(key, ...fields.slice(i, i + NAS_PER_CALL * 2));
        p.expire(key, PORTS_TTL_SEC);
      }
      const results = (await p.exec()) ?? [];
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
    } catch (err) {
      // Lost until the NAS's next packet after the throttle: presence is a dashboard's view, never a session's state.
      this.log.warn({ tenant: tenantId, err: (err as Error).message }, 'NAS presence write failed');
    }
  }
}

/** A NAS's ports as keys.nasPorts holds them; entries that do not parse are left out. */
export function parsePorts(raw: Record<string, string>): NasPortRecord[] {
  const out: NasPortRecord[] = [];
  for (const v of Object.values(raw)) {
    try {
      out.push(JSON.parse(v) as NasPortRecord);
    } catch {
      // Not ours to repair: a later sighting of the port writes it whole again.
    }
  }
  return out;
}

/** A packet's port as the port map keys it: NAS-Port-Id, else Called-Station-Id, else NAS-Port; '' none. */
export function portOf(m: NasPortFields): string {
  return m.nasPortId || m.calledStationId || (m.nasPort === undefined ? '' : String(m.nasPort));
}
