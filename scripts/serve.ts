import { pathToFileURL } from 'node:url';
import { ConfigError, Engine, createLogger, loadConfig, type Logger } from '../engine/index.js';
import { startHttp, type HttpServer } from '../http/index.js';

export interface Service {
  engine: Engine;
  http: HttpServer;
  log: Logger;
  stop(): Promise<void>;
}

/**
 * The production entry point: configuration from the environment, no local
 * servers started. `node dist/scripts/serve.js`.
 */
export async function runService(env: NodeJS.ProcessEnv = process.env): Promise<Service> {
  const config = loadConfig(env);
  const log = createLogger(config.logLevel);
  const engine = new Engine(config, log);
  await engine.start();
  let http: HttpServer;
  try {
    http = await startHttp(engine, log);
  } catch (err) {
    await engine.close();
    throw err;
  }
  return {
    engine, http, log,
    stop: async () => {
      http.close();
      await engine.close();
    },
  };
}

/** Stops cleanly on SIGINT/SIGTERM. */
export function stopOnSignals(service: Service): void {
  const stop = (signal: string): void => {
    service.log.info({ signal }, 'shutting down');
    service.stop().then(() => process.exit(0), (err) => {
      service.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Prints a configuration or start-up failure as one clear message and exits non-zero. */
export function fail(err: unknown): never {
  const msg = err instanceof ConfigError ? err.message : `Failed to start: ${(err as Error).message}`;
  process.stderr.write(msg + '\n');
  process.exit(1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runService().then((s) => {
    stopOnSignals(s);
    // Tests read this line to learn the ports when HTTP_PORT=0.
    process.stdout.write(JSON.stringify({ ready: true, ports: s.http.ports }) + '\n');
  }, fail);
}
