import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ConfigError, Engine, createLogger, loadConfig, type Logger } from '../engine/index.js';
import { checkRuntime, startHttp, type HttpServer } from '../http/index.js';
import { CoaClient, RadiusDictionary, RadiusServer, RadiusThreads, RadsecListener } from '../radius/index.js';

export interface Service {
  engine: Engine;
  http: HttpServer;
  /** Null when RADIUS_ENABLED=false. */
  radius: RadiusServer | null;
  /** The threads that own the UDP ports when RADIUS_THREADS > 0 (then `radius` answers RadSec alone); else null. */
  radiusThreads: RadiusThreads | null;
  /** The bound RADIUS ports (0 when disabled); `radsec` 0 unless RadSec is configured. */
  radiusPorts: { auth: number; acct: number; radsec: number };
  log: Logger;
  stop(): Promise<void>;
}

/** How long a shutdown waits for the HTTP requests being served. */
const SHUTDOWN_DRAIN_MS = 10_000;

/**
 * The production entry point: configuration from the environment, no local
 * servers started. `node dist/scripts/serve.js`.
 */
export async function runService(env: NodeJS.ProcessEnv = process.env): Promise<Service> {
  // Before anything touches Redis or Postgres (migrations run in engine.start).
  checkRuntime(process.version);
  const config = loadConfig(env);
  // Before anything starts: a broken dictionary of NAS_DICTIONARY_DIR is a configuration error (one line, exit 1).
  const dictionary = config.radiusEnabled ? loadDictionary(config.nasDictionaryDir) : undefined;
  const log = createLogger(config.logLevel);
  const engine = new Engine(config, log);
  await engine.start();
  // The engine reaches NASes (Disconnect/CoA) only through this port; radius/ implements it.
  const coa = new CoaClient({ logger: log.child({ component: 'coa-client' }), metrics: engine.metrics });
  engine.radius.setNasControl(coa);
  let http: HttpServer | undefined;
  let radius: RadiusServer | null = null;
  let radiusThreads: RadiusThreads | null = null;
  let radsec: RadsecListener | null = null;
  let radiusPorts = { auth: 0, acct: 0, radsec: 0 };
  try {
    http = await startHttp(engine, log);
    if (config.radiusEnabled) {
      radius = new RadiusServer({
        handler: engine.radius, host: config.radiusHost, authPort: config.radiusAuthPort, acctPort: config.radiusAcctPort,
        logger: log.child({ component: 'radius' }), metrics: engine.metrics, dictionary,
        // With RADIUS threads the main thread's server binds no UDP port: it answers RadSec, and declares the metrics the threads' reports add to.
        udp: config.radiusThreads === 0,
      });
      radiusPorts = { ...(await radius.start()), radsec: 0 };
      if (config.radiusThreads > 0) {
        radiusThreads = new RadiusThreads({
          threads: config.radiusThreads, handler: engine.radius, registry: engine.nas, host: config.radiusHost,
          authPort: config.radiusAuthPort, acctPort: config.radiusAcctPort, logLevel: config.logLevel,
          dictionaryDir: config.nasDictionaryDir, log: log.child({ component: 'radius-threads' }), metrics: engine.metrics,
          mirror: engine.actors ?? undefined,
        });
        radiusPorts = { ...(await radiusThreads.start()), radsec: 0 };
      }
      if (config.radsec) {
        radsec = new RadsecListener({
          server: radius, host: config.radiusHost, port: config.radsec.port, logger: log.child({ component: 'radsec' }),
          cert: readFileSync(config.radsec.certFile), key: readFileSync(config.radsec.keyFile), ca: readFileSync(config.radsec.caFile),
        });
        radiusPorts.radsec = await radsec.start();
      }
      log.info({ host: config.radiusHost, ...radiusPorts }, 'radius listening');
    }
  } catch (err) {
    await radsec?.stop();
    await radiusThreads?.stop();
    await radius?.stop();
    http?.close();
    await coa.close();
    await engine.close();
    throw err;
  }
  const httpServer = http;
  return {
    engine, http: httpServer, radius, radiusThreads, radiusPorts, log,
    stop: async () => {
      // Requests being served finish against a running engine (a batch of vouchers, a sign-in
      // whose use is counted); new ones are refused. Then RADIUS, then the engine.
      httpServer.close();
      await httpServer.drained(SHUTDOWN_DRAIN_MS);
      await radsec?.stop();
      await radiusThreads?.stop();
      await radius?.stop();
      await coa.close();
      await engine.close();
    },
  };
}

/** Our dictionaries and the operator's (NAS_DICTIONARY_DIR); a bad file is a ConfigError naming the file and line. */
function loadDictionary(extraDir: string | undefined): RadiusDictionary {
  try {
    return RadiusDictionary.load(undefined, extraDir);
  } catch (err) {
    throw new ConfigError([`${extraDir ? `NAS_DICTIONARY_DIR=${JSON.stringify(extraDir)}: ` : ''}RADIUS dictionary ${(err as Error).message}`]);
  }
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
    process.stdout.write(JSON.stringify({ ready: true, ports: s.http.ports, radius: s.radiusPorts }) + '\n');
  }, fail);
}
