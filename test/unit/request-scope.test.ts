import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { inRequest, outsideRequest, requestIdOfLine } from '../../engine/logger.js';

/** A logger with the service's mixin (createLogger's), whose lines the test reads back. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });
  return { lines, log: pino({ mixin: requestIdOfLine }, sink) };
}

describe('request scope (engine/logger.ts)', () => {
  it('a loop a request starts outside its scope (the event fan-out) never writes that request\'s id, then or later', async () => {
    const { lines, log } = capture();
    let later: Promise<void> = Promise.resolve();
    await inRequest('req-1', async () => {
      log.info('inside');
      outsideRequest(() => {
        log.info('loop start');
        later = new Promise((resolve) => setTimeout(() => { log.info('loop later'); resolve(); }, 5));
      });
      await new Promise((resolve) => setTimeout(resolve, 1));
      log.info('inside again');
    });
    await later;
    await new Promise((resolve) => setImmediate(resolve));
    const ids = Object.fromEntries(lines.map((l) => [l.msg, l.request_id]));
    expect(ids).toEqual({ inside: 'req-1', 'loop start': undefined, 'inside again': 'req-1', 'loop later': undefined });
  });
});
