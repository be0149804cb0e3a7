import { Redis } from 'ioredis';
import { keys, OUTBOX_GROUP } from '../redis/keys.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { PartitionCache } from '../audit/chain-writer.js';
import { auditEntriesOf, writeOutbox, type OutboxRecord } from './outbox-writer.js';
import type { Pool } from './postgres.js';

type StreamEntry = [id: string, fields: string[]];
type StreamReply = [key: string, entries: StreamEntry[]][] | null;

const BATCH = 2000;
const IDLE_POLL_MS = 50;
// A live consumer holds entries for milliseconds; ten seconds idle means its process is gone.
const CLAIM_IDLE_MS = 10_000;

/**
 * Drains the tenants' outbox streams into Postgres.
 *
 * Delivery is at least once: entries are read through a consumer group,
 * written in one transaction whose rows are keyed by the id chosen in Redis
 * (ON CONFLICT DO NOTHING), and only then acknowledged and deleted. A crash
 * between commit and XACK re-delivers entries that are then ignored, so each
 * record lands exactly once in effect. Entries left pending by a consumer that
 * died are claimed after CLAIM_IDLE_MS.
 */
export class OutboxSink {
  private running = false;
  private loop: Promise<void> | undefined;
  private lastClaim = 0;
  private oldestPendingMs = 0;
  private wake: (() => void) | undefined;
  private readonly partitions = new PartitionCache();

  constructor(
    private readonly redis: Redis,
    private readonly pool: Pool,
    private readonly tenantIds: () => Promise<string[]>,
    private readonly consumer: string,
    private readonly log: Logger,
    metrics: Metrics,
  ) {
    metrics.counter('outbox_records_written_total', 'Rows written to Postgres from outbox records (duplicates excluded)');
    metrics.counter('outbox_sink_errors_total', 'Failed outbox drain attempts (retried)');
    metrics.gauge('outbox_sink_lag_seconds', 'Age of the oldest record the sink has read but not yet stored',
      () => (this.oldestPendingMs ? (Date.now() - this.oldestPendingMs) / 1000 : 0));
    this.metrics = metrics;
  }

  private readonly metrics: Metrics;

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  /** Drains until every stream is empty once; for tests and shutdown. */
  async drainOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.cycle();
      total += n;
      if (n === 0) return total;
    }
  }

  private async run(): Promise<void> {
    let backoff = IDLE_POLL_MS;
    while (this.running) {
      try {
        const n = await this.cycle();
        backoff = IDLE_POLL_MS;
        if (n > 0) continue;
      } catch (err) {
        this.metrics.inc('outbox_sink_errors_total');
        this.log.warn({ err: (err as Error).message }, 'outbox drain failed; will retry');
        backoff = Math.min(backoff * 2, 5_000);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, backoff);
        this.wake = () => { clearTimeout(t); resolve(); };
      });
    }
  }

  private async cycle(): Promise<number> {
    const tenants = await this.tenantIds();
    if (tenants.length === 0) return 0;
    const streams = tenants.map((t) => keys.outbox(t));
    const entries: { key: string; id: string; f: Map<string, string> }[] = [];
    const collect = (reply: StreamReply): void => {
      for (const [key, list] of reply ?? []) {
        for (const [id, fields] of list) {
          if (!fields) continue; // deleted while pending
          const f = new Map<string, string>();
          for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
          entries.push({ key, id, f });
        }
      }
    };
    if (Date.now() - this.lastClaim > CLAIM_IDLE_MS / 2) {
      this.lastClaim = Date.now();
      for (const key of streams) {
        const claimed = (await this.redis.xautoclaim(key, OUTBOX_GROUP, this.consumer, CLAIM_IDLE_MS, '0', 'COUNT', BATCH)) as [string, StreamEntry[]];
        collect([[key, claimed[1]]]);
        // Our own pending entries from before a restart under the same consumer name.
        collect((await this.redis.xreadgroup('GROUP', OUTBOX_GROUP, this.consumer, 'COUNT', BATCH, 'STREAMS', key, '0')) as StreamReply);
      }
    }
    for (let i = 0; i < streams.length && entries.length < BATCH; i += 256) {
      const chunk = streams.slice(i, i + 256);
      try {
        collect((await this.redis.xreadgroup('GROUP', OUTBOX_GROUP, this.consumer, 'COUNT', BATCH, 'STREAMS', ...chunk, ...chunk.map(() => '>'))) as StreamReply);
      } catch (err) {
        // A stream or group missing (a Redis that lost its data): recreate and go on.
        if (!(err as Error).message.includes('NOGROUP')) throw err;
        for (const key of chunk) {
          await this.redis.xgroup('CREATE', key, OUTBOX_GROUP, '0', 'MKSTREAM').catch(() => undefined);
        }
      }
    }
    if (entries.length === 0) {
      this.oldestPendingMs = 0;
      return 0;
    }
    this.oldestPendingMs = Math.min(...entries.map((e) => Number(e.id.split('-')[0])));
    await this.write(entries.map((e) => ({ tenant: tenantOfKey(e.key), f: e.f })));
    const byKey = new Map<string, string[]>();
    for (const e of entries) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e.id]);
    const p = this.redis.pipeline();
    for (const [key, ids] of byKey) {
      p.xack(key, OUTBOX_GROUP, ...ids);
      p.xdel(key, ...ids);
    }
    await p.exec();
    this.oldestPendingMs = 0;
    return entries.length;
  }

  private async write(records: OutboxRecord[]): Promise<void> {
    const audit = auditEntriesOf(records);
    await this.partitions.ensure(this.pool, new Set(audit.map((e) => new Date(e.ts).toISOString().slice(0, 10))));
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const n = await writeOutbox(client, records, audit);
      await client.query('COMMIT');
      this.metrics.inc('outbox_records_written_total', '', n);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

function tenantOfKey(key: string): string {
  // {t:<tenant>}:outbox
  return key.slice(3, key.indexOf('}'));
}
