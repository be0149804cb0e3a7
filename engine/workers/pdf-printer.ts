import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import { projectPath } from '../util/project-root.js';
import { portBlocks, type ToProducer } from './port-stream.js';

export interface PdfPrinterOptions {
  /** The worker module under dist/, e.g. ['engine', 'reports', 'report-pdf-worker.js']; its default export takes the task and a `port`. */
  worker: string[];
  /** What the 503 names: "The voucher sheet printer". */
  what: string;
  log: Logger;
  /** Documents drawn at once (piscina threads). */
  threads: number;
  /** Documents that may wait for a thread; beyond that, service_unavailable (503). */
  queued: number;
}

/**
 * A piscina pool that draws PDFs off the request thread and hands their
 * bytes back as they come (the worker's side: pdf-stream.ts; the
 * protocol: port-stream.ts). Shared by the voucher sheets and the PDF
 * report: a bounded number drawn at once, a few waiting, the rest refused.
 */
export class PdfPrinter<T extends object> {
  private readonly pool: Piscina;

  constructor(private readonly opts: PdfPrinterOptions) {
    this.pool = new Piscina({
      filename: projectPath('dist', ...opts.worker),
      minThreads: 0, maxThreads: opts.threads, maxQueue: opts.queued, idleTimeout: 30_000,
    });
  }

  /**
   * Starts drawing `task` and returns its bytes as an async iterable: a full
   * pool makes the first read throw service_unavailable (so the answer is a
   * 503 before any byte); a drawing failure is logged with `context` and
   * read as internal_error; ending the iteration early cancels the drawing,
   * also before the first read (a generator never started would not run its
   * `finally`, and the drawing would wait for credits on its thread forever).
   */
  print(task: T, context: Record<string, unknown>): AsyncIterableIterator<Buffer> {
    const { port1, port2 } = new MessageChannel();
    const withPort: T & { port: MessagePort } = { ...task, port: port2 };
    const started = this.pool.run(withPort, { transferList: [port2] });
    // Seen by portBlocks once read; marked handled here for a caller that never reads.
    started.catch(() => undefined);
    const { log, what } = this.opts;
    const blocks = portBlocks(port1, started,
      (code, msg) => {
        log.warn({ ...context, code, err: msg }, 'pdf drawing failed');
        return Errors.INTERNAL();
      },
      (err) => (/queue is at limit/i.test(err.message) ? Errors.SERVICE_UNAVAILABLE(what) : err),
      () => log.info(context, 'pdf drawing cancelled by the reader'));
    let read = false;
    return {
      next: () => {
        read = true;
        return blocks.next();
      },
      return: async (value?: unknown) => {
        if (!read) {
          // Never read: portBlocks never ran, so the cancel is sent here. A port queues messages until
          // its worker listens, so the drawing sees it first thing, even while it still waits in the queue.
          const cancel: ToProducer = { t: 'cancel' };
          port1.postMessage(cancel);
          port1.close();
        }
        return blocks.return(value);
      },
      [Symbol.asyncIterator]() { return this; },
    };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
