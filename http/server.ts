import type { Engine, Logger } from '../engine/index.js';
import { buildOpenApi } from './openapi.js';
import { mount, type Route, type Surface } from './router.js';
import { Traffic } from './traffic.js';
import { adminRoutes } from './routes/admin.js';
import { complianceRoutes } from './routes/compliance.js';
import { reportRoutes } from './routes/reports.js';
import { consoleReportRoutes } from './routes/console-reports.js';
import { reportPdfRoutes } from './routes/report-pdf.js';
import { reportScheduleRoutes } from './routes/report-schedules.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { dashboardOpsRoutes } from './routes/dashboard-ops.js';
import { decisionRoutes } from './routes/decisions.js';
import { streamRoutes } from './routes/streams.js';
import { hotspotRoutes } from './routes/hotspots.js';
import { opsRoutes } from './routes/ops.js';
import { otpDeliveryRoutes } from './routes/otp-delivery.js';
import { captiveRoutes } from './routes/captive.js';
import { portalPageRoutes } from './routes/portal-page.js';
import { portalRoutes } from './routes/portal.js';
import { portalOtpRoutes } from './routes/portal-otp.js';
import { pmsRoutes } from './routes/pms.js';
import { privacyRoutes } from './routes/privacy.js';
import { signInSettingsRoutes } from './routes/sign-in-settings.js';
import { portalSponsorRoutes } from './routes/portal-sponsor.js';
import { sponsorRequestRoutes } from './routes/sponsor-requests.js';
import { sessionRoutes } from './routes/sessions.js';
import { voucherRoutes } from './routes/vouchers.js';
import { voucherImportRoutes } from './routes/voucher-import.js';
import { voucherSheetRoutes } from './routes/voucher-sheets.js';
import { webhookRoutes } from './routes/webhooks.js';
import { webAppRoutes } from './routes/web-app.js';
import { compileValidators } from './schemas.js';
import { loadUws, type TemplatedApp, type us_listen_socket } from './uws.js';

export interface HttpServer {
  /** Port per listener name ('main', 'metrics' with METRICS_PORT, or a surface with its own port). */
  ports: Record<string, number>;
  /** Stops listening; requests that still arrive on open connections get 503 and a closed connection. */
  close(): void;
  /** After close: resolves once the requests being served have finished, or after `ms`. */
  drained(ms: number): Promise<void>;
  /** Requests being served now (streams excepted): what a graceful stop waits for. */
  inFlight(): number;
}

/** Every route of every surface. */
export function allRoutes(engine: Engine): Route[] {
  let doc: Record<string, unknown> | undefined;
  const routes: Route[] = [
    ...hotspotRoutes(engine), ...voucherImportRoutes(engine), ...voucherSheetRoutes(engine), ...voucherRoutes(engine), ...sessionRoutes(engine), ...complianceRoutes(engine), ...portalRoutes(engine), ...dashboardRoutes(engine),
    ...portalPageRoutes(engine), ...captiveRoutes(engine), ...portalOtpRoutes(engine), ...signInSettingsRoutes(engine), ...portalSponsorRoutes(engine), ...sponsorRequestRoutes(engine), ...pmsRoutes(engine),
    ...adminRoutes(engine), ...otpDeliveryRoutes(engine), ...webhookRoutes(engine), ...privacyRoutes(engine),
    ...reportPdfRoutes(engine),
    ...reportRoutes(engine), ...reportScheduleRoutes(engine),
    ...consoleReportRoutes(engine),
    ...dashboardOpsRoutes(engine), ...decisionRoutes(engine), ...streamRoutes(engine), ...webAppRoutes(engine),
  ];
  const ops = opsRoutes(engine, () => (doc ??= buildOpenApi([...routes, ...ops])));
  return [...ops, ...routes];
}

/**
 * What a page served on its own port calls besides its own surface, same
 * origin (its CSP allows no other): the console's pages use the public API
 * (sign-in included) and the dashboard API; the dashboard signs in through
 * the public API. Those routes stay on the main listener as well.
 */
const PAGE_CALLS: Partial<Record<Surface, readonly Surface[]>> = { console: ['public', 'dashboard'], dashboard: ['public'] };
/**
 * Served on the main listener even when its surface has a port of its own:
 * liveness only ("ok"), which a load balancer in front of the main port
 * probes. /readyz (which stores are up) and /metrics leave it with METRICS_PORT.
 */
const EVERY_LISTENER = new Set(['/healthz']);

/** An API route (under /v1/ or /api/; not another surface's page) that the page of surface `s` calls. */
const pageCalls = (s: Surface, r: Route): boolean => PAGE_CALLS[s]?.includes(r.surface) === true && /^\/(v1|api)\//.test(r.path);

/**
 * Starts the HTTP listeners: one for every surface by default, plus one per
 * surface that has its own port in the config (that surface then leaves the
 * main listener, so a guest-facing portal port serves nothing else).
 */
export async function startHttp(engine: Engine, log: Logger): Promise<HttpServer> {
  const uws = loadUws();
  const validators = compileValidators();
  const routes = allRoutes(engine);
  const cfg = engine.config;
  const own: [Surface, number | undefined][] = [
    ['portal', cfg.portalPort], ['console', cfg.consolePort], ['dashboard', cfg.dashboardPort], ['ops', cfg.http.metricsPort],
  ];
  const separate = new Map(own.filter((e): e is [Surface, number] => e[1] !== undefined));

  const listeners: [string, Route[], number][] = [
    ['main', routes.filter((r) => !separate.has(r.surface) || EVERY_LISTENER.has(r.path)), cfg.httpPort],
    ...[...separate].map(([s, port]): [string, Route[], number] => [s === 'ops' ? 'metrics' : s, routes.filter((r) => r.surface === s || pageCalls(s, r)), port]),
  ];
  const sockets: us_listen_socket[] = [];
  const ports: Record<string, number> = {};
  const traffic = new Traffic(cfg.http.maxConnectionsPerAddress);
  for (const [name, list, port] of listeners) {
    // With a certificate the service speaks HTTPS itself (RFC 8908 requires it for the captive API and portal URL).
    const app = cfg.tls ? uws.SSLApp({ cert_file_name: cfg.tls.certFile, key_file_name: cfg.tls.keyFile }) : uws.App();
    mount(app, list, engine, validators, log, traffic);
    // Exclusive: uSockets binds with SO_REUSEPORT otherwise, and a second service (or two surfaces
    // given one port) would share the port silently, the kernel splitting connections between them.
    const socket = await new Promise<us_listen_socket | false>((resolve) => listenExclusive(app, cfg.httpHost, port, resolve));
    if (!socket) {
      for (const s of sockets) uws.us_listen_socket_close(s);
      throw new Error(`cannot listen on ${cfg.httpHost}:${port} (${name}); is the port in use?`);
    }
    sockets.push(socket);
    ports[name] = uws.us_socket_local_port(socket as never);
    log.info({ listener: name, host: cfg.httpHost, port: ports[name], tls: cfg.tls !== undefined }, 'http listening');
  }
  return {
    ports,
    close: () => {
      traffic.closing = true;
      for (const s of sockets.splice(0)) uws.us_listen_socket_close(s);
    },
    drained: (ms) => traffic.drained(ms),
    inFlight: () => traffic.inFlight,
  };
}

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT: no SO_REUSEPORT. */
const LISTEN_EXCLUSIVE_PORT = 1;

/**
 * app.listen(host, port, options, cb): the binary takes options after the
 * host as well, though the package's types list them only without one.
 */
function listenExclusive(app: TemplatedApp, host: string, port: number, cb: (s: us_listen_socket | false) => void): void {
  (app.listen as unknown as (h: string, p: number, o: number, c: (s: us_listen_socket | false) => void) => void)
    .call(app, host, port, LISTEN_EXCLUSIVE_PORT, cb);
}
