import { Readable } from 'node:stream';
import { Errors, type AppError } from '../engine/index.js';
import type { Exchange } from './respond.js';

/**
 * A request body as a Node Readable, for a route that takes a file
 * (`streamBody`): uWS's onData chunks are pushed as they come, and when the
 * reader falls behind (push returns false) the socket is paused
 * (res.pause) until it asks for more (_read -> res.resume). Memory is the
 * stream's high-water mark, whatever the file's size.
 *
 * Limits, detected while streaming: past `limit` bytes the stream fails
 * with payload_too_large; no byte for `idleMs` while the reader waits is
 * request_timeout (the clock stops while the socket is paused by us). A
 * client gone mid-upload fails it with client_closed_request.
 */
export class BodyStream extends Readable {
  private size = 0;
  private paused = false;
  private timer: NodeJS.Timeout | null = null;
  /** Every byte has arrived (the last chunk was pushed). */
  complete = false;

  constructor(private readonly ex: Exchange, limit: number, private readonly idleMs: number) {
    super({ highWaterMark: 256 * 1024 });
    // Its reader may attach later (after authentication): the error waits in `errored` for it, and is never an uncaught one.
    this.on('error', () => undefined);
    this.arm();
    ex.res.onData((ab, isLast) => {
      if (this.destroyed) return;
      this.size += ab.byteLength;
      if (this.size > limit) {
        this.fail(Errors.PAYLOAD_TOO_LARGE(limit));
        return;
      }
      // uWS reuses the ArrayBuffer after this callback: copy it.
      const more = ab.byteLength === 0 || this.push(Buffer.from(ab.slice(0)));
      if (isLast) {
        this.complete = true;
        this.disarm();
        this.push(null);
      } else if (!more) {
        this.paused = true;
        this.disarm();
        ex.res.pause();
      } else {
        this.arm();
      }
    });
  }

  override _read(): void {
    if (!this.paused || this.complete || this.ex.aborted) return;
    this.paused = false;
    this.arm();
    this.ex.res.resume();
  }

  /** The client went away: the reader hears it as an error. */
  gone(): void {
    this.fail(Errors.CLIENT_GONE());
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    this.disarm();
    cb(err);
  }

  private fail(err: AppError): void {
    if (!this.destroyed) this.destroy(err);
  }

  private arm(): void {
    this.disarm();
    this.timer = setTimeout(() => this.fail(Errors.BODY_TIMEOUT(this.idleMs)), this.idleMs);
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
