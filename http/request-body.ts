import { Errors, type AppError } from '../engine/index.js';
import type { Exchange } from './respond.js';

/**
 * Reads the body with a hard cap: a declared Content-Length above the cap is
 * refused before reading, and a chunked body is cut off as it passes the cap.
 * The whole body must arrive within `timeoutMs` (408 otherwise: a client that
 * trickles a byte at a time holds a connection and a request open for as long
 * as it likes). `onCancel` receives the function the router calls when the
 * client goes mid-upload: the promise then rejects, so the request ends
 * rather than wait forever for a last chunk that will never come.
 * Chunks are copied at once: uWS reuses the ArrayBuffer after the callback.
 */
export function readBody(ex: Exchange, limit: number, declaredLength: number, timeoutMs: number, onCancel: (cancel: () => void) => void): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    if (declaredLength > limit) {
      reject(Errors.PAYLOAD_TOO_LARGE(limit));
      // Keep draining so uWS does not see an unread body; the connection is closed with the reply.
      ex.res.onData(() => undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const fail = (err: AppError): void => {
      if (failed) return;
      failed = true;
      clearTimeout(timer);
      reject(err);
    };
    const timer = setTimeout(() => fail(Errors.BODY_TIMEOUT(timeoutMs)), timeoutMs);
    onCancel(() => fail(Errors.CLIENT_GONE()));
    ex.res.onData((ab, isLast) => {
      if (failed) return;
      size += ab.byteLength;
      if (size > limit) {
        fail(Errors.PAYLOAD_TOO_LARGE(limit));
        return;
      }
      if (ab.byteLength > 0) chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) {
        failed = true; // settled: a late abort or time-out changes nothing
        clearTimeout(timer);
        resolve(size === 0 ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      }
    });
  });
}

/** A whole body as the route's schema sees it: JSON, or a plain HTML form's fields. */
export function parseBody(raw: Buffer, contentType: string): unknown {
  // The captive portal may post a plain HTML form. A body that opens like JSON
  // is JSON whatever the header says (curl -d labels JSON as a form).
  const first = raw.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
  if (contentType.startsWith('application/x-www-form-urlencoded') && first !== 0x7b && first !== 0x5b) {
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw Errors.INVALID_JSON((err as Error).message);
  }
}
