import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import { projectPath } from '../util/project-root.js';
import { MAX_PACK_DAYS } from './evidence-pack.js';
import { portBlocks } from '../workers/port-stream.js';
import type { PackTask } from './evidence-pack-worker.js';

/**
 * Exports are rare and long (a year of a busy venue is minutes of reading
 * and deflating). Two builders at once keep the other core for requests;
 * a few more wait, and beyond that a caller is told to come back (503).
 */
const BUILDER_THREADS = 2;
const QUEUED_EXPORTS = 4;
const DAY_MS = 86_400_000;

export interface EvidencePackOptions {
  databaseUrl: string;
  tsaUrl: string | undefined;
  logLevel: string;
  log: Logger;
  now: () => number;
}

/** A pack on its way: its file name and its bytes, pulled one block at a time. */
export interface EvidencePackDownload {
  filename: string;
  stream: AsyncIterable<Buffer>;
}

/**
 * The request thread's side of evidence packs: checks the range, hands the
 * build to a piscina thread (evidence-pack-worker.ts) and turns the blocks it
 * sends back into an async iterable. Pulling the next block acknowledges the
 * one before, so the builder runs exactly as fast as the client reads; ending
 * the iteration early (the client went away) cancels the build.
 */
export class EvidencePackService {
  private readonly pool: Piscina;

  constructor(private readonly opts: EvidencePackOptions) {
    this.pool = new Piscina({
      filename: projectPath('dist', 'engine', 'compliance', 'evidence-pack-worker.js'),
      minThreads: 0,
      maxThreads: BUILDER_THREADS,
      maxQueue: QUEUED_EXPORTS,
      idleTimeout: 30_000,
    });
  }

  /**
   * Resolves `from`/`to` (the contract also accepts the range as `start`/`end`)
   * into an inclusive UTC day range of at most MAX_PACK_DAYS, the contract's
   * maximum report span. Throws VALIDATION_FAILED.
   */
  static range(q: { from?: string; to?: string; start?: string; end?: string }): { from: string; to: string } {
    const pick = (a: string | undefined, b: string | undefined, names: string): string => {
      if (a && b && a !== b) throw Errors.VALIDATION_FAILED(`${names} disagree`, [{ field: names.split('/')[0]!, message: `${names} name the same bound; they differ` }]);
      const v = a ?? b;
      if (!v) throw Errors.VALIDATION_FAILED(`${names} is required`, [{ field: names.split('/')[0]!, message: 'is required (YYYY-MM-DD)' }]);
      return v;
    };
    const from = pick(q.from, q.start, 'from/start');
    const to = pick(q.to, q.end, 'to/end');
    const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
    if (!(days >= 1)) throw Errors.VALIDATION_FAILED('to is before from', [{ field: 'to', message: 'must not be before from' }]);
    if (days > MAX_PACK_DAYS) {
      throw Errors.VALIDATION_FAILED(`The range spans ${days} days; at most ${MAX_PACK_DAYS}`, [{ field: 'to', message: `the range may span at most ${MAX_PACK_DAYS} days` }]);
    }
    return { from, to };
  }

  /** Starts building the tenant's pack for the inclusive UTC day range (already checked by `range`). */
  export(tenant: { id: string; name: string }, from: string, to: string): EvidencePackDownload {
    const task: Omit<PackTask, 'port'> = {
      tenantId: tenant.id, tenantName: tenant.name, from, to, tsaUrl: this.opts.tsaUrl ?? null,
      generatedAt: new Date(this.opts.now()).toISOString(), databaseUrl: this.opts.databaseUrl, logLevel: this.opts.logLevel,
    };
    return { filename: `5651-evidence-${tenant.id}-${from}_${to}.zip`, stream: this.blocks(task) };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  /** The archive's blocks from a builder thread (engine/workers/port-stream.ts: credit window, cancel when the reader goes). */
  private blocks(task: Omit<PackTask, 'port'>): AsyncGenerator<Buffer> {
    const { port1, port2 } = new MessageChannel();
    const full: PackTask = { ...task, port: port2 };
    const started = this.pool.run(full, { transferList: [port2] });
    return portBlocks(port1, started,
      (code, message) => {
        this.opts.log.warn({ tenant: task.tenantId, code, err: message }, 'evidence pack build failed');
        return Errors.INTERNAL();
      },
      // The queue is full, or the thread died: no 'end' will come.
      (err) => (/queue is at limit/i.test(err.message) ? Errors.SERVICE_UNAVAILABLE('The evidence pack builder') : err),
      () => this.opts.log.info({ tenant: task.tenantId, from: task.from, to: task.to }, 'evidence pack export cancelled'));
  }
}
