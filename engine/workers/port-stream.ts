import type { MessagePort } from 'node:worker_threads';

/**
 * Bytes from a worker thread to the request thread over a MessagePort, with
 * back-pressure: the worker sends blocks of BLOCK_BYTES (transferred, not
 * copied) and may have at most WINDOW of them unacknowledged; the request
 * thread acknowledges a block only when the reader pulls the next one. So a
 * slow client slows the producer instead of filling memory. Used by the
 * evidence pack's builder and the voucher sheets' drawing.
 */
export const BLOCK_BYTES = 64 * 1024;
export const WINDOW = 8;

/** Request thread to worker. */
export type ToProducer = { t: 'ack' } | { t: 'cancel' };
/** Worker to request thread; `end` and `error` are last. */
export type FromProducer =
  | { t: 'data'; chunk: Uint8Array }
  | { t: 'end' }
  | { t: 'error'; code: string; message: string };

/** Thrown inside the worker when the reader went away. */
export class ProducerCancelled extends Error {
  constructor() {
    super('cancelled by the reader');
  }
}

/** The worker's end: coalesces writes into blocks and sends them within the credit window. */
export class PortSink {
  private block = new Uint8Array(BLOCK_BYTES);
  private used = 0;
  private credits = WINDOW;
  private wake: (() => void) | null = null;
  /** Full blocks waiting for a credit (a synchronous producer may outrun the window between its pauses). */
  private readonly pending: Uint8Array[] = [];
  cancelled = false;

  constructor(private readonly port: MessagePort) {
    port.on('message', (m: ToProducer) => {
      if (m.t === 'ack') this.credits++;
      else this.cancelled = true;
      this.wake?.();
    });
    // The request thread closing its end without a word is a cancel too.
    port.on('close', () => {
      this.cancelled = true;
      this.wake?.();
    });
  }

  /**
   * Takes bytes without waiting (a synchronous producer such as pdfkit emits
   * them from inside its drawing calls); full blocks are queued and go out as
   * credits allow. The producer calls `drain()` at its own pauses (after a
   * page) so at most WINDOW blocks plus one page are ever held.
   */
  write(chunk: Uint8Array): void {
    for (let off = 0; off < chunk.length;) {
      const n = Math.min(BLOCK_BYTES - this.used, chunk.length - off);
      this.block.set(chunk.subarray(off, off + n), this.used);
      this.used += n;
      off += n;
      if (this.used === BLOCK_BYTES) this.queueBlock();
    }
    this.pump();
  }

  private queueBlock(): void {
    this.pending.push(this.block);
    this.block = new Uint8Array(BLOCK_BYTES);
    this.used = 0;
  }

  private pump(): void {
    while (this.credits > 0 && this.pending.length > 0 && !this.cancelled) {
      const b = this.pending.shift()!;
      this.credits--;
      const msg: FromProducer = { t: 'data', chunk: b };
      this.port.postMessage(msg, [b.buffer as ArrayBuffer]);
    }
  }

  /** Waits until every full block is sent; throws ProducerCancelled when the reader went away. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.cancelled) throw new ProducerCancelled();
      this.pump();
      if (this.pending.length === 0) return;
      await new Promise<void>((r) => { this.wake = r; });
      this.wake = null;
    }
  }

  /** Sends what is left and the end mark. */
  async end(): Promise<void> {
    if (this.used > 0) {
      this.pending.push(this.block.subarray(0, this.used));
      this.block = new Uint8Array(0);
      this.used = 0;
    }
    await this.drain();
    const end: FromProducer = { t: 'end' };
    this.port.postMessage(end);
  }

  fail(err: unknown): void {
    if (this.cancelled) return;
    const e = err as Error & { code?: string };
    const msg: FromProducer = { t: 'error', code: e.code ?? 'internal_error', message: e.message };
    this.port.postMessage(msg);
  }
}

/**
 * The request thread's end: the blocks from `port1` as an async iterable.
 * Pulling the next block acknowledges the one before; ending the iteration
 * early (the client went away) cancels the producer. `started` is the
 * pool's promise for the task: its rejection (queue full, thread died) ends
 * the iteration with `onRunError(err)`'s error.
 */
export async function* portBlocks(
  port1: MessagePort, started: Promise<unknown>, onError: (code: string, message: string) => Error, onRunError: (err: Error) => Error,
  onCancel: () => void,
): AsyncGenerator<Buffer> {
  const queue: Buffer[] = [];
  let finished = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  port1.on('message', (m: FromProducer) => {
    if (m.t === 'data') queue.push(Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength));
    else if (m.t === 'end') finished = true;
    else failure ??= onError(m.code, m.message);
    wake?.();
  });
  started.catch((err: Error) => {
    failure ??= onRunError(err);
    wake?.();
  });
  try {
    for (;;) {
      const block = queue.shift();
      if (block) {
        const ack: ToProducer = { t: 'ack' };
        port1.postMessage(ack);
        yield block;
        continue;
      }
      if (failure) throw failure;
      if (finished) return;
      await new Promise<void>((r) => { wake = r; });
      wake = null;
    }
  } finally {
    if (!finished && !failure) {
      const cancel: ToProducer = { t: 'cancel' };
      port1.postMessage(cancel);
      onCancel();
    }
    port1.close();
  }
}
