import { pino, type Logger } from 'pino';

/** A pino logger writing its JSON lines into `lines`, to assert on what the service logs. */
export function capturingLogger(level = 'debug'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = pino({ level, base: { service: 'test' } }, { write: (s: string) => { lines.push(s); } });
  return { log, lines };
}
