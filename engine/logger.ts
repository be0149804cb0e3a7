import { pino, destination, type Logger } from 'pino';

export type { Logger };

/** The service's one logger; children carry the component name. `fd` 2 keeps stdout clean for CLI output. */
export function createLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino({ level, base: { service: 'guest-wifi' }, timestamp: pino.stdTimeFunctions.isoTime }, destination({ fd, sync: fd === 2 }));
}
